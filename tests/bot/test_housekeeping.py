"""Retention: finished journal rows and old offloaded files go; pending work never does."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

from bot.agent.governor.offload import RESULTS_DIR, ToolResultOffload
from bot.config import RetentionSettings
from bot.messages import ChatKey, InboundMessage, OutboundMessage, utcnow
from bot.ops.housekeeping import Housekeeping
from bot.store.db import Database
from bot.store.inbox import InboxStore
from bot.store.outbox import OutboxStore
from tests.fakes.waiting import until

KEY = ChatKey("test", "c1")


def _aged(path: Path, days: float) -> None:
    old = (utcnow() - timedelta(days=days)).timestamp()
    os.utime(path, (old, old))


async def _stores(tmp_path: Path) -> tuple[Database, InboxStore, OutboxStore]:
    db = Database(tmp_path / "bot.db")
    await db.open()
    return db, InboxStore(db), OutboxStore(db)


async def test_prune_drops_old_finished_rows_and_files_only(tmp_path: Path) -> None:
    db, inbox, outbox = await _stores(tmp_path)
    try:
        done, pending = (InboundMessage(KEY, "u1", t, message_id=t) for t in ("old", "open"))
        for msg in (done, pending):
            await inbox.accept(msg)
        await inbox.done(done)
        sent, queued = (OutboundMessage(KEY, t, idempotency_key=t) for t in ("sent", "queued"))
        for out in (sent, queued):
            await outbox.add(out)
        await outbox.mark_sent(sent)
        results = tmp_path / "workspaces" / "default" / RESULTS_DIR
        results.mkdir(parents=True)
        old_file, new_file = results / "1-a.txt", results / "1-b.txt"
        old_file.write_text("old")
        new_file.write_text("new")
        _aged(old_file, 31)

        later = lambda: utcnow() + timedelta(days=8)  # noqa: E731
        keeper = Housekeeping(
            inbox,
            outbox,
            ToolResultOffload(tmp_path / "workspaces", 1000),
            RetentionSettings(),
            clock=later,
        )
        pruned = await keeper.prune()

        assert (pruned.inbox, pruned.outbox, pruned.tool_results) == (1, 1, 1)
        assert [m.message_id for m in await inbox.pending()] == ["open"]
        assert [m.text for m in await outbox.due(pending_all=True)] == ["queued"]
        assert not old_file.exists() and new_file.exists()
        # A second run has nothing left to remove: only finished, old data goes.
        assert await keeper.prune() == type(pruned)(0, 0, 0)
    finally:
        await db.close()


async def test_retention_is_configurable_and_recent_rows_stay(tmp_path: Path) -> None:
    db, inbox, outbox = await _stores(tmp_path)
    try:
        msg = InboundMessage(KEY, "u1", "hi", message_id="m1")
        await inbox.accept(msg)
        await inbox.done(msg)
        soon = lambda: utcnow() + timedelta(days=2)  # noqa: E731
        offload = ToolResultOffload(tmp_path / "workspaces", 1000)
        week = Housekeeping(inbox, outbox, offload, RetentionSettings(), clock=soon)
        assert (await week.prune()).inbox == 0
        day = Housekeeping(inbox, outbox, offload, RetentionSettings(inbox_days=1), clock=soon)
        assert (await day.prune()).inbox == 1
        # Gone from the journal: the same message id is accepted again.
        assert await inbox.accept(msg)
    finally:
        await db.close()


async def test_daemon_runs_housekeeping_at_start(daemon_factory) -> None:
    daemon, _ = await daemon_factory()
    assert daemon.housekeeping.alive
    await until(lambda: daemon.housekeeping.runs >= 1)  # the first run comes at start
    await daemon.stop(timeout=1)
    assert not daemon.housekeeping.alive


async def test_housekeeping_repeats_on_its_schedule(daemon_factory) -> None:
    daemon, _ = await daemon_factory(retention={"every_h": 0.00001})  # every 36 ms
    await until(lambda: daemon.housekeeping.runs >= 3)
    await daemon.stop(timeout=1)
    assert not daemon.housekeeping.alive
