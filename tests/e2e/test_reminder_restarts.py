"""Reminders survive the process: a real `bot chat` subprocess is killed (SIGKILL) or
stopped (SIGTERM) after a reminder is set and started again; the reminder is delivered
exactly once, also when it fell due while the daemon was down (APScheduler's default
1 s misfire grace would have dropped it)."""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from pathlib import Path

import pytest

from bot.messages import ChatKey
from tests.fakes.process import bot_env

pytestmark = pytest.mark.slow  # subprocesses and real time; still run by make test


class ChatProcess:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.lines: list[str] = []

    @classmethod
    async def start(cls, data: Path) -> ChatProcess:
        env = bot_env(data)
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot",
            "chat",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=env,
        )
        return cls(proc)

    async def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        await self.proc.stdin.drain()

    async def expect(self, needle: str, timeout: float = 30.0) -> str:
        assert self.proc.stdout is not None
        try:
            async with asyncio.timeout(timeout):
                while True:
                    raw = await self.proc.stdout.readline()
                    assert raw, f"process ended; output so far: {self.lines}"
                    line = raw.decode().rstrip("\n")
                    self.lines.append(line)
                    if needle in line:
                        return line
        except TimeoutError:
            raise AssertionError(f"{needle!r} not seen; output so far: {self.lines}") from None

    async def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        out, _ = await asyncio.wait_for(self.proc.communicate(), timeout=30)
        self.lines += out.decode().splitlines()
        return self.proc.returncode or 0

    async def kill(self, sig: int) -> None:
        self.proc.send_signal(sig)
        await asyncio.wait_for(self.proc.wait(), timeout=30)


def _reminder_lines(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("⏰")]


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["sigkill", "sigterm"])
@pytest.mark.parametrize("down_past_due", [False, True], ids=["restart-before", "down-past-due"])
async def test_reminder_fires_exactly_once_across_restart(tmp_path, sig, down_past_due):
    data = tmp_path / "data"
    first = await ChatProcess.start(data)
    await first.send("/remind in 6 seconds | drink water")
    ack = await first.expect("OK, #1 reminder")
    set_at = time.monotonic()
    await first.kill(sig)
    assert _reminder_lines(first.lines) == []
    if down_past_due:
        # Stay down until well past the due time (more than APScheduler's 1 s grace).
        await asyncio.sleep(max(0.0, 6 + 2.5 - (time.monotonic() - set_at)))
    second = await ChatProcess.start(data)
    await second.expect("⏰ Reminder")
    await second.send("/reminders")
    await second.expect("no active reminders")
    assert await second.close() == 0
    assert _reminder_lines(second.lines) == ["⏰ Reminder: drink water"], second.lines
    assert "drink water" in ack

    # A third start delivers nothing again: the outbox and the reminder row agree.
    third = await ChatProcess.start(data)
    await third.send("/reminders")
    await third.expect("no active reminders")
    assert await third.close() == 0
    assert _reminder_lines(third.lines) == []


async def test_outbox_and_reminder_rows_after_restart(tmp_path):
    from bot.store.db import Database

    data = tmp_path / "data"
    first = await ChatProcess.start(data)
    await first.send("/remind in 3 seconds | stretch")
    await first.expect("OK, #1 reminder")
    await first.kill(signal.SIGKILL)
    second = await ChatProcess.start(data)
    await second.expect("⏰ Reminder: stretch")
    await second.send("/reminders")
    await second.expect("no active reminders")
    assert await second.close() == 0

    db = Database(data / "bot.db")
    await db.open()
    try:
        rows = await db.fetchall(
            "SELECT delivery_key, status FROM outbox WHERE delivery_key LIKE 'reminder:%'"
        )
        assert [r["status"] for r in rows] == ["sent"]
        (reminder,) = await db.fetchall("SELECT status, attempts, channel, chat_id FROM reminders")
        assert (reminder["status"], reminder["attempts"]) == ("done", 1)
        assert ChatKey(reminder["channel"], reminder["chat_id"]) == ChatKey("cli", "local")
    finally:
        await db.close()
