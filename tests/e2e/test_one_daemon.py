"""One `bot run` per SQLite data folder: a second one on the same database replayed the
turn the first was running and fired each reminder twice; it is now refused at start."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.fakes.process import BotProcess, bot_env, run_bot
from tests.fakes.waiting import PROCESS_TEST_S

# Subprocesses and real time; still run by make test.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(PROCESS_TEST_S),
    pytest.mark.skipif(sys.platform == "win32", reason="no fcntl: no lock on Windows"),
]
CHECKOUT = str(Path(__file__).resolve().parents[2])  # this checkout's bot, not the installed


async def _bot(env: dict[str, str], cwd: Path, *argv: str) -> tuple[int, str]:
    code, out, err = await run_bot(env, cwd, *argv)
    return code, out + err


async def test_a_second_bot_run_on_the_same_data_dir_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = bot_env(data, PYTHONPATH=CHECKOUT)
    first = await BotProcess.start(env, tmp_path)
    try:
        code, out = await _bot(env, tmp_path, "run")
        assert code == 2, out
        assert out == f"error: another bot run (pid {first.proc.pid}) uses {data}; " + (
            "stop it first, or give this one its own data_dir (with SQLite one process "
            "owns the database)\n"
        )
        # one-shot commands still run next to the daemon
        code, out = await _bot(env, tmp_path, "reminders", "list")
        assert code == 0, out
    finally:
        assert await first.stop() == 0
    again = await BotProcess.start(env, tmp_path)  # the lock went with the first process
    assert await again.stop() == 0
