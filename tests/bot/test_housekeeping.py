"""Retention: finished journal rows and old offloaded files go; pending work never does."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

from bot.agent.governor.offload import RESULTS_DIR, ToolResultOffload
from bot.config import RetentionSettings
from bot.messages import ChatKey, InboundMessage, OutboundMessage, utcnow
from bot.ops.housekeeping import Housekeeping, Pruned
from bot.store.access import DENIED, PairingHold
from bot.store.base import Storage
from bot.store.db import Database
from bot.store.memory import Scope
from bot.store.reminders import ReminderKind, ReminderStatus
from bot.store.sqlite import sqlite_storage
from bot.workspaces.chat_files import ChatFiles
from channels.remembered import Remembered
from tests.fakes.waiting import until

KEY = ChatKey("test", "c1")


def _aged(path: Path, days: float) -> None:
    old = (utcnow() - timedelta(days=days)).timestamp()
    os.utime(path, (old, old))


async def _stores(tmp_path: Path) -> tuple[Database, Storage]:
    db = Database(tmp_path / "bot.db")
    await db.open()
    return db, sqlite_storage(db)


async def test_prune_drops_old_finished_rows_and_files_only(tmp_path: Path) -> None:
    db, storage = await _stores(tmp_path)
    inbox, outbox = storage.inbox, storage.outbox
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
            storage,
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
        assert await keeper.prune() == Pruned(0, 0, 0)
    finally:
        await db.close()


async def test_retention_is_configurable_and_recent_rows_stay(tmp_path: Path) -> None:
    db, storage = await _stores(tmp_path)
    inbox = storage.inbox
    try:
        msg = InboundMessage(KEY, "u1", "hi", message_id="m1")
        await inbox.accept(msg)
        await inbox.done(msg)
        soon = lambda: utcnow() + timedelta(days=2)  # noqa: E731
        offload = ToolResultOffload(tmp_path / "workspaces", 1000)
        week = Housekeeping(storage, offload, RetentionSettings(), clock=soon)
        assert (await week.prune()).inbox == 0
        day = Housekeeping(storage, offload, RetentionSettings(inbox_days=1), clock=soon)
        assert (await day.prune()).inbox == 1
        # Gone from the journal: the same message id is accepted again.
        assert await inbox.accept(msg)
    finally:
        await db.close()


async def _grown(storage: Storage) -> None:
    """One of each thing that grows with use and that a run 40 days on should drop."""
    now = utcnow()
    cancelled = await storage.reminders.add(
        KEY, "u1", content="x", kind=ReminderKind.REMINDER, fire_at=now,
        recurrence=None, timezone="UTC",
    )  # fmt: skip
    await storage.reminders.set_status(cancelled.id, ReminderStatus.CANCELLED)
    await storage.workspaces.refused(
        "team", "SOUL.md", author="t:9", via="chat", action="set", reason="not an admin"
    )
    await storage.memory.record_failure("default", KEY, 1, 2, "ValueError: x")
    fact = await storage.memory.add("default", Scope.USER, "test:u1", "likes tea", "remember")
    await storage.memory.forget([fact])
    await storage.sessions.append(KEY, [{"role": "user", "content": "hi"}])
    [(row, _)] = await storage.sessions.history_rows(KEY)
    await storage.memory.note_speaker(KEY, row, "u1")
    await storage.sessions.clear(KEY)  # /new: the speaker row is left behind
    folded = ChatKey("test", "c2")
    await storage.sessions.append(folded, [{"role": "user", "content": "old"}])
    [(row, _)] = await storage.sessions.history_rows(folded)
    await storage.sessions.save_summary(folded, "they said old", row)
    await storage.access.hold(PairingHold("test", "u9", DENIED, now + timedelta(days=1)))
    await Remembered(storage.kv, "slack:thread").add("C1:1.0")


async def test_every_rule_drops_what_grew_and_keeps_the_rest(tmp_path: Path) -> None:
    """Folded messages, reminders, refused edits, failed folds, forgotten facts, speakers,
    pairing holds and channel state each have a rule; a run inside a period (the records'
    90 days) keeps."""
    db, storage = await _stores(tmp_path)
    try:
        await _grown(storage)
        kept = Remembered(storage.kv, "discord:thread", keep_for=timedelta(days=60))
        await kept.add("42")
        offload = ToolResultOffload(tmp_path / "workspaces", 1000)
        later = lambda: utcnow() + timedelta(days=40)  # noqa: E731
        pruned = await Housekeeping(storage, offload, RetentionSettings(), clock=later).prune()
        assert pruned == Pruned(0, 0, 0, messages=1, reminders=1, memory_speakers=1, pairing=1,
                                channel_state=1)  # fmt: skip
        assert await storage.workspaces.refusals("team") != []  # records: 90 days
        assert await Remembered(storage.kv, "discord:thread").has("42")
        assert not await Remembered(storage.kv, "slack:thread").has("C1:1.0")
        records = RetentionSettings(records_days=30)
        pruned = await Housekeeping(storage, offload, records, clock=later).prune()
        assert (pruned.persona_refusals, pruned.memory_failures, pruned.memory_forgotten) == (
            1,
            1,
            1,
        )
        assert await storage.memory.forgotten("default", ["test:u1"]) == []
        assert await storage.workspaces.refusals("team") == []
        assert await storage.memory.failures("default") == []
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


def _written(path: Path, days: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x")
    _aged(path, days)
    return path


async def test_chat_files_go_after_their_period_and_links_are_not_followed(
    tmp_path: Path,
) -> None:
    """What send_file and MCP tools wrote for a chat was never removed (a daily report
    piled up to 999 copies, then the tool failed); each file goes chat_files_days (30)
    after it was written, the folders it leaves empty with it, and nothing a symbolic
    link reaches."""
    db, storage = await _stores(tmp_path)
    root, outside = tmp_path / "workspaces", tmp_path / "outside"
    chat = root / "default" / "chat_files" / "test-c1"
    old = [chat / "report.md", chat / "mcp" / "image-1.png", root / "team/chat_files/t-c2/a.md"]
    linked = [outside / "secret.txt", outside / "chat_files" / "x" / "b.md"]
    for path in old + linked:
        _written(path, 31)
    recent = _written(chat / "report-2.md", 1)
    (chat / "linked").symlink_to(outside)
    (root / "evil").mkdir()
    (root / "evil" / "chat_files").symlink_to(outside / "chat_files")
    try:
        offload = ToolResultOffload(root, 1000)
        keeper = Housekeeping(storage, offload, RetentionSettings(), chat_files=ChatFiles(root))
        assert (await keeper.prune()).chat_files == len(old)
        assert [p.exists() for p in [*old, recent, *linked]] == [False] * 3 + [True] * 3
        assert not (chat / "mcp").exists() and not (root / "team/chat_files/t-c2").exists()
        assert (chat / "linked").is_symlink()
        days = RetentionSettings(chat_files_days=0.5)
        short = Housekeeping(storage, offload, days, chat_files=ChatFiles(root))
        assert (await short.prune()).chat_files == 1  # report-2.md, a day old
        assert all(p.exists() for p in linked)
    finally:
        await db.close()


async def test_the_daemon_prunes_old_chat_files(daemon_factory, tmp_path: Path) -> None:
    data = tmp_path / "data"
    chat = data / "workspaces" / "default" / "chat_files" / "test-c1"
    chat.mkdir(parents=True)
    (chat / "report.md").write_text("a month ago")
    (chat / "report-2.md").write_text("today")
    _aged(chat / "report.md", 31)
    daemon, _ = await daemon_factory(data_dir=data)
    await until(lambda: daemon.housekeeping.runs >= 1)
    assert [p.name for p in chat.iterdir()] == ["report-2.md"]
