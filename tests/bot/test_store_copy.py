"""`bot store copy`: every table from SQLite to PostgreSQL and back, counts checked, and
never into a store that already holds rows."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from bot.cli.app import app
from bot.messages import ChatKey, InboundMessage, OutboundMessage
from bot.store.access import DENIED, PairingHold, PairingRequest
from bot.store.base import Storage
from bot.store.copy import batch_line, refused
from bot.store.location import storage_for
from bot.store.memory import Scope
from bot.store.reminders import ReminderKind
from tests.fakes.postgres import throwaway_schema

KEY = ChatKey("telegram", "100", "7")
T0 = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)


async def _fill(storage: Storage) -> None:
    """A row or more in every table, through the Protocols as the daemon writes them."""
    await storage.inbox.accept(InboundMessage(KEY, "u1", "hi ünï", message_id="m1"))
    await storage.outbox.add(OutboundMessage(KEY, "reply", idempotency_key="r1"))
    start = await storage.sessions.begin_turn(KEY, "m1", {"role": "user", "content": "hi"})
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    await storage.sessions.append(
        KEY, [{"role": "assistant", "content": None, "tool_calls": [call]}]
    )
    await storage.sessions.save_summary(KEY, "they said hi", start.user_row)
    made = await storage.reminders.add(
        KEY, "u1", content="stretch", kind=ReminderKind.REMINDER, fire_at=T0,
        recurrence="0 9 * * *", timezone="Europe/Paris", source="tool:x",
    )  # fmt: skip
    await storage.reminders.fired(made.id, T0, T0 + timedelta(days=1))
    await storage.user_settings.set_timezone("telegram", "u1", "Europe/Paris")
    await storage.kv.set("telegram:offset", "42")
    await storage.workspaces.add_version("team", "SOUL.md", "be kind", author="cli", via="cli")
    await storage.workspaces.refused("team", "SOUL.md", author="t:9", via="chat", action="set",
                                     reason="no")  # fmt: skip
    await storage.workspaces.set_chat_workspace("telegram", "100", "team", set_by="t:1")
    request = PairingRequest("ABCD2345", KEY, "u2", "@u2", T0, T0 + timedelta(days=3650))
    await storage.access.add_request(request, max_pending=3)
    await storage.access.approve(request, "telegram:1", T0)
    await storage.access.bind_name("telegram", "alice", "7", T0)
    await storage.access.hold(PairingHold("telegram", "u3", DENIED, T0 + timedelta(days=3650)))
    await storage.memory.add("team", Scope.USER, "telegram:u1", "likes tea", "remember",
                             author="telegram:u1")  # fmt: skip
    old = await storage.memory.add("team", Scope.USER, "telegram:u1", "Lives in Oslo", "cli")
    await storage.memory.forget([old])
    await storage.memory.note_speaker(KEY, start.user_row, "u1")
    await storage.memory.record_failure("team", KEY, 1, 2, "ValueError")
    await storage.previews.save(f"{KEY}:m1", KEY, "555")
    await storage.admin.add_token("h" * 64, "session", "telegram:1", T0, T0 + timedelta(days=3650))


async def _dump(storage: Storage) -> dict[str, list[tuple[Any, ...]]]:
    tables = storage.tables
    dump: dict[str, list[tuple[Any, ...]]] = {}
    for name in await tables.names():
        columns = sorted(await tables.columns(name))
        rows = [row async for batch in tables.read(name, columns) for row in batch]
        dump[name] = sorted(rows, key=repr)
    return dump


async def _opened(url: str, work: Any) -> Any:
    storage = storage_for(url, Path())
    await storage.backend.open()
    try:
        return await work(storage)
    finally:
        await storage.backend.close()


async def _copy(source: str, target: str) -> tuple[int, str]:
    args = ["store", "copy", "--from", source, "--to", target]
    result = await asyncio.to_thread(CliRunner().invoke, app, args)
    return result.exit_code, result.output


async def test_copy_to_postgres_and_back_keeps_every_row(tmp_path: Path, postgres_url: str) -> None:
    original = f"sqlite:{tmp_path / 'bot.db'}"
    await _opened(original, _fill)
    before = await _opened(original, _dump)
    # Every table but the replicas' leases, which one process on SQLite never writes,
    # and the reminders an upgrade lists for working out again (none in a new database).
    empty = [t for t, rows in before.items() if not rows]
    assert empty == ["cluster_leases", "cluster_replicas", "reminder_replans"], empty

    code, out = await _copy(original, postgres_url)
    assert code == 0, out
    for table, rows in before.items():
        assert f"{table}: {len(rows)} rows\n" in out
    assert "row counts match" in out and "postgresql://postgres@" in out
    assert await _opened(postgres_url, _dump) == before

    async def use(storage: Storage) -> tuple[list[int], int, list[str]]:
        history = await storage.sessions.history(KEY)
        copied = [f.id for f in await storage.memory.all_facts()]
        fact = await storage.memory.add("team", Scope.CHAT, "telegram:100", "new", "cli")
        return copied, fact.id, [str(m["content"]) for m in history]

    copied, fact_id, history = await _opened(postgres_url, use)
    assert history == ["hi", "None"] and fact_id > max(copied)  # ids go on after the copied

    back = tmp_path / "back.db"  # a bare path is a SQLite file
    code, out = await _copy(postgres_url, str(back))
    assert code == 0, out
    after = await _opened(f"sqlite:{back}", _dump)
    assert len(after["memory_facts"]) == 2
    assert {t: rows for t, rows in after.items() if t != "memory_facts"} == {
        t: rows for t, rows in before.items() if t != "memory_facts"
    }


async def test_copy_refuses_a_target_with_rows(tmp_path: Path, postgres_url: str) -> None:
    source, target = f"sqlite:{tmp_path / 'a.db'}", f"sqlite:{tmp_path / 'b.db'}"
    await _opened(source, _fill)

    async def one_row(storage: Storage) -> None:
        await storage.kv.set("telegram:offset", "1")

    await _opened(target, one_row)
    code, out = await _copy(source, target)
    assert code == 2
    assert (
        out.strip()
        == "error: the target is not empty (table kv has rows): copy into a new database"
    )
    await _opened(postgres_url, one_row)
    code, out = await _copy(source, postgres_url)
    assert (code, out.count("\n")) == (2, 1) and "not empty" in out
    code, out = await _copy(str(tmp_path / "missing.db"), target)
    assert (code, out.strip()) == (2, f"error: no database at {tmp_path / 'missing.db'}")


def _sqlite_run(path: Path, sql: str, *params: Any) -> None:
    """One statement on a plain connection (foreign keys not enforced): a row as an old
    release, or a hand edit, may have left it."""
    conn = sqlite3.connect(path)
    try:
        with conn:
            conn.execute(sql, params)
    finally:
        conn.close()


async def _row_counts(url: str) -> dict[str, int]:
    async def count(storage: Storage) -> dict[str, int]:
        return {t: await storage.tables.count(t) for t in await storage.tables.names()}

    counts: dict[str, int] = await _opened(url, count)
    return counts


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_a_copy_failing_midway_leaves_the_target_empty_for_a_retry(
    tmp_path: Path, backend: str
) -> None:
    """A row the target refuses (here a message of no session) in a table copied after
    others: one line naming the table, and the target as it was, so a second copy works
    (it stopped with a traceback, the tables before it filled, and a retry refused)."""
    async with contextlib.AsyncExitStack() as stack:
        target = (
            await stack.enter_async_context(throwaway_schema())
            if backend == "postgres"
            else f"sqlite:{tmp_path / 'target.db'}"
        )
        await _copy_fails_then_succeeds(tmp_path / "bot.db", target)


async def _copy_fails_then_succeeds(path: Path, target: str) -> None:
    source = f"sqlite:{path}"
    await _opened(source, _fill)
    await asyncio.to_thread(_sqlite_run, path, "UPDATE messages SET session_id = session_id + 99")
    code, out = await _copy(source, target)
    lines = out.splitlines()
    assert code == 2 and "Traceback" not in out, out
    assert lines[-1].startswith("error: cannot copy table messages") and "nothing" in lines[-1]
    assert any(line.endswith(" rows") for line in lines[:-1])  # it stopped midway
    assert set((await _row_counts(target)).values()) == {0}

    await asyncio.to_thread(_sqlite_run, path, "UPDATE messages SET session_id = session_id - 99")
    code, out = await _copy(source, target)
    assert code == 0 and "row counts match" in out, out


async def test_a_text_holding_nul_copies_to_postgres(tmp_path: Path, postgres_url: str) -> None:
    """SQLite keeps a NUL in a text, PostgreSQL refuses it: it arrives as U+FFFD, as the
    daemon on PostgreSQL now stores it."""
    path = tmp_path / "bot.db"
    await _opened(f"sqlite:{path}", _fill)
    await asyncio.to_thread(
        _sqlite_run, path, "UPDATE messages SET content = ? WHERE content = 'hi'", "pasted\x00line"
    )
    code, out = await _copy(f"sqlite:{path}", postgres_url)
    assert code == 0 and "row counts match" in out, out

    async def history(storage: Storage) -> list[Any]:
        return [m["content"] for m in await storage.sessions.history(KEY)]

    assert await _opened(postgres_url, history) == ["pasted\ufffdline", None]


def test_a_refused_row_is_named_by_its_id() -> None:
    """PostgreSQL's COPY names the batch's line a row it refused came on: its id is said."""
    rows = [(7, "a"), (8, "b\x00"), (9, "c")]
    line = batch_line("COPY messages, line 2, column content")
    assert str(refused("messages", ["id", "content"], rows, "invalid\n  byte", line)) == (
        "cannot copy table messages (row id 8): invalid byte"
    )
    assert "(ids 7 to 9)" in str(refused("messages", ["id", "content"], rows, "no", None))
    assert str(refused("kv", ["key"], [("k",)], "no")) == "cannot copy table kv: no"
