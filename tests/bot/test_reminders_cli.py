"""``bot reminders list | cancel <id>`` as a real process next to a running daemon
(SQLite takes a second connection): reminders set by chat command are listed with their
id, next fire time in the owner's zone and repeat rule; a cancelled one is never fired
by the daemon's timer; an unknown id is one line and exit code 2."""

from __future__ import annotations

import asyncio
import sys
from datetime import timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.messages import ChatKey, utcnow
from bot.store.db import Database
from bot.store.reminders import ReminderKind, ReminderStatus, ReminderStore
from tests.conftest import DaemonFactory
from tests.fakes.process import bot_env

pytestmark = pytest.mark.slow  # subprocesses


async def reminders(data: Path, *args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "bot", "reminders", *args),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=bot_env(data),
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_list_then_cancel_and_the_timer_never_fires_it(
    daemon_factory: DaemonFactory, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    daemon, chat = await daemon_factory(data_dir=data)
    await chat.ask("/timezone Europe/Berlin")
    for command in (
        "/remind every day at 9am | water the plants",
        "/remind in 1 hour | stretch",
        "/remind in 2 hours | drink tea",
    ):
        assert (await chat.ask(command)).text.startswith("OK, #"), command

    code, out, err = await reminders(data, "list")
    assert (code, err) == (0, ""), out + err
    lines = out.splitlines()
    # By next fire: 9:00 Berlin comes before "in 1 hour" or "in 2 hours" at some times of day.
    store = ReminderStore(daemon.db)
    fires = {n: (await store.get(n)).next_fire_at for n in (1, 2, 3)}  # type: ignore[union-attr]
    by_fire = sorted(fires, key=lambda n: (fires[n], n))
    assert [line.split(" ", 1)[0] for line in lines] == [f"#{n}" for n in by_fire]
    water = lines[by_fire.index(1)]
    assert water.startswith("#1 reminder at ") and " 09:00 Europe/Berlin, repeats " in water
    assert "repeats at 09:00 every day ('0 9 * * *'): water the plants  [test:" in water, water
    stretch = await store.get(2)
    assert stretch is not None and stretch.next_fire_at is not None
    local = stretch.next_fire_at.astimezone(ZoneInfo(stretch.timezone))
    stretch_line = f"#2 reminder at {local:%a %Y-%m-%d %H:%M} Europe/Berlin: stretch"
    assert lines[by_fire.index(2)].startswith(stretch_line)

    code, out, err = await reminders(data, "cancel", "2")
    assert (code, err) == (0, "") and out.startswith("Cancelled #2 reminder at "), out + err

    # What the daemon's timer does when the later one is due: everything due by then
    # fires, except the cancelled one.
    await daemon.scheduler.fire_due(utcnow() + timedelta(hours=2, minutes=1))
    await chat.wait_for(lambda sent: any("Reminder: drink tea" in m.text for m in sent))
    assert not [m.text for m in chat.sent if "Reminder: stretch" in m.text]
    assert [(r.id, r.status) for r in [await store.get(n) for n in (1, 2, 3)] if r] == [
        (1, ReminderStatus.ACTIVE),
        (2, ReminderStatus.CANCELLED),
        (3, ReminderStatus.DONE),
    ]
    code, out, _ = await reminders(data, "list")
    assert code == 0 and [line.split(" ", 1)[0] for line in out.splitlines()] == ["#1"], out

    for unknown in ("2", "99"):  # cancelled already, never existed
        code, out, err = await reminders(data, "cancel", unknown)
        assert (code, out) == (2, ""), out
        assert err == f"error: there is no active reminder #{unknown}\n", err


async def test_an_overdue_reminder_is_shown_waiting_for_its_channel(tmp_path: Path) -> None:
    """Due while no daemon runs its channel: listed as waiting; cancelled, the list is
    empty and says so."""
    data = tmp_path / "data"
    db = Database(data / "bot.db")
    await db.open()
    try:
        await ReminderStore(db).add(
            ChatKey("cli", "local"), "local", content="tea", kind=ReminderKind.REMINDER,
            fire_at=utcnow() - timedelta(minutes=5), recurrence=None, timezone="UTC",
        )  # fmt: skip
    finally:
        await db.close()
    code, out, _ = await reminders(data, "list")
    assert code == 0 and out.startswith("#1 reminder at ") and "tea" in out, out
    assert "(overdue: waits for channel cli)" in out
    assert (await reminders(data, "cancel", "1"))[1].startswith("Cancelled #1")
    assert (await reminders(data, "list"))[1] == "no active reminders\n"
