"""One storage contract, run against every backend (as aiogram tests each storage).

A new backend joins by adding a factory to ``BACKENDS``; every test here must pass
unchanged. Tests use only the Protocols of :mod:`bot.store.base`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bot.errors import QuotaExceeded
from bot.messages import ChatKey, InboundMessage, OutboundMessage, utcnow
from bot.store.access import DENIED, EVICTED, Admission, PairingHold, PairingRequest
from bot.store.base import Storage
from bot.store.db import Database
from bot.store.memory import Scope
from bot.store.postgres import postgres_storage
from bot.store.postgres.database import PostgresDatabase
from bot.store.reminders import ReminderKind, ReminderStatus
from bot.store.sqlite import sqlite_storage
from tests.fakes.postgres import emptied_schema

KEY = ChatKey("telegram", "100")
T0 = datetime(2030, 1, 1, 9, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Backend:
    """How the suite gets a backend: ``opened`` (a fresh, empty database, open), and
    ``again`` (more repositories over the same database with nothing cached: what a
    restarted daemon, or another replica, finds)."""

    opened: Callable[[Path], contextlib.AbstractAsyncContextManager[Storage]]
    again: Callable[[Storage], Storage]


@contextlib.asynccontextmanager
async def _open(storage: Storage) -> AsyncIterator[Storage]:
    await storage.backend.open()
    try:
        yield storage
    finally:
        await storage.backend.close()


@contextlib.asynccontextmanager
async def _sqlite(tmp_path: Path) -> AsyncIterator[Storage]:
    async with _open(sqlite_storage(tmp_path / "contract.db")) as storage:
        yield storage


def _sqlite_again(storage: Storage) -> Storage:
    assert isinstance(storage.backend, Database)
    return sqlite_storage(storage.backend)


@contextlib.asynccontextmanager
async def _postgres(tmp_path: Path) -> AsyncIterator[Storage]:
    async with _open(postgres_storage(await emptied_schema())) as storage:
        yield storage


def _postgres_again(storage: Storage) -> Storage:
    assert isinstance(storage.backend, PostgresDatabase)
    return postgres_storage(storage.backend)


BACKENDS: dict[str, Backend] = {
    "sqlite": Backend(_sqlite, _sqlite_again),
    "postgres": Backend(_postgres, _postgres_again),
}


@pytest.fixture(params=sorted(BACKENDS))
def backend(request: pytest.FixtureRequest) -> Backend:
    return BACKENDS[request.param]


@pytest_asyncio.fixture
async def storage(backend: Backend, tmp_path: Path) -> AsyncIterator[Storage]:
    async with backend.opened(tmp_path) as opened:
        yield opened


def inbound(message_id: str, key: ChatKey = KEY) -> InboundMessage:
    return InboundMessage(key, "u1", f"text {message_id}", message_id=message_id)


def outbound(name: str, key: ChatKey = KEY) -> OutboundMessage:
    return OutboundMessage(key, f"reply {name}", idempotency_key=name)


# --- backend ---------------------------------------------------------------------------


async def test_backend_is_writable(storage: Storage) -> None:
    assert await storage.backend.writable()


# --- inbox -----------------------------------------------------------------------------


async def test_inbox_accepts_once_and_keeps_order(storage: Storage) -> None:
    inbox = storage.inbox
    assert await inbox.accept(inbound("a"))
    assert await inbox.accept(inbound("b"))
    assert not await inbox.accept(inbound("a"))  # a redelivery is a no-op
    assert await inbox.accept(inbound("a", ChatKey("telegram", "100", "7")))  # other thread
    assert [m.message_id for m in await inbox.pending()] == ["a", "b", "a"]


async def test_inbox_done_leaves_pending_and_survives_round_trip(storage: Storage) -> None:
    msg = InboundMessage(
        KEY,
        "u1",
        "ünï 🌦",
        message_id="m1",
        user_name="@al",
        extras={"team": "T1"},
        direct=True,  # a replayed DM is still a DM
    )
    await storage.inbox.accept(msg)
    [back] = await storage.inbox.pending()
    assert back == msg
    await storage.inbox.done(msg)
    assert await storage.inbox.pending() == []
    assert not await storage.inbox.accept(msg)  # still deduplicated until pruned


async def test_inbox_prune_drops_only_finished_rows_older_than_cutoff(storage: Storage) -> None:
    for name in ("old", "open"):
        await storage.inbox.accept(inbound(name))
    await storage.inbox.done(inbound("old"))
    assert await storage.inbox.prune(utcnow() - timedelta(days=1)) == 0
    assert await storage.inbox.prune(utcnow() + timedelta(seconds=1)) == 1
    assert [m.message_id for m in await storage.inbox.pending()] == ["open"]


async def test_inbox_counts_started_turns_and_retires_failed_ones(storage: Storage) -> None:
    inbox = storage.inbox
    crashed, fine = inbound("crashed"), inbound("fine")
    for msg in (crashed, fine):
        await inbox.accept(msg)
    assert [await inbox.started(crashed) for _ in range(3)] == [1, 2, 3]
    assert await inbox.started(fine) == 1
    await inbox.interrupted([fine])  # its chat moved to another replica mid-turn
    assert await inbox.started(fine) == 1  # that start is not held against it
    await inbox.failed(crashed)
    assert [m.message_id for m in await inbox.pending()] == ["fine"]  # not replayed again
    assert not await inbox.accept(crashed)  # nor accepted again on redelivery
    assert await inbox.prune(utcnow() + timedelta(seconds=1)) == 1  # pruned like done ones


async def test_inbox_gives_back_many_starts_at_once_and_never_below_zero(
    storage: Storage,
) -> None:
    """A stop gives back every running turn's start in one call; a start given back
    twice (the stop's, then the cut's) or never counted leaves the count at zero."""
    inbox = storage.inbox
    twice, once, never = inbound("twice"), inbound("once"), inbound("never")
    for msg in (twice, once, never):
        await inbox.accept(msg)
    assert [await inbox.started(twice) for _ in range(2)] == [1, 2]
    assert await inbox.started(once) == 1
    await inbox.interrupted([twice, once, never])
    await inbox.interrupted([once, never])
    await inbox.interrupted([])
    assert [await inbox.started(m) for m in (twice, once, never)] == [2, 1, 1]


# --- outbox ----------------------------------------------------------------------------


async def _claim(storage: Storage, names: list[str], run: str) -> list[str]:
    claimed = await storage.outbox.claim([outbound(n) for n in names], run)
    return [m.idempotency_key or "" for m in claimed]


async def test_outbox_claim_is_exclusive_and_sent_rows_are_never_claimed(
    storage: Storage,
) -> None:
    outbox = storage.outbox
    for name in ("once", "other", "third"):
        await outbox.add(outbound(name))
    # Two copies of one row in a burst (start-up resume and a catch-up fire): one claim.
    assert await _claim(storage, ["once", "once", "other"], "run-1") == ["once", "other"]
    assert await _claim(storage, ["once", "third"], "run-1") == ["third"]  # held already
    assert await outbox.depth() == 3  # being sent is still undelivered
    await outbox.mark_sent(outbound("once"))
    assert await _claim(storage, ["once"], "run-2") == []
    await outbox.give_up(outbound("other"), "forbidden")
    assert await _claim(storage, ["other", "never-added"], "run-2") == []


async def test_inbox_ids_of_pending_rows_and_reading_some_of_them(storage: Storage) -> None:
    """A replica's poll lists the pending rows without reading them, then reads the new
    ones: in arrival order, and only while still pending."""
    inbox = storage.inbox
    for name in "abcd":
        await inbox.accept(inbound(name))
    ids = await inbox.pending_ids()
    assert len(ids) == 4 and ids == sorted(ids)
    await inbox.done(inbound("b"))
    assert len(await inbox.pending_ids()) == 3
    read = await inbox.read_pending([ids[3], ids[1], ids[0]])  # b is finished
    assert [(row, m.message_id) for row, m in read] == [(ids[0], "a"), (ids[3], "d")]
    assert await inbox.read_pending([]) == []
    many = [*range(ids[3] + 1, ids[3] + 1200), ids[2]]  # past SQLite's parameter batch
    assert [m.message_id for _, m in await inbox.read_pending(many)] == ["c"]


async def test_outbox_claim_held_through_retries_and_taken_over_after_a_crash(
    storage: Storage,
) -> None:
    outbox = storage.outbox
    msg = outbound("flaky")
    await outbox.add(msg)
    assert await _claim(storage, ["flaky"], "run-1") == ["flaky"]
    await outbox.mark_failed(msg, "timeout")  # run-1 retries it; no one else takes it
    assert await _claim(storage, ["flaky"], "run-1") == []
    # run-1 dies mid-send: the row is resumed by the next run, once.
    assert [m.idempotency_key for m in await outbox.due(pending_all=True)] == ["flaky"]
    assert await _claim(storage, ["flaky", "flaky"], "run-2") == ["flaky"]
    assert await _claim(storage, ["flaky"], "run-2") == []
    assert await outbox.prune(utcnow() + timedelta(seconds=1)) == 0  # never while unsent


async def test_outbox_rows_a_dead_run_was_sending_are_in_doubt(storage: Storage) -> None:
    outbox = storage.outbox
    for name in ("posting", "queued", "done"):
        await outbox.add(outbound(name))
    assert await _claim(storage, ["posting", "done"], "run-1") == ["posting", "done"]
    await outbox.mark_sent(outbound("done"))
    assert list(await outbox.in_doubt("run-1")) == []  # its own claims: it knows them
    doubted = await outbox.in_doubt("run-2")  # run-1 died: "posting" may have landed
    assert list(doubted) == ["posting"]
    assert utcnow() - timedelta(minutes=1) < doubted["posting"] <= utcnow()


async def test_outbox_adds_a_delivery_key_once(storage: Storage) -> None:
    outbox = storage.outbox
    assert await outbox.add(outbound("k1"))
    assert not await outbox.add(outbound("k1"))
    added = await outbox.add_many([outbound("k1"), outbound("k2"), outbound("k3")])
    assert [m.idempotency_key for m in added] == ["k2", "k3"]
    assert await outbox.depth() == 3
    assert [m.idempotency_key for m in await outbox.due(pending_all=True)] == ["k1", "k2", "k3"]


async def test_outbox_sent_and_abandoned_leave_the_queue(storage: Storage) -> None:
    outbox = storage.outbox
    for name in ("a", "b", "c"):
        await outbox.add(outbound(name))
    await outbox.mark_sent(outbound("a"))
    await outbox.mark_sent_keys([outbound("b").delivery_key])
    await outbox.give_up(outbound("c"), "forbidden")
    assert await outbox.depth() == 0
    assert await outbox.due(pending_all=True) == []
    assert not await outbox.add(outbound("a"))  # sent keys are never sent again


async def test_outbox_failures_back_off(storage: Storage) -> None:
    outbox = storage.outbox
    msg = outbound("x")
    await outbox.add(msg)
    assert [m.idempotency_key for m in await outbox.due()] == ["x"]
    first, due1 = await outbox.mark_failed(msg, "timeout")
    second, due2 = await outbox.mark_failed(msg, "timeout")
    assert (first, second) == (1, 2) and due2 > due1 > utcnow()
    assert await outbox.due() == []  # not before its next attempt
    assert await outbox.due(due2 + timedelta(seconds=1)) != []
    assert await outbox.next_due() == due2
    assert await outbox.depth() == 1


async def test_outbox_prune_never_drops_pending(storage: Storage) -> None:
    for name in ("sent", "queued"):
        await storage.outbox.add(outbound(name))
    await storage.outbox.mark_sent(outbound("sent"))
    assert await storage.outbox.prune(utcnow() + timedelta(seconds=1)) == 1
    assert [m.idempotency_key for m in await storage.outbox.due(pending_all=True)] == ["queued"]


# --- sessions ------------------------------------------------------------------------


def sample_messages() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "what's the weather? ünïcødé 🌦"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
                },
                {
                    # Malformed call as a model may emit it: kept verbatim.
                    "id": "call_2",
                    "type": "function",
                    "function": {"name": None, "arguments": "{not json at all"},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "name": "weather", "content": "sunny"},
        {"role": "tool", "tool_call_id": "call_2", "name": "", "content": "Error: bad call"},
        {"role": "assistant", "content": ""},
    ]


async def test_append_history_round_trip_verbatim(storage: Storage) -> None:
    messages = sample_messages()
    await storage.sessions.append(KEY, messages)
    assert await storage.sessions.history(KEY) == messages


async def test_a_user_message_keeps_its_attachments(storage: Storage) -> None:
    """The ``media`` entries (bot/media/entries.py) come back from every read: the
    append, a fresh history read and the turn that follows."""
    media = [
        {"kind": "image", "name": "cat.jpg", "size": 5, "path": "/d/m/1/x-cat.jpg", "see": True}
    ]
    first = {"role": "user", "content": "look", "media": media}
    await storage.sessions.append(KEY, [first, {"role": "assistant", "content": "a cat"}])
    assert (await storage.sessions.history(KEY))[0] == first
    start = await storage.sessions.begin_turn(KEY, "m2", {"role": "user", "content": "and?"})
    assert start.before[0][1] == first
    again = await storage.sessions.begin_turn(
        KEY, "m3", {"role": "user", "content": "x", "media": media}
    )
    assert again.before[-1][1] == {"role": "user", "content": "and?"}
    assert (await storage.sessions.history(KEY))[-1]["media"] == media


async def test_append_is_atomic_a_failing_row_rolls_back_the_earlier_ones(
    storage: Storage,
) -> None:
    sessions = storage.sessions
    await sessions.append(KEY, [{"role": "user", "content": "before"}])
    unstorable = {"role": "tool", "tool_call_id": {"not": "a string"}, "content": "x"}
    with pytest.raises(Exception):  # noqa: B017 (each backend raises its own error)
        await sessions.append(
            KEY, [{"role": "assistant", "content": "half"}, unstorable], source_id="m1"
        )
    await sessions.append(KEY, [{"role": "user", "content": "after"}])  # commits
    assert [m["content"] for m in await sessions.history(KEY)] == ["before", "after"]
    replay = await sessions.begin_turn(KEY, "m1", {"role": "user", "content": "again"})
    assert not replay.resumed  # nothing of the failed append was kept under m1


async def test_retract_forgets_a_turn_and_what_followed_it_in_its_session(
    storage: Storage,
) -> None:
    sessions = storage.sessions
    other = ChatKey(KEY.channel, KEY.chat_id, "T@other")  # the same chat, another workspace
    await sessions.begin_turn(KEY, "m1", {"role": "user", "content": "kept"})
    await sessions.append(KEY, [{"role": "assistant", "content": "answer"}])
    await sessions.begin_turn(KEY, "m2", {"role": "user", "content": "unprocessed"})
    await sessions.append(KEY, [{"role": "assistant", "content": "half a turn"}])
    await sessions.begin_turn(other, "m3", {"role": "user", "content": "elsewhere"})
    assert await sessions.retract(KEY, "m2") == 2
    assert [m["content"] for m in await sessions.history(KEY)] == ["kept", "answer"]
    assert await sessions.retract(KEY, "m3") == 1  # found in whichever session holds it
    assert await sessions.history(other) == []
    assert await sessions.retract(KEY, "absent") == 0
    again = await sessions.begin_turn(KEY, "m2", {"role": "user", "content": "sent again"})
    assert not again.resumed and [m["content"] for _, m in again.before] == ["kept", "answer"]


async def test_history_round_trip_across_calls(storage: Storage) -> None:
    messages = sample_messages()
    for m in messages:
        await storage.sessions.append(KEY, [m])
    assert await storage.sessions.history(KEY) == messages


async def test_append_nothing_is_a_noop(storage: Storage) -> None:
    await storage.sessions.append(KEY, [])
    assert await storage.sessions.history(KEY) == []


async def test_non_string_content_is_stored_as_json(storage: Storage) -> None:
    parts = [{"type": "text", "text": "hi"}]
    await storage.sessions.append(KEY, [{"role": "user", "content": parts}])
    [msg] = await storage.sessions.history(KEY)
    assert msg["content"] == '[{"type": "text", "text": "hi"}]'


async def test_sessions_are_separate_per_chat_key(storage: Storage) -> None:
    keys = [
        ChatKey("telegram", "100"),
        ChatKey("telegram", "100", "7"),
        ChatKey("telegram", "100", "8"),
        ChatKey("telegram", "200"),
        ChatKey("slack", "100"),
    ]
    for i, key in enumerate(keys):
        await storage.sessions.append(key, [{"role": "user", "content": f"msg {i}"}])
    ids = {await storage.sessions.session_id(k) for k in keys}
    assert len(ids) == len(keys)
    for i, key in enumerate(keys):
        assert await storage.sessions.history(key) == [{"role": "user", "content": f"msg {i}"}]


async def test_history_limit_returns_newest_oldest_first(storage: Storage) -> None:
    await storage.sessions.append(KEY, [{"role": "user", "content": str(i)} for i in range(10)])
    newest = await storage.sessions.history(KEY, limit=3)
    assert [m["content"] for m in newest] == ["7", "8", "9"]
    assert [m["content"] for m in await storage.sessions.history(KEY, limit=100)] == [
        str(i) for i in range(10)
    ]
    assert await storage.sessions.history(KEY, limit=0) == []


async def test_clear_deletes_only_that_chat(storage: Storage) -> None:
    other = ChatKey("telegram", "100", "thread")
    await storage.sessions.append(
        KEY, [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
    )
    await storage.sessions.append(other, [{"role": "user", "content": "keep"}])
    assert await storage.sessions.clear(KEY) == 2
    assert await storage.sessions.history(KEY) == []
    assert await storage.sessions.history(other) == [{"role": "user", "content": "keep"}]
    # Chat still usable after /new.
    await storage.sessions.append(KEY, [{"role": "user", "content": "again"}])
    assert await storage.sessions.history(KEY) == [{"role": "user", "content": "again"}]


async def test_clear_runs_hooks_with_the_session_id_and_key(storage: Storage) -> None:
    cleared: list[tuple[int, ChatKey]] = []
    storage.sessions.add_clear_hook(lambda sid, key: cleared.append((sid, key)))
    await storage.sessions.append(KEY, [{"role": "user", "content": "a"}])
    session = await storage.sessions.session_id(KEY)
    await storage.sessions.clear(KEY)
    assert cleared == [(session, KEY)]


async def test_a_turn_is_found_by_the_inbound_message_it_answers(storage: Storage) -> None:
    sessions = storage.sessions
    await sessions.append(KEY, [{"role": "user", "content": "hi"}], source_id="m1")
    [(row, _)] = await sessions.history_rows(KEY)
    found = await sessions.begin_turn(KEY, "m1", {"role": "user", "content": "hi"})
    assert found.resumed and found.user_row == row
    assert not (await sessions.begin_turn(KEY, "m2", {"role": "user", "content": "new"})).resumed


async def test_begin_turn_stores_the_user_message_once_and_reads_what_came_before(
    storage: Storage,
) -> None:
    sessions = storage.sessions
    await sessions.append(KEY, [{"role": "user", "content": str(i)} for i in range(3)])
    first = await sessions.begin_turn(KEY, "m1", {"role": "user", "content": "hi"}, 2)
    assert not first.resumed
    assert [m["content"] for _, m in first.before] == ["1", "2"]  # the newest 2, oldest first
    await sessions.append(KEY, [{"role": "assistant", "content": "half an answer"}])
    # A replay after a crash: the same row, nothing stored twice, nothing after it read.
    again = await sessions.begin_turn(KEY, "m1", {"role": "user", "content": "hi"})
    assert again.resumed and again.user_row == first.user_row
    assert [m["content"] for _, m in again.before] == ["0", "1", "2"]
    contents = [m["content"] for m in await sessions.history(KEY)]
    assert contents == ["0", "1", "2", "hi", "half an answer"]


async def test_begin_turn_reads_only_what_the_archived_summary_does_not_cover(
    storage: Storage, backend: Backend
) -> None:
    """The prompt sends only the turns after the summary's cursor: the rows before it
    are not read at all, whether the summary is cached or read in the same trip."""
    sessions = storage.sessions
    await sessions.append(KEY, [{"role": "user", "content": str(i)} for i in range(6)])
    rows = await sessions.history_rows(KEY)
    await sessions.save_summary(KEY, "they counted to three", rows[3][0])
    start = await sessions.begin_turn(KEY, "m1", {"role": "user", "content": "hi"}, 100)
    assert [m["content"] for _, m in start.before] == ["4", "5"]
    # A daemon just started: the summary is not cached yet and is read in the same trip.
    restarted = backend.again(storage).sessions
    start = await restarted.begin_turn(KEY, "m2", {"role": "user", "content": "ho"}, 100)
    assert [m["content"] for _, m in start.before] == ["4", "5", "hi"]
    assert await restarted.summary(KEY) == ("they counted to three", rows[3][0])
    # Without a summary every stored row up to the limit comes back.
    other = ChatKey("telegram", "200")
    await sessions.append(other, [{"role": "user", "content": str(i)} for i in range(3)])
    start = await sessions.begin_turn(other, "m3", {"role": "user", "content": "x"}, 2)
    assert [m["content"] for _, m in start.before] == ["1", "2"]


async def test_begin_turn_from_the_cached_tail_is_what_a_fresh_read_finds(
    storage: Storage, backend: Backend
) -> None:
    """The store keeps each session's unsummarized tail in memory; through appends,
    summaries, replays, ``/new`` and a limit smaller than the history, every turn's
    ``before`` must equal what a store with nothing cached reads from the database."""
    sessions = storage.sessions

    async def expected(user_row: int, limit: int) -> list[tuple[int, dict[str, Any]]]:
        fresh = backend.again(storage).sessions  # caches nothing of this chat yet
        summary = await fresh.summary(KEY)
        through = summary[1] if summary else 0
        rows = [r for r in await fresh.history_rows(KEY) if through < r[0] < user_row]
        return rows[-limit:]

    async def turn(n: int, limit: int = 5, *, calls: bool = True) -> int:
        start = await sessions.begin_turn(KEY, f"m{n}", {"role": "user", "content": f"q{n}"}, limit)
        assert start.before == await expected(start.user_row, limit), n
        call = {"id": f"c{n}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        answer: list[dict[str, Any]] = [{"role": "assistant", "content": f"a{n}"}]
        if calls:
            answer = [
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": f"c{n}", "name": "f", "content": f"r{n}"},
            ]
        await sessions.append(KEY, answer)
        return start.user_row

    rows = [await turn(n) for n in range(4)]  # the limit (5) cuts the tail from turn 2 on
    await sessions.save_summary(KEY, "summed up", rows[3])  # covers turns 0-2 and q3
    await turn(4)
    await turn(5, limit=50, calls=False)  # more than the tail holds: read again
    # A replay: its message is stored; the rows after it are not "before" it.
    replay = await sessions.begin_turn(KEY, "m5", {"role": "user", "content": "q5"}, 50)
    assert replay.resumed and replay.before == await expected(replay.user_row, 50)
    await turn(6)
    await sessions.clear(KEY)
    await turn(7)
    await turn(8)


async def test_summary_round_trip(storage: Storage) -> None:
    sessions = storage.sessions
    assert await sessions.summary(KEY) is None
    await sessions.append(KEY, [{"role": "user", "content": str(i)} for i in range(4)])
    rows = await sessions.history_rows(KEY)
    assert [m["content"] for _, m in rows] == ["0", "1", "2", "3"]
    through = rows[1][0]
    await sessions.save_summary(KEY, "they counted", through)
    await sessions.save_summary(KEY, "they counted to one", through)
    assert await sessions.summary(KEY) == ("they counted to one", through)


# --- reminders -------------------------------------------------------------------------


async def _remind(storage: Storage, content: str, at: datetime, **kw: Any) -> Any:
    return await storage.reminders.add(
        kw.pop("key", KEY),
        kw.pop("user", "u1"),
        content=content,
        kind=kw.pop("kind", ReminderKind.REMINDER),
        fire_at=at,
        recurrence=kw.pop("recurrence", None),
        timezone="Europe/Paris",
        **kw,
    )


async def test_reminder_round_trip_and_source_dedup(storage: Storage) -> None:
    thread = ChatKey("slack", "C1", "1700.1")
    made = await _remind(storage, "stretch", T0, key=thread, source="tool:abc")
    assert await storage.reminders.get(made.id) == made
    assert await storage.reminders.by_source("tool:abc") == made
    assert made.key == thread and made.status is ReminderStatus.ACTIVE
    assert made.next_fire_at == T0 and made.timezone == "Europe/Paris"
    assert await storage.reminders.get(made.id + 100) is None


async def test_reminders_due_in_time_order(storage: Storage) -> None:
    late = await _remind(storage, "late", T0 + timedelta(hours=2))
    early = await _remind(storage, "early", T0)
    await _remind(storage, "later still", T0 + timedelta(days=1))
    due = await storage.reminders.due(T0 + timedelta(hours=3))
    assert [r.id for r in due] == [early.id, late.id]
    times = await storage.reminders.due_times(T0 + timedelta(hours=3))
    assert times == [T0, T0 + timedelta(hours=2)]


async def test_reminder_counts_are_per_user(storage: Storage) -> None:
    for user in ("u1", "u1", "u2"):
        await _remind(storage, "x", T0, user=user)
    assert await storage.reminders.count_active() == 3
    assert await storage.reminders.count_active_for_user("telegram", "u1") == 2
    assert len(await storage.reminders.active_for_user("telegram", "u2")) == 1
    assert await storage.reminders.count_active_for_user("slack", "u1") == 0


async def test_reminder_limit_is_checked_with_the_insert(storage: Storage) -> None:
    for _ in range(2):
        await _remind(storage, "x", T0, max_active=3)
    await _remind(storage, "other user", T0, user="u2", max_active=1)
    made = await asyncio.gather(
        *(_remind(storage, f"race {i}", T0, max_active=3) for i in range(5)),
        return_exceptions=True,
    )
    assert sum(isinstance(r, QuotaExceeded) for r in made) == 4
    assert await storage.reminders.count_active_for_user("telegram", "u1") == 3
    with pytest.raises(QuotaExceeded, match="3"):
        await _remind(storage, "one more", T0, max_active=3)


async def test_fired_moves_or_finishes_a_reminder(storage: Storage) -> None:
    once = await _remind(storage, "once", T0)
    daily = await _remind(storage, "daily", T0, recurrence="daily")
    await storage.reminders.fired(once.id, T0, None)
    await storage.reminders.fired_many([(daily.id, T0, T0 + timedelta(days=1), False)])
    done, moved = await storage.reminders.get(once.id), await storage.reminders.get(daily.id)
    assert done is not None and done.status is not ReminderStatus.ACTIVE
    assert moved is not None and moved.next_fire_at == T0 + timedelta(days=1)
    assert moved.last_fired_at == T0
    assert [r.id for r in await storage.reminders.active()] == [daily.id]


async def test_a_chat_gone_ends_its_active_reminders_only(storage: Storage) -> None:
    """All its threads, or with one thread ("" outside any) only that one; other chats
    and finished reminders are left as they are."""
    chat = await _remind(storage, "in chat", T0)
    topic = await _remind(storage, "in topic", T0, key=ChatKey("telegram", "100", "5"))
    other = await _remind(storage, "elsewhere", T0, key=ChatKey("telegram", "101"))
    slack = await _remind(storage, "same id", T0, key=ChatKey("slack", "100"))
    done = await _remind(storage, "done", T0)
    await storage.reminders.fired(done.id, T0, None)
    assert await storage.reminders.cancel_in_chat("telegram", "100", "5") == 1
    assert await storage.reminders.cancel_in_chat("telegram", "100", None) == 1
    now = [await storage.reminders.get(r.id) for r in (chat, topic, other, slack, done)]
    assert [r.status if r else None for r in now] == [
        ReminderStatus.CANCELLED,
        ReminderStatus.CANCELLED,
        ReminderStatus.ACTIVE,
        ReminderStatus.ACTIVE,
        ReminderStatus.DONE,
    ]


async def test_a_chat_moved_takes_its_active_reminders_along(storage: Storage) -> None:
    topic = await _remind(storage, "in topic", T0, key=ChatKey("telegram", "-5", "9"))
    done = await _remind(storage, "done", T0, key=ChatKey("telegram", "-5"))
    await storage.reminders.fired(done.id, T0, None)
    other = await _remind(storage, "elsewhere", T0, key=ChatKey("slack", "-5"))
    assert await storage.reminders.move_chat("telegram", "-5", "-1005") == 1
    now = [await storage.reminders.get(r.id) for r in (topic, done, other)]
    assert [r.key if r else None for r in now] == [
        ChatKey("telegram", "-1005", "9"),
        ChatKey("telegram", "-5"),
        ChatKey("slack", "-5"),
    ]
    assert now[0] is not None and now[0].next_fire_at == T0
    assert now[0].status is ReminderStatus.ACTIVE


async def test_moved_many_moves_only_a_next_run_still_as_read(storage: Storage) -> None:
    moved, fired, cancelled = [
        await _remind(storage, name, T0 + timedelta(days=7), recurrence="0 9 * * 1")
        for name in ("moved", "fired", "cancelled")
    ]
    await storage.reminders.fired(fired.id, T0, T0 + timedelta(days=14))
    await storage.reminders.set_status(cancelled.id, ReminderStatus.CANCELLED)
    earlier = T0 + timedelta(days=6)
    count = await storage.reminders.moved_many(
        [(r.id, T0 + timedelta(days=7), earlier) for r in (moved, fired, cancelled)]
    )
    assert count == 1
    after = {r.id: await storage.reminders.get(r.id) for r in (moved, fired, cancelled)}
    assert after[moved.id].next_fire_at == earlier  # type: ignore[union-attr]
    assert after[fired.id].next_fire_at == T0 + timedelta(days=14)  # type: ignore[union-attr]
    assert after[cancelled.id].status is ReminderStatus.CANCELLED  # type: ignore[union-attr]


async def test_rezoned_many_moves_only_a_next_run_still_as_read(storage: Storage) -> None:
    moved, fired, cancelled = [
        await _remind(storage, name, T0 + timedelta(days=1), recurrence="0 9 * * *")
        for name in ("moved", "fired", "cancelled")
    ]
    await storage.reminders.fired(fired.id, T0, T0 + timedelta(days=2))
    await storage.reminders.set_status(cancelled.id, ReminderStatus.CANCELLED)
    later = T0 + timedelta(days=1, hours=6)
    count = await storage.reminders.rezoned_many(
        [
            (r.id, T0 + timedelta(days=1), "America/New_York", later)
            for r in (moved, fired, cancelled)
        ]
    )
    assert count == 1
    after = {r.id: await storage.reminders.get(r.id) for r in (moved, fired, cancelled)}
    assert after[moved.id].next_fire_at == later  # type: ignore[union-attr]
    assert after[moved.id].timezone == "America/New_York"  # type: ignore[union-attr]
    assert after[fired.id].timezone == "Europe/Paris"  # type: ignore[union-attr]
    assert after[cancelled.id].status is ReminderStatus.CANCELLED  # type: ignore[union-attr]


async def test_set_status_cancels(storage: Storage) -> None:
    made = await _remind(storage, "x", T0)
    await storage.reminders.set_status(made.id, ReminderStatus.CANCELLED)
    assert await storage.reminders.due(T0 + timedelta(days=1)) == []
    assert await storage.reminders.count_active() == 0


async def test_a_reminder_cancelled_while_it_fires_stays_cancelled(storage: Storage) -> None:
    # The scheduler reads them due, the user cancels them, then the scheduler records
    # the fires: a recurring one came back active with its next time and fired forever.
    daily = await _remind(storage, "daily", T0, recurrence="0 9 * * *")
    once = await _remind(storage, "once", T0)
    due = await storage.reminders.due(T0)
    assert [r.id for r in due] == [daily.id, once.id]
    for reminder in due:
        await storage.reminders.set_status(reminder.id, ReminderStatus.CANCELLED)
    await storage.reminders.fired_many(
        [(daily.id, T0, T0 + timedelta(days=1), False), (once.id, T0, None, True)]
    )
    for reminder in due:
        after = await storage.reminders.get(reminder.id)
        assert after is not None and after.status is ReminderStatus.CANCELLED
    assert await storage.reminders.count_active() == 0
    assert await storage.reminders.due(T0 + timedelta(days=2)) == []


async def test_prune_forgets_finished_reminders_only(storage: Storage) -> None:
    fired = await _remind(storage, "fired", T0)
    cancelled = await _remind(storage, "cancelled", T0)
    active = await _remind(storage, "active", T0)
    await storage.reminders.fired(fired.id, T0, None)
    await storage.reminders.set_status(cancelled.id, ReminderStatus.CANCELLED)
    assert await storage.reminders.prune(utcnow() - timedelta(minutes=1)) == 0
    # The cancelled one never fired: its creation (now) counts.
    assert await storage.reminders.prune(utcnow() + timedelta(seconds=1)) == 1
    assert await storage.reminders.get(cancelled.id) is None
    assert await storage.reminders.prune(T0) == 0  # the other last fired at T0
    assert await storage.reminders.prune(T0 + timedelta(seconds=1)) == 1
    assert await storage.reminders.get(fired.id) is None
    assert await storage.reminders.prune(T0 + timedelta(days=9999)) == 0
    assert [r.id for r in await storage.reminders.active()] == [active.id]


async def test_user_timezone_round_trip(storage: Storage) -> None:
    users = storage.user_settings
    assert await users.timezone("telegram", "u1") is None
    await users.set_timezone("telegram", "u1", "Asia/Tokyo")
    await users.set_timezone("telegram", "u1", "Europe/Paris")
    assert await users.timezone("telegram", "u1") == "Europe/Paris"
    assert await users.timezone("slack", "u1") is None


async def test_key_value_round_trip(storage: Storage) -> None:
    kv = storage.kv
    assert await kv.get("offset") is None
    assert await kv.get("offset", "0") == "0"
    await kv.set("offset", "41")
    await kv.set("offset", "42")
    assert await kv.get("offset") == "42"
    await kv.delete("offset")
    await kv.delete("offset")  # deleting twice is fine
    assert await kv.get("offset") is None


async def test_preview_ids_are_kept_per_turn_until_final_and_pruned(storage: Storage) -> None:
    previews = storage.previews
    assert await previews.get("telegram:100:7") is None
    await previews.save("telegram:100:7", KEY, "5001")
    await previews.finalize("telegram:100:8")  # no such turn: nothing happens
    record = await previews.get("telegram:100:7")
    assert record is not None and (record.message_id, record.final) == ("5001", False)
    await previews.finalize("telegram:100:7")
    record = await previews.get("telegram:100:7")
    assert record is not None and (record.message_id, record.final) == ("5001", True)
    await previews.save("telegram:100:7", KEY, "5002")  # a new preview reopens the turn
    record = await previews.get("telegram:100:7")
    assert record is not None and (record.message_id, record.final) == ("5002", False)
    assert await previews.prune(utcnow() - timedelta(days=1)) == 0
    assert await previews.prune(utcnow() + timedelta(seconds=1)) == 1
    assert await previews.get("telegram:100:7") is None


async def test_key_value_keep_for_runs_out_and_a_write_renews_it(storage: Storage) -> None:
    kv = storage.kv
    await kv.set("offset", "1")  # kept until deleted
    await kv.set("slack:thread:C1:1.0", "1", keep_for=timedelta(days=30))
    await kv.set("slack:thread:C1:2.0", "1", keep_for=timedelta(days=1))
    now = utcnow()
    assert await kv.prune(now) == 0
    assert await kv.prune(now + timedelta(days=2)) == 1
    assert await kv.get("slack:thread:C1:2.0") is None
    await kv.set("slack:thread:C1:1.0", "1", keep_for=timedelta(days=30))  # used again
    assert await kv.prune(now + timedelta(days=29)) == 0
    assert await kv.prune(now + timedelta(days=31)) == 1
    await kv.set("slack:thread:C1:3.0", "1", keep_for=timedelta(days=1))
    await kv.set("slack:thread:C1:3.0", "2")  # set without keep_for: kept for good
    assert await kv.prune(now + timedelta(days=9999)) == 0
    assert await kv.get("offset") == "1" and await kv.get("slack:thread:C1:3.0") == "2"


# --- workspaces --------------------------------------------------------------------------


async def test_persona_versions_count_up_per_file_and_keep_the_text(storage: Storage) -> None:
    ws = storage.workspaces
    assert await ws.latest("team", "SOUL.md") is None
    one = await ws.add_version("team", "SOUL.md", "a\n  b\n", author="telegram:1", via="chat")
    two = await ws.add_version("team", "SOUL.md", "c", author="cli:ann", via="cli")
    other = await ws.add_version("team", "USER.md", "u", author="disk", via="disk")
    assert (one.version, two.version, other.version) == (1, 2, 1)
    assert (await ws.version("team", "SOUL.md", 1)) == one
    assert one.text == "a\n  b\n" and one.author == "telegram:1" and one.via == "chat"
    assert await ws.latest("team", "SOUL.md") == two
    assert [v.version for v in await ws.versions("team", "SOUL.md")] == [1, 2]
    assert await ws.versions("other", "SOUL.md") == []
    assert one.sha256 != two.sha256


async def test_refusals_and_chat_workspace_round_trip(storage: Storage) -> None:
    ws = storage.workspaces
    await ws.refused("team", "SOUL.md", author="telegram:9", via="chat", action="/soul set",
                     reason="not an admin")  # fmt: skip
    assert await ws.refusals("team") == [("SOUL.md", "telegram:9", "/soul set", "not an admin")]
    assert await ws.prune_refusals(utcnow() - timedelta(minutes=1)) == 0
    assert await ws.prune_refusals(utcnow() + timedelta(seconds=1)) == 1
    assert await ws.refusals("team") == []
    assert await ws.chat_workspace("telegram", "5") is None
    await ws.set_chat_workspace("telegram", "5", "team", set_by="telegram:1")
    await ws.set_chat_workspace("telegram", "5", "other", set_by="telegram:1")
    assert await ws.chat_workspace("telegram", "5") == "other"


async def test_reminders_remember_their_workspace(storage: Storage) -> None:
    r = storage.reminders
    common: dict[str, Any] = {
        "kind": ReminderKind.REMINDER,
        "fire_at": T0,
        "recurrence": None,
        "timezone": "UTC",
    }
    a = await r.add(KEY, "u1", content="a", workspace="alpha", **common)
    await r.add(KEY, "u1", content="b", **common)
    assert a.workspace == "alpha"
    assert [x.content for x in await r.active_for_user("telegram", "u1", "alpha")] == ["a"]
    assert [x.content for x in await r.active_for_user("telegram", "u1", "default")] == ["b"]
    assert len(await r.active_for_user("telegram", "u1")) == 2


# --- access: pairing requests, approved users, bound usernames -------------------------


def _request(code: str, user: str, at: datetime = T0, channel: str = "telegram") -> PairingRequest:
    return PairingRequest(
        code, ChatKey(channel, f"dm-{user}"), user, f"@{user}", at, at + timedelta(hours=1)
    )


async def test_pairing_request_round_trip_and_expiry(storage: Storage) -> None:
    access = storage.access
    made = _request("ABCD2345", "u1")
    assert (await access.add_request(made, max_pending=3)) == Admission(True)
    assert await access.request_of("telegram", "u1", T0 + timedelta(minutes=59)) == made
    assert await access.request_of("slack", "u1", T0) is None
    later = T0 + timedelta(hours=1)
    assert await access.request_of("telegram", "u1", later) is None  # expired
    assert await access.pending_requests(later) == []
    assert await access.take_request("ABCD2345", later) is None
    # An expired request of the same user gives way to a new one.
    again = _request("EFGH6789", "u1", later)
    assert (await access.add_request(again, max_pending=3)).added
    assert await access.pending_requests(later) == [again]


async def test_one_live_request_per_account(storage: Storage) -> None:
    access = storage.access
    first = _request("CODE0002", "u1")
    assert (await access.add_request(first, max_pending=3)).added
    second = _request("CODE0003", "u1", T0 + timedelta(minutes=1))
    assert (await access.add_request(second, max_pending=3)) == Admission(False)
    assert await access.pending_requests(T0 + timedelta(minutes=1)) == [first]


async def test_a_full_channel_pushes_its_oldest_request_out(storage: Storage) -> None:
    """A few accounts cannot lock every newcomer out: the newest request always gets in,
    the oldest goes, and its account is held until that code would have expired."""
    access = storage.access
    made = [_request(f"CODE000{n + 2}", f"u{n}", T0 + timedelta(minutes=n)) for n in range(3)]
    for request in made:
        assert (await access.add_request(request, max_pending=3)).added
    newcomer = _request("CODE0009", "u9", T0 + timedelta(minutes=5))
    admitted = await access.add_request(newcomer, max_pending=3)
    assert admitted == Admission(True, evicted=(made[0],))
    now = T0 + timedelta(minutes=5)
    assert await access.pending_requests(now) == [*made[1:], newcomer]
    held = PairingHold("telegram", "u0", EVICTED, made[0].expires_at)
    assert await access.hold_of("telegram", "u0", now) == held
    back = await access.add_request(_request("CODE0008", "u0", now), max_pending=3)
    assert back == Admission(False, hold=held)  # cannot push back in at once
    assert await access.pending_requests(now) == [*made[1:], newcomer]
    assert (
        await access.add_request(_request("CODE0007", "u8", channel="slack"), max_pending=3)
    ).added
    # Once the pushed-out code would have expired, the account may ask again.
    later = made[0].expires_at
    assert await access.hold_of("telegram", "u0", later) is None
    assert (await access.add_request(_request("CODE0006", "u0", later), max_pending=3)).added


async def test_a_hold_keeps_an_account_from_asking_until_it_ends(storage: Storage) -> None:
    access = storage.access
    denied = PairingHold("telegram", "u1", DENIED, T0 + timedelta(hours=24))
    await access.hold(denied)
    assert await access.hold_of("telegram", "u1", T0) == denied
    assert await access.hold_of("slack", "u1", T0) is None
    refused = await access.add_request(_request("CODE0002", "u1"), max_pending=3)
    assert refused == Admission(False, hold=denied)
    assert await access.pending_requests(T0) == []
    again = _request("CODE0003", "u1", T0 + timedelta(hours=24))
    assert (await access.add_request(again, max_pending=3)).added


async def test_prune_pairing_drops_expired_requests_and_holds(storage: Storage) -> None:
    access = storage.access
    await access.add_request(_request("CODE0002", "u1"), max_pending=3)
    await access.add_request(_request("CODE0003", "u2", channel="slack"), max_pending=3)
    await access.hold(PairingHold("discord", "u3", DENIED, T0 + timedelta(hours=2)))
    assert await access.prune_pairing(T0 + timedelta(minutes=30)) == 0
    assert await access.prune_pairing(T0 + timedelta(hours=1)) == 2
    assert await access.hold_of("discord", "u3", T0) is not None
    assert await access.prune_pairing(T0 + timedelta(hours=2)) == 1
    assert await access.hold_of("discord", "u3", T0) is None


async def test_take_request_is_once(storage: Storage) -> None:
    access = storage.access
    made = _request("ABCD2345", "u1")
    await access.add_request(made, max_pending=3)
    assert await access.take_request("ABCD2345", T0) == made
    assert await access.take_request("ABCD2345", T0) is None
    assert await access.pending_requests(T0) == []


async def test_approval_round_trip_and_revoke(storage: Storage) -> None:
    access = storage.access
    made = _request("ABCD2345", "u1")
    assert not await access.is_approved("telegram", "u1")
    await access.approve(made, "telegram:admin", T0)
    await access.approve(made, "cli", T0)  # approving twice keeps one row
    assert await access.is_approved("telegram", "u1")
    assert not await access.is_approved("slack", "u1")
    [user] = await access.approved_users()
    assert (user.sender, user.user_name, user.approved_by) == ("telegram:u1", "@u1", "cli")
    assert await access.revoke("telegram", "u1")
    assert not await access.revoke("telegram", "u1")
    assert not await access.is_approved("telegram", "u1")


async def test_a_name_is_bound_once(storage: Storage) -> None:
    access = storage.access
    assert await access.bind_name("telegram", "alice", "7", T0) == "7"
    assert await access.bind_name("telegram", "alice", "8", T0) == "7"  # first one holds
    assert await access.bind_name("slack", "alice", "U8", T0) == "U8"
    assert await access.name_bindings() == {("telegram", "alice"): "7", ("slack", "alice"): "U8"}


# --- memory ----------------------------------------------------------------------------


async def test_memory_facts_are_kept_per_workspace_scope_and_owner(storage: Storage) -> None:
    memory = storage.memory
    tea = await memory.add("default", Scope.USER, "telegram:u1", "likes tea", "remember")
    await memory.add("default", Scope.CHAT, "telegram:100", "plans a trip", "consolidation")
    await memory.add("other", Scope.USER, "telegram:u1", "elsewhere", "remember")
    mine = await memory.facts("default", Scope.USER, "telegram:u1")
    assert [f.text for f in mine] == ["likes tea"] and mine[0] == tea
    assert [f.text for f in await memory.facts("default", Scope.CHAT, "telegram:100")] == [
        "plans a trip"
    ]
    assert await memory.facts("default", Scope.USER, "telegram:u2") == []
    both = await memory.facts_of_both("default", "telegram:u1", "telegram:100")
    assert both == (mine, await memory.facts("default", Scope.CHAT, "telegram:100"))
    assert await memory.facts_of_both("other", "telegram:u2", "telegram:100") == ([], [])
    assert [f.workspace for f in await memory.all_facts()] == ["default", "default", "other"]
    assert len(await memory.all_facts("other")) == 1


async def test_a_user_fact_kept_in_a_chat_is_read_only_there(storage: Storage) -> None:
    memory = storage.memory
    group, other, dm = "telegram:-100", "telegram:-200", "telegram:77"
    tea = await memory.add("default", Scope.USER, "telegram:u1", "likes tea", "remember")
    kept = await memory.add(
        "default", Scope.USER, "telegram:u1", "wants copies", "consolidation", chat=group
    )
    assert (tea.chat, kept.chat) == ("", group) and await memory.get(kept.id) == kept
    await memory.add("default", Scope.USER, "telegram:u2", "plays chess", "cli", chat=group)
    await memory.add("default", Scope.USER, "telegram:u2", "elsewhere", "cli", chat=other)
    trip = await memory.add("default", Scope.CHAT, group, "plans a trip", "consolidation")
    assert await memory.facts_of_both("default", "telegram:u1", dm) == ([tea], [])
    assert await memory.facts_of_both("default", "telegram:u1", group) == ([tea, kept], [trip])
    assert [f.text for f in await memory.learned_in("default", group)] == [
        "wants copies",
        "plays chess",
        "plans a trip",
    ]
    assert await memory.learned_in("other", group) == []
    assert len(await memory.facts("default", Scope.USER, "telegram:u1")) == 2  # every chat's


async def test_memory_update_and_remove(storage: Storage) -> None:
    memory = storage.memory
    fact = await memory.add("default", Scope.USER, "telegram:u1", "likes tea", "remember")
    assert await memory.update(fact.id, "likes coffee")
    updated = await memory.get(fact.id)
    assert updated is not None and updated.text == "likes coffee"
    assert not await memory.update(fact.id + 100, "nobody")
    assert await memory.remove([fact.id, fact.id + 100]) == 1
    assert await memory.get(fact.id) is None
    assert await memory.remove([]) == 0


async def test_forget_removes_facts_and_notes_them_across_a_restart(
    storage: Storage, backend: Backend
) -> None:
    """A fact removed at a person's request is noted (owner, casefolded text) so a fold of
    the turns that said it does not add it back; the note outlives the process."""
    memory = storage.memory
    oslo = await memory.add("default", Scope.USER, "telegram:u1", "Lives in ÖSLO", "remember")
    trip = await memory.add("default", Scope.CHAT, "telegram:100", "plans a trip", "cli")
    tea = await memory.add("default", Scope.USER, "telegram:u2", "likes tea", "remember")
    assert await memory.forget([oslo, trip]) == 2
    assert await memory.get(oslo.id) is None and await memory.get(tea.id) == tea
    assert await memory.forget([oslo]) == 0  # gone already: noted again, nothing removed
    assert await memory.forget([]) == 0
    again = backend.again(storage).memory
    owners = ["telegram:u1", "telegram:100", "telegram:u2"]
    found = {(f.owner, f.text) for f in await again.forgotten("default", owners)}
    assert found == {("telegram:u1", "lives in öslo"), ("telegram:100", "plans a trip")}
    assert await again.forgotten("default", ["telegram:u2"]) == []
    assert await again.forgotten("other", owners) == []
    assert await again.forgotten("default", []) == []
    assert await again.prune_forgotten(utcnow() - timedelta(minutes=1)) == 0
    assert await again.prune_forgotten(utcnow() + timedelta(seconds=1)) == 2
    assert await again.forgotten("default", owners) == []


async def test_memory_speakers_and_failures(storage: Storage) -> None:
    memory = storage.memory
    await memory.note_speaker(KEY, 5, "u1")
    await memory.note_speaker(KEY, 9, "u2")
    await memory.note_speaker(ChatKey("telegram", "200"), 6, "u3")
    assert await memory.speakers(KEY, 1, 8) == {5: "u1"}
    assert await memory.speakers(KEY, 1, 9) == {5: "u1", 9: "u2"}
    await memory.record_failure("default", KEY, 1, 8, "ValueError: garbage")
    failures = await memory.failures("default")
    assert [(f.chat, f.from_id, f.through_id, f.error) for f in failures] == [
        ("telegram:100", 1, 8, "ValueError: garbage")
    ]
    assert await memory.failures("other") == []
    assert await memory.prune_failures(utcnow() - timedelta(minutes=1)) == 0
    assert await memory.prune_failures(utcnow() + timedelta(seconds=1)) == 1
    assert await memory.failures("default") == []


# --- pages the admin page reads (never every row) ----------------------------------------


async def test_pages_are_bounded_ordered_and_complete(storage: Storage) -> None:
    for n in range(5):
        await storage.workspaces.add_version("w", "SOUL.md", f"v{n}", author="a", via="chat")
        await _remind(storage, f"r{n}", T0 + timedelta(hours=n), user=f"u{n % 2}")
        await storage.access.approve(_request(f"CODE{n}", f"p{n}"), "admin", T0 + timedelta(n))
        await storage.memory.add("w", Scope.USER, f"telegram:u{n}", f"fact {n}", "cli")
        await storage.sessions.append(
            ChatKey("telegram", f"c{n}"), [{"role": "user", "content": "x"}]
        )
    await storage.memory.add("other", Scope.USER, "telegram:u0", "elsewhere", "cli")

    versions = storage.workspaces.recent_versions
    assert [v.version for v in await versions("w", "SOUL.md", 2)] == [5, 4]  # newest first
    assert [v.version for v in await versions("w", "SOUL.md", 2, 4)] == [1]
    reminders = storage.reminders.active_page
    first, rest = await reminders(3), await reminders(3, 3)
    assert len(first) == 3 and len(rest) == 2
    assert [r.user_id for r in first + rest] == ["u0", "u0", "u0", "u1", "u1"]  # by user
    approved = [u.user_id for u in await storage.access.approved_page(2, 1)]
    assert approved == ["p1", "p2"]  # oldest approval first
    facts = [f.text for f in await storage.memory.facts_page("w", 10)]
    assert sorted(facts) == [f"fact {n}" for n in range(5)]  # only this workspace's
    assert len(await storage.memory.facts_page("w", 2, 4)) == 1
    recent = await storage.sessions.recent(2)
    assert [s.key.chat_id for s in recent] == ["c4", "c3"] and recent[0].messages == 1
    assert [s.key.chat_id for s in await storage.sessions.recent(2, 4)] == ["c0"]


# --- admin page: login links and sessions ----------------------------------------------


async def test_a_login_link_is_used_once_and_then_says_so(storage: Storage) -> None:
    admin = storage.admin
    await admin.add_token("h1", "link", "cli", T0, T0 + timedelta(minutes=10))
    assert (await admin.check_link("h1", T0)).state == "valid"
    used = await admin.use_link("h1", T0 + timedelta(minutes=1))
    assert (used.state, used.admin) == ("valid", "cli")  # this call redeemed it
    again = await admin.use_link("h1", T0 + timedelta(minutes=2))
    assert (again.state, again.admin) == ("used", "cli")
    assert (await admin.check_link("h1", T0)).state == "used"
    assert (await admin.check_link("nope", T0)).state == "unknown"
    await admin.add_token("h2", "link", "cli", T0, T0 + timedelta(minutes=10))
    late = await admin.use_link("h2", T0 + timedelta(minutes=10))
    assert late.state == "expired"
    assert await admin.session("h2", T0, T0 + timedelta(hours=1)) is None  # a link is no session


async def test_a_session_slides_and_ends(storage: Storage) -> None:
    admin = storage.admin
    await admin.add_token("s1", "session", "telegram:1", T0, T0 + timedelta(hours=12))
    await admin.add_token("s2", "session", "cli", T0, T0 + timedelta(hours=12))
    later = T0 + timedelta(hours=11)
    assert await admin.session("s1", later, later + timedelta(hours=12)) == "telegram:1"
    # Used at 11 h, so still alive at 20 h; s2 was idle past 12 h.
    at20 = T0 + timedelta(hours=20)
    assert await admin.session("s1", at20, at20 + timedelta(hours=12)) == "telegram:1"
    assert await admin.session("s2", at20, at20 + timedelta(hours=12)) is None
    assert await admin.session("link-hash", at20, at20) is None
    assert await admin.end_sessions("s1") == 1
    assert await admin.session("s1", at20, at20 + timedelta(hours=1)) is None
    await admin.add_token("s3", "session", "cli", at20, at20 + timedelta(hours=12))
    await admin.add_token("l1", "link", "cli", at20, at20 + timedelta(minutes=10))
    assert await admin.end_sessions() == 2  # every session row (s2 lapsed); links stay
    assert (await admin.check_link("l1", at20)).state == "valid"


async def test_prune_summarized_forgets_old_folded_messages_only(storage: Storage) -> None:
    sessions = storage.sessions
    await sessions.append(KEY, [{"role": "user", "content": f"m{n}"} for n in range(3)])
    ids = [i for i, _ in await sessions.history_rows(KEY)]
    soon = utcnow() + timedelta(seconds=1)
    assert await sessions.prune_summarized(soon) == 0  # no summary: all unsummarized
    await sessions.save_summary(KEY, "folded", ids[1])
    assert await sessions.prune_summarized(utcnow() - timedelta(minutes=1)) == 0  # recent
    assert await sessions.prune_summarized(soon) == 2
    assert [m["content"] for m in await sessions.history(KEY)] == ["m2"]
    assert await sessions.summary(KEY) == ("folded", ids[1])


async def test_prune_speakers_keeps_only_those_a_fold_will_read(storage: Storage) -> None:
    """A speaker row outlives neither its message (``/new``) nor the fold covering it."""
    sessions, memory = storage.sessions, storage.memory
    other = ChatKey("telegram", "200")
    for key in (KEY, other):
        await sessions.append(key, [{"role": "user", "content": f"m{n}"} for n in range(3)])
    ids = {key: [i for i, _ in await sessions.history_rows(key)] for key in (KEY, other)}
    for key in (KEY, other):
        for row in ids[key]:
            await memory.note_speaker(key, row, "u1")
    assert await memory.prune_speakers() == 0
    await sessions.save_summary(KEY, "folded", ids[KEY][1])  # the first two are covered
    assert await memory.prune_speakers() == 2
    assert await memory.speakers(KEY, 0, 10**9) == {ids[KEY][2]: "u1"}
    await sessions.clear(other)
    assert await memory.prune_speakers() == 3
    assert await memory.speakers(other, 0, 10**9) == {}
    assert await memory.speakers(KEY, 0, 10**9) == {ids[KEY][2]: "u1"}
