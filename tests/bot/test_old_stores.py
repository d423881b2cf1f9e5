"""Databases earlier releases left, made by their own code, open under this one with every
row kept and working: the promise that an upgrade carries a database forward.

Each ``old_stores/vNN-<commit>.sql`` is ``sqlite3 bot.db .dump`` (plus its ``PRAGMA
user_version``) of the database a checkout of that commit of main wrote, run from the
checkout (``git worktree add``) so that its own code did the writing: its ``bot init``;
its ``bot chat`` answering, through the fake model of tests/fakes/llm_server.py scripted
to call ``create_reminder`` (one-shot and ``0 9 * * 1`` recurring), ``schedule_followup``
and ``remember``, ten lines with plain turns, ``/timezone Europe/Paris``, ``/remind in 2
hours ...`` and ``/reminders``; from pairing's release on, its storage API adding two
pairing requests (one approved), a name binding, a ``kv`` row and a user's time zone;
from workspaces' release on, ``bot workspace set default SOUL.md`` (a persona version).
The commits are the first with a database and each change of its schema's history that
could leave a different database: v04 (0003 before its ``source`` column), v09 and v10
of 4a1346a, 2997765 and feb4874 (main's placeholder migrations 0006-0008).
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.messages import ChatKey, InboundMessage, OutboundMessage
from bot.store.base import Storage
from bot.store.copy import copy_store
from bot.store.db import MIGRATIONS
from bot.store.location import storage_for
from bot.store.reminders import ReminderKind

OLD_STORES = sorted((Path(__file__).parent / "old_stores").glob("v*.sql"))
OLD_STORES_BY_STEM = {p.stem: p for p in OLD_STORES}
TERMINAL = ChatKey("cli", "local")


def _load(dump: Path, path: Path) -> dict[str, int]:
    """The old database at ``path``; its rows per table."""
    conn = sqlite3.connect(path)
    try:
        conn.executescript(dump.read_text(encoding="utf-8"))
        tables = [
            str(r[0])
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        return {t: int(conn.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0]) for t in tables}
    finally:
        conn.close()


async def _columns(storage: Storage) -> dict[str, set[str]]:
    return {t: set(await storage.tables.columns(t)) for t in await storage.tables.names()}


Old = tuple[Storage, dict[str, int]]


@pytest.fixture(params=OLD_STORES, ids=lambda p: p.stem)
async def old(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Old]:
    """The old database opened (so migrated) by this release, and its rows before."""
    before = _load(request.param, tmp_path / "bot.db")
    storage = storage_for("", tmp_path)
    await storage.backend.open()
    yield storage, before
    await storage.backend.close()


async def test_every_row_comes_forward_into_this_releases_schema(old: Old, tmp_path: Path) -> None:
    storage, before = old
    assert {t: await storage.tables.count(t) for t in before} == before
    fresh = storage_for("", tmp_path / "fresh")
    await fresh.backend.open()
    try:
        assert await _columns(storage) == await _columns(fresh)
    finally:
        await fresh.backend.close()
    await storage.backend.close()  # reopened: nothing more to do, nothing lost
    await storage.backend.open()
    assert {t: await storage.tables.count(t) for t in before} == before


async def test_old_rows_still_work(old: Old) -> None:
    storage, before = old
    history = await storage.sessions.history(TERMINAL)
    assert history[0]["content"] == "hello, my name is Ada"
    if before.get("reminders"):
        active = {r.content: r for r in await storage.reminders.active()}
        assert active["weekly standup"].recurrence == "0 9 * * 1"
        assert active["dentist appointment"].next_fire_at == datetime(2030, 1, 1, 9, tzinfo=UTC)
        assert active["check the weather and tell me about an umbrella"].kind is (
            ReminderKind.FOLLOWUP
        )
        due = await storage.reminders.due(datetime(2031, 1, 1, tzinfo=UTC))
        assert {r.content for r in due} == set(active)
        # Its recurring ones are worked out again by today's rules at the next start.
        assert [r.content for r in await storage.reminders.to_replan()] == ["weekly standup"]
    # What this release writes on every turn goes into the old tables.
    message = InboundMessage(TERMINAL, "local", "and now?", message_id="after-upgrade")
    assert await storage.inbox.accept(message)
    assert await storage.inbox.started(message) == 1
    await storage.sessions.begin_turn(TERMINAL, "after-upgrade", {"role": "user", "content": "x"})
    reply = OutboundMessage(TERMINAL, "ok", idempotency_key="reply:after-upgrade")
    assert await storage.outbox.add(reply)
    assert await storage.outbox.claim([reply], "run-1") == [reply]
    made = await storage.reminders.add(
        TERMINAL, "local", content="new", kind=ReminderKind.REMINDER,
        fire_at=datetime.now(UTC) + timedelta(hours=1), recurrence=None, timezone="UTC",
        source="tool:after-upgrade",
    )  # fmt: skip
    assert await storage.reminders.by_source("tool:after-upgrade") == made
    await storage.workspaces.set_chat_workspace("cli", "local", "default", set_by="cli")
    if before.get("persona_versions"):
        soul = await storage.workspaces.latest("default", "SOUL.md")
        assert soul is not None and soul.text.strip() == "You are a terse pirate."
    if before.get("memory_facts"):  # older remember-tool facts: the user is the author
        (fact,) = await storage.memory.all_facts("default")
        assert (fact.text, fact.author) == ("I prefer metric units", "cli:local")
    if before.get("approved_users"):
        assert await storage.access.is_approved("telegram", "222")
        assert await storage.kv.get("telegram:offset") == "4242"


async def test_an_old_store_copies_into_postgresql_whole(old: Old, postgres_url: str) -> None:
    storage, before = old
    target = storage_for(postgres_url, Path())
    await target.backend.open()
    try:
        copied = {c.name: c.rows for c in await copy_store(storage, target, lambda _: None)}
        assert {t: copied[t] for t in before} == before
        assert (await target.sessions.history(TERMINAL))[0]["content"] == ("hello, my name is Ada")
        listed = [r.content for r in await target.reminders.to_replan()]
        assert listed == [r.content for r in await storage.reminders.to_replan()]
        await target.reminders.replanned()
        assert await target.reminders.to_replan() == []
    finally:
        await target.backend.close()


@pytest.mark.parametrize(
    "dump", [p for p in OLD_STORES if "v01-" not in p.name], ids=lambda p: p.stem
)
async def test_messages_an_old_release_left_unfinished_are_read_back(
    dump: Path, tmp_path: Path
) -> None:
    """A message still in the journal (or a reply still in the outbox) at the upgrade is
    run (sent) by this release: its payload, in the old release's JSON, decodes."""
    before = _load(dump, tmp_path / "bot.db")
    with sqlite3.connect(tmp_path / "bot.db") as conn:
        conn.execute("UPDATE inbox SET status = 'pending'")
        conn.execute("UPDATE outbox SET status = 'pending'")
    storage = storage_for("", tmp_path)
    await storage.backend.open()
    try:
        pending = await storage.inbox.pending()
        due = await storage.outbox.due(datetime.now(UTC) + timedelta(days=1))
    finally:
        await storage.backend.close()
    assert (len(pending), len(due)) == (before["inbox"], before["outbox"])
    assert pending[0].text == "hello, my name is Ada" and pending[0].key == TERMINAL
    assert due[0].text == "echo: hello, my name is Ada"


async def test_a_placeholder_database_an_earlier_upgrade_already_migrated_is_mended(
    tmp_path: Path,
) -> None:
    """Releases before the mend migrated such a database to their version and then failed
    on it: at the latest version, it still gets what the placeholders skipped."""
    before = _load(OLD_STORES_BY_STEM["v10-2997765"], tmp_path / "bot.db")
    with sqlite3.connect(tmp_path / "bot.db") as conn:  # what those releases did to it
        conn.executescript("\n".join(MIGRATIONS[10:]))
        conn.execute(f"PRAGMA user_version = {len(MIGRATIONS)}")
    storage = storage_for("", tmp_path)
    await storage.backend.open()
    try:
        assert {t: await storage.tables.count(t) for t in before} == before
        assert "attempts" in await storage.tables.columns("inbox")
        assert await storage.workspaces.latest("default", "SOUL.md") is None
    finally:
        await storage.backend.close()
