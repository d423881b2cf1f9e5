"""Configuration and usage mistakes a new user makes end in one line naming the problem
and its fix, and exit code 2: never a traceback. Run as the real ``bot`` process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CASES = {
    "a list in the environment that is not JSON": (
        ["chat"],
        {"BOT_ADMINS": "telegram:42"},
        "BOT_ADMINS='[\"telegram:42\"]'",
    ),
    "init with a value the config refuses (it wrote it first)": (
        ["init", "--config", "new.toml", "--set", "web.port=not-a-port"],
        {},
        "key 'web.port'",
    ),
    "init into a folder that does not exist": (
        ["init", "--config", "/nonexistent/dir/bot.toml"],
        {},
        "create /nonexistent/dir first",
    ),
    "a data_dir that cannot be created": (
        ["run", "--config", "proc.toml"],
        {},
        "data_dir /proc/nope: cannot be created",
    ),
    "skills of a data_dir that is a file (a traceback)": (
        ["skills", "list", "--config", "file.toml"],
        {},
        "data_dir {tmp}/bot.toml: cannot be created (File exists)",
    ),
    "a skill disabled in a data_dir that is a file": (
        ["skills", "disable", "reminders", "--config", "file.toml"],
        {},
        "data_dir {tmp}/bot.toml: cannot be created (File exists)",
    ),
    "an editor that is not installed": (
        ["workspace", "edit", "default", "AGENTS.md"],
        {"EDITOR": "nonexistent-editor"},
        "set $VISUAL or $EDITOR to an installed editor",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_a_mistake_is_one_line_and_exit_code_2(tmp_path: Path, case: str) -> None:
    argv, env, fix = CASES[case]
    (tmp_path / "bot.toml").write_text(f'data_dir = "{tmp_path / "data"}"\n', encoding="utf-8")
    (tmp_path / "proc.toml").write_text('data_dir = "/proc/nope"\n', encoding="utf-8")
    (tmp_path / "file.toml").write_text(f'data_dir = "{tmp_path / "bot.toml"}"\n', "utf-8")
    repo = {"PYTHONPATH": str(Path(__file__).resolve().parents[2])}  # this checkout's bot
    done = _bot(argv, {**repo, **env}, tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert fix.format(tmp=tmp_path) in lines[0]


def test_a_misspelled_variable_is_said_and_the_command_still_runs(tmp_path: Path) -> None:
    """It was silently ignored; refusing to start would break deployments that set BOT_
    names of their own, so it is one warning line."""
    (tmp_path / "bot.toml").write_text(f'data_dir = "{tmp_path / "data"}"\n', encoding="utf-8")
    done = _bot(["pairing", "list"], {"BOT_LLM_MODEL": "openai/x"}, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "environment variable BOT_LLM_MODEL: no setting is named 'llm_model'; " in done.stderr
    assert "did you mean BOT_LLM__MODEL? (ignored)" in done.stderr


def _bot(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """The real `bot` process with ``env`` over the caller's (no BOT_ or VISUAL of it)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("BOT_", "VISUAL"))}
    return subprocess.run(
        [sys.executable, "-m", "bot", *argv],
        check=False,
        env={**clean, **env},
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["admin", "link"],
        ["reminders", "list"],
        ["pairing", "list"],
        # reads of the persona history made an empty database too (they may run before
        # the daemon's first start), and the skills commands wrote a disabled list there
        ["workspace", "list"],
        ["workspace", "history", "default", "SOUL.md"],
        ["skills", "disable", "reminders"],
    ],
)
def test_a_command_run_away_from_the_daemons_folder_makes_no_database_there(
    tmp_path: Path, argv: list[str]
) -> None:
    """``data_dir = "data"`` is read from the current directory: run elsewhere, these
    made an empty database there and answered from it (a login link the daemon never
    accepts, "no active reminders"). Now they say where they looked, and make nothing."""
    (tmp_path / "bot.toml").write_text('data_dir = "data"\n', encoding="utf-8")
    (tmp_path / "daemon" / "data").mkdir(parents=True)
    away = tmp_path / "home"
    away.mkdir()
    repo = {"PYTHONPATH": str(Path(__file__).resolve().parents[2])}  # this checkout's bot
    done = _bot([*argv, "--config", str(tmp_path / "bot.toml")], repo, away)
    assert done.returncode == 2, done.stderr
    assert done.stdout == "" and list(away.iterdir()) == []
    assert done.stderr == (
        f"error: no database at {away / 'data' / 'bot.db'}: data_dir 'data' is read from the "
        f"current directory ({away}), where the daemon has not run; run this where the "
        "daemon runs, or set data_dir to an absolute path\n"
    )
    assert _bot([*argv, "--config", "../bot.toml"], repo, tmp_path / "daemon").returncode == 0


@pytest.mark.parametrize("argv", [["pairing", "list"], ["workspace", "list"]])
def test_a_commands_config_warnings_are_said_once(tmp_path: Path, argv: list[str]) -> None:
    """A command that opens the store read the config twice (once to look for the
    database, once to make its folder; `workspace list` once more for the workspaces
    it names), so each deprecated key and misspelled variable was warned about twice."""
    (tmp_path / "bot.toml").write_text(
        f'data_dir = "{tmp_path / "data"}"\n[channels.slack]\nhttp_port = 3000\n',
        encoding="utf-8",
    )
    repo = {"PYTHONPATH": str(Path(__file__).resolve().parents[2])}  # this checkout's bot
    done = _bot(argv, {**repo, "BOT_LLM_MODEL": "openai/x"}, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("'channels.slack.http_port': deprecated and ignored") == 1
    assert done.stderr.count("environment variable BOT_LLM_MODEL") == 1


@pytest.mark.parametrize("argv", [["run"], ["doctor", "--offline"], ["status"]])
def test_a_password_in_the_store_urls_query_is_never_printed(
    tmp_path: Path, argv: list[str]
) -> None:
    """asyncpg and libpq take the password as ``?password=``: the start-up error, the
    doctor's store line and `bot status` printed it in clear (user info was masked)."""
    import socket

    with socket.socket() as s:  # bound, never listening: the connection is refused
        s.bind(("127.0.0.1", 0))
        url = f"postgresql://bot@127.0.0.1:{s.getsockname()[1]}/botdb"
        env = {
            "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
            "BOT_DATA_DIR": str(tmp_path / "data"),
            "BOT_WEB__PORT": "0",
            "BOT_STORE__URL": f"{url}?password=Hunter2SuperSecret&sslpassword=KeyPass-9876543",
        }
        done = _bot(argv, env, tmp_path)
    out = done.stdout + done.stderr
    assert "cannot connect to PostgreSQL" in out, out
    assert "Hunter2SuperSecret" not in out and "KeyPass-9876543" not in out
    assert f"{url}?password=***&sslpassword=***" in out
