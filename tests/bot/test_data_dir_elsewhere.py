"""Commands run from an operator's shell without the daemon's data folder (the systemd
unit sets BOT_DATA_DIR by Environment=, the config names no data_dir): `bot doctor` made
./data and said the store was ok, after which `bot reminders list` made an empty
database there and said there were no reminders; `bot status` showed ./data's empty
store beside a healthy daemon. The doctor now says the folder is missing (bot run makes
it) and makes nothing; `bot status` warns when the daemon's folder is another."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import DaemonFactory
from tests.fakes.process import run_bot

pytestmark = pytest.mark.slow  # subprocesses


def _shell_env(**extra: str) -> dict[str, str]:
    """An operator's shell: none of the unit's BOT_ variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BOT_", "OPENAI_"))}
    env.update(LITELLM_LOCAL_MODEL_COST_MAP="True", BOT_LLM__API_KEY="sk-placeholder-1")
    env.update(extra)
    return env


async def _bot(cwd: Path, env: dict[str, str], *args: str) -> tuple[int, str, str]:
    return await run_bot(env, cwd, *args)


def _config(tmp_path: Path) -> Path:
    config = tmp_path / "etc" / "bot.toml"
    config.parent.mkdir()
    config.write_text('[llm]\nmodel = "openai/gpt-4o-mini"\n[web]\nenabled = false\n')
    return config


async def test_doctor_says_a_missing_data_dir_and_makes_none(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    config = str(_config(tmp_path))
    code, out, err = await _bot(home, _shell_env(), "doctor", "--offline", "--config", config)
    row = next((line for line in out.splitlines() if line.startswith("data dir")), "")
    assert code == 0 and "note" in row, out + err
    assert f"{home / 'data'} does not exist yet" in row and "bot run creates it" in row, row
    assert not (home / "data").exists(), "the doctor made the data folder"

    code, out, err = await _bot(home, _shell_env(), "reminders", "list", "--config", config)
    assert code != 0 and "no database at" in err and out == "", out + err
    assert not (home / "data").exists(), "reminders list made an empty database"


async def test_doctor_fails_a_missing_data_dir_it_could_not_make(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"  # where a folder should be: root cannot make it either
    blocked.write_text("")
    env = _shell_env(BOT_DATA_DIR=str(blocked / "data"))
    config = str(_config(tmp_path))
    code, out, _ = await _bot(tmp_path, env, "doctor", "--offline", "--config", config)
    row = next((line for line in out.splitlines() if line.startswith("data dir")), "")
    assert code == 1 and "FAILED" in row and f"{blocked} is not writable" in row, out


async def test_status_warns_when_the_running_daemon_reads_another_data_dir(
    daemon_factory: DaemonFactory, tmp_path: Path
) -> None:
    state = tmp_path / "var" / "lib" / "chatbot"
    daemon, _ = await daemon_factory(data_dir=state)
    assert daemon.web is not None
    home = tmp_path / "home"
    home.mkdir()
    config = str(_config(tmp_path))
    args = ("status", "--config", config, "--url", daemon.web.url)

    code, out, err = await _bot(home, _shell_env(), *args)
    assert code == 0 and err == "", out + err
    warning = f"  WARNING: the daemon's data folder is {state.resolve()}, this command read "
    assert warning + f"{(home / 'data').resolve()}: " in out, out
    assert f"BOT_DATA_DIR={state.resolve()}" in out and not (home / "data").exists()

    code, out, err = await _bot(home, _shell_env(BOT_DATA_DIR=str(state)), *args)
    assert code == 0 and "WARNING" not in out, out + err
