"""The real processes: `bot chat` in a pipe, `bot run` until SIGTERM, `bot init`."""

from __future__ import annotations

import asyncio
import itertools
import os
import signal
import stat
import sys
from pathlib import Path

import pytest

from tests.fakes.process import DEFAULT_LOOP, LLM_KEY, bot_env

pytestmark = pytest.mark.slow  # subprocesses and real time; still run by make test


async def _bot(*args: str, env: dict[str, str], cwd: Path, stdin: bytes | None = None):
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        cwd=cwd,
    )
    out, err = await asyncio.wait_for(proc.communicate(stdin), timeout=60)
    return proc.returncode, out.decode(), err.decode()


async def test_chat_answers_piped_lines_in_order_and_exits(tmp_path, fake_llm):
    lines = [f"line {i}" for i in range(5)]
    old = os.umask(0o022)  # what a login shell or a container usually hands down
    try:
        code, out, err = await _bot(
            "chat",
            env=bot_env(tmp_path / "data", fake_llm),
            cwd=tmp_path,
            stdin="\n".join(lines).encode(),
        )
    finally:
        os.umask(old)
    assert code == 0, err
    assert out.splitlines() == [f"echo: {line}" for line in lines]
    assert LLM_KEY not in out + err
    # Outside systemd (UMask=0077) nothing else sets a umask: the CLI does (`bot run` is
    # checked the same way by the image-command test in tests/test_deploy.py).
    for path in (tmp_path / "data", tmp_path / "data" / "bot.db", tmp_path / "data" / "workspaces"):
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode & 0o077 == 0, f"{path} is {oct(mode)}"


async def test_every_command_keeps_the_data_it_makes_private(tmp_path):
    """Not only `bot run` and `bot chat`: any command may make the data folder and its
    database (here `bot pairing list` in an empty folder, and `bot store copy` to a new
    SQLite file); a database an older version left readable is made private on open."""
    old = os.umask(0o022)
    try:
        env = bot_env(tmp_path / "data")
        code, _, err = await _bot("pairing", "list", env=env, cwd=tmp_path)
        assert code == 0, err
        copy = tmp_path / "copy.db"
        src, dst = f"sqlite:{tmp_path / 'data' / 'bot.db'}", f"sqlite:{copy}"
        code, _, err = await _bot(
            "store", "copy", "--from", src, "--to", dst, env=env, cwd=tmp_path
        )
        assert code == 0, err
        for path in (tmp_path / "data", tmp_path / "data" / "bot.db", copy):
            assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, path
        copy.chmod(0o644)  # as an older version left it
        again = {**env, "BOT_STORE__URL": f"sqlite:{copy}"}
        code, _, err = await _bot("pairing", "list", env=again, cwd=tmp_path)
        assert code == 0, err
        assert stat.S_IMODE(copy.stat().st_mode) == 0o600
    finally:
        os.umask(old)


async def test_chat_without_model_explains_configuration(tmp_path):
    code, out, err = await _bot(
        "chat", env=bot_env(tmp_path / "data"), cwd=tmp_path, stdin=b"hello\n"
    )
    assert code == 0, err
    assert "BOT_LLM__API_KEY" in out
    assert "Traceback" not in err


async def test_run_logs_ready_and_exits_zero_on_sigterm(tmp_path, fake_llm):
    """Each signal on each event loop: the default (uvloop where installed) and asyncio's."""
    loops: list[dict[str, str]] = [{}, {"BOT_EVENT_LOOP": "asyncio"}]
    for sig, loop in itertools.product((signal.SIGTERM, signal.SIGINT), loops):
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot",
            "run",
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=bot_env(tmp_path / "data", fake_llm, **loop),
            cwd=tmp_path,
        )
        assert proc.stderr is not None
        seen: list[str] = []

        async def _until_ready(
            stream: asyncio.StreamReader = proc.stderr, seen: list[str] = seen
        ) -> None:
            while True:
                line = (await stream.readline()).decode()
                assert line, f"exited before ready: {seen}"
                seen.append(line)
                if ": ready: " in line:
                    return

        await asyncio.wait_for(_until_ready(), timeout=30)
        assert f" loop={loop.get('BOT_EVENT_LOOP', DEFAULT_LOOP)} " in seen[-1], seen[-1]
        proc.send_signal(sig)
        _, rest = await asyncio.wait_for(proc.communicate(), timeout=30)
        assert proc.returncode == 0, rest.decode()
        text = "".join(seen) + rest.decode()
        assert "stopped" in text
        assert "Traceback" not in text
        assert LLM_KEY not in text


async def test_run_with_bad_config_exits_2_with_one_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[llm]\ntimeout_s = "soon"\n')
    code, _, err = await _bot(
        "run", "--config", str(bad), env=bot_env(tmp_path / "data"), cwd=tmp_path
    )
    assert code == 2
    assert err.strip().count("\n") == 0
    assert "llm.timeout_s" in err and "Traceback" not in err


async def test_init_writes_config_and_workspace_without_overwriting(tmp_path):
    env = bot_env(tmp_path / "data")
    code, out, err = await _bot("init", env=env, cwd=tmp_path)
    assert code == 0, err
    config = tmp_path / "bot.toml"
    assert "[llm]" in config.read_text()
    soul = tmp_path / "data" / "workspaces" / "default" / "SOUL.md"
    soul.write_text("custom persona")
    code, out, err = await _bot("init", env=env, cwd=tmp_path)
    assert code == 0 and "not overwritten" in out
    assert soul.read_text() == "custom persona"
