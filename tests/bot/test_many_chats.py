"""Many chats: what the daemon keeps in memory per chat is bounded, and a chat whose
history fell out of memory sends the model the very same request as one that never did.
"""

from __future__ import annotations

import gc
import hashlib
import json
import re
import shutil
import tracemalloc
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import bot.store.reminders as reminders_store
import bot.store.sessions as sessions_store
from bot.agent.context import SentForms
from bot.agent.history import SentTails
from bot.app import build_daemon
from bot.bus.base import InProcessBus
from bot.config.workspaces import WorkspacesSettings
from bot.daemon import Daemon
from bot.dispatcher import middlewares, ratelimit
from bot.lru import LRU
from bot.messages import ChatKey, InboundMessage
from bot.store.base import Storage
from bot.store.db import Database
from bot.store.sessions import SessionStore
from bot.store.sqlite import sqlite_storage
from bot.store.tails import TailCache, footprint
from bot.workspaces import routing
from bot.workspaces.folders import Workspaces
from tests.conftest import make_settings
from tests.fakes.channel import FakeChannel
from tests.fakes.llm_server import FakeLLM, RecordedRequest, Reply, completion_body

CHAT = "c-long"
# The one line of a request that names the moment it was made (the runtime block's
# clock, README: "the runtime block"): masked, everything else compared byte for byte.
_NOW = re.compile(rb"Current time: [0-9T:+-]+")


def _answer(request: Any) -> Reply:
    """``final_result`` echoing the user, its call id made from the text: two daemons
    given the same messages store the same history (the fake's counter would not)."""
    users = [m for m in request["messages"] if m.get("role") == "user"]
    text = str(users[-1]["content"]).split("\n\n[Runtime Context", 1)[0]
    call = {
        "id": "call_" + hashlib.sha256(text.encode()).hexdigest()[:16],
        "type": "function",
        "function": {"name": "final_result", "arguments": json.dumps({"answer": f"echo: {text}"})},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call], "refusal": None}
    return Reply(body=completion_body(message, finish_reason="tool_calls"))


def _small_tails(rows: int = 20_000, size: int = 24 << 20) -> Callable[[Database], Storage]:
    def stores(db: Database) -> Storage:
        sessions = SessionStore(db, tail_rows=rows, tail_bytes=size)
        return replace(sqlite_storage(db), sessions=sessions)

    return stores


async def _talk(daemon: Daemon, chat: FakeChannel, llm: FakeLLM) -> tuple[bytes, bool]:
    """Five turns in CHAT, each followed by one in another chat; then CHAT's sixth turn.
    Its request body, and whether CHAT's history was still in memory before it."""
    for n in range(5):
        assert (await chat.ask(f"turn {n}", chat=CHAT, user="u-long")).text == f"echo: turn {n}"
        other = await chat.ask(f"elsewhere {n}", chat=f"c-other-{n}", user=f"u-{n}")
        assert other.text == f"echo: elsewhere {n}"
    sessions = daemon.sessions
    sid = await sessions.session_id(ChatKey(chat.name, CHAT))
    cached = sessions._tails.newest(sid, None) is not None  # type: ignore[attr-defined]
    seen = len(llm.requests)
    assert (await chat.ask("the sixth", chat=CHAT, user="u-long")).text == "echo: the sixth"
    (request,) = [r for r in llm.requests[seen:] if _chat_of(r) == CHAT]
    return request.body, cached


def _chat_of(request: RecordedRequest) -> str:
    last = request.json["messages"][-1]["content"]
    found = re.search(r"Chat ID: (\S+)", str(last))
    return found.group(1) if found else ""


@pytest.mark.parametrize(
    "small", [_small_tails(rows=4), _small_tails(size=6_000)], ids=["rows", "bytes"]
)
async def test_a_chat_evicted_from_memory_sends_the_same_request(
    tmp_path: Path, small: Callable[[Database], Storage]
) -> None:
    bodies: dict[str, tuple[bytes, bool]] = {}
    async with FakeLLM(_answer) as llm:
        for label, stores in (("kept", sqlite_storage), ("evicted", small)):
            chat = FakeChannel()
            # The same data_dir (the prompt names its workspace's path), emptied between.
            settings = make_settings(tmp_path / "data", llm.url)
            daemon = build_daemon(settings, [chat], stores=stores)
            await daemon.start()
            try:
                bodies[label] = await _talk(daemon, chat, llm)
            finally:
                await daemon.stop(timeout=2)
            shutil.rmtree(tmp_path / "data")
    (kept, was_kept), (evicted, was_evicted) = bodies["kept"], bodies["evicted"]
    assert was_kept and not was_evicted  # the second read its history from the database
    assert b"turn 4" in kept and b"echo: turn 4" in kept
    assert _NOW.sub(b"", kept) == _NOW.sub(b"", evicted)
    assert len(_NOW.findall(kept)) == 1


def test_the_sent_history_carried_per_session_stays_within_its_bounds() -> None:
    """The runner's carried history (bot/agent/history.py): at most max_sessions sessions
    and max_rows rows; a session that fell out is derived again to the same messages."""
    tails = SentTails(SentForms(16_000), max_sessions=3, max_rows=10)

    def rows(session: int, n: int) -> list[tuple[int, dict[str, Any]]]:
        return [
            (session * 100 + i, {"role": "user" if i % 2 == 0 else "assistant", "content": str(i)})
            for i in range(n)
        ]

    first = tails.history("s0", rows(0, 4), 0)
    for s in range(1, 6):
        tails.history(f"s{s}", rows(s, 4), 0)
        assert tails.sessions <= 3 and tails.rows <= 10
    again = tails.history("s0", rows(0, 4), 0)  # fell out: derived afresh
    assert again.messages == first.messages and again.turns == first.turns
    assert tails.rows <= 10
    alone = tails.history("big", rows(9, 30), 0)  # one session over the row bound stays
    assert len(alone.messages) == 30 and tails.sessions == 1


def _long_rows(session: int, n: int, chars: int = 16_000) -> list[tuple[int, dict[str, Any]]]:
    """Messages as long as a tool result may be stored (Cyrillic: 2 bytes a character)."""
    return [
        (session * 100 + i, {"role": "user" if i % 2 == 0 else "assistant", "content": text})
        for i in range(n)
        for text in [f"{session}-{i} " + "ж" * chars]
    ]


def _held_by(build: Callable[[], object]) -> tuple[object, int]:
    """What ``build`` returns and the bytes still allocated for it once it returned."""
    gc.collect()
    tracemalloc.start()
    try:
        held = build()
        gc.collect()
        size, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return held, size


def test_a_rows_footprint_is_the_memory_it_holds() -> None:
    row, size = _held_by(lambda: _long_rows(1, 1)[0])
    assert 0.9 * size <= footprint(row) <= 1.1 * size


def test_the_tail_cache_is_bounded_in_bytes_however_long_the_messages() -> None:
    """200 sessions of two 32 KB messages: 12.8 MB by rows alone (400 of 20,000);
    held within the 1 MB byte bound, measured as the memory the cache keeps."""
    bound = 1 << 20

    def fill() -> TailCache:
        cache = TailCache(max_rows=20_000, max_bytes=bound)
        for sid in range(200):
            cache.load(sid, _long_rows(sid, 2), complete=True, keep=None)
        return cache

    cache, held = _held_by(fill)
    assert isinstance(cache, TailCache)
    assert cache.bytes <= bound and held <= 1.1 * bound
    assert 0 < cache.size < 40
    assert cache.newest(199, None) is not None  # the newest session is the one kept
    assert cache.newest(0, None) is None


def test_the_sent_history_is_bounded_in_bytes_however_long_the_messages() -> None:
    bound = 1 << 20
    forms = SentForms(16_000, max_bytes=bound)
    tails = SentTails(forms, max_bytes=bound)
    first = tails.history("s0", _long_rows(0, 2), 0)
    for s in range(1, 200):
        tails.history(f"s{s}", _long_rows(s, 2), 0)
        assert tails.bytes <= bound and forms.bytes <= bound
    assert tails.sessions < 40
    again = tails.history("s0", _long_rows(0, 2), 0)  # fell out: derived afresh
    assert again.messages == first.messages


def test_an_lru_keeps_its_most_recently_used_entries() -> None:
    lru: LRU[str, int | None] = LRU(2)
    lru["a"], lru["b"] = 1, None
    assert lru.get("a") == 1  # "a" is now the most recent
    assert "b" in lru and lru["b"] is None  # a None value is a value
    lru["c"] = 3  # "a" was used after "b"... and "b" read last: "a" goes
    assert list(lru) == ["b", "c"] and len(lru) == 2
    assert lru.pop("b") is None and lru.pop("missing") is None and len(lru) == 1
    with pytest.raises(ValueError):
        LRU(0)


async def test_per_chat_and_per_user_caches_stay_within_their_bounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twelve chats through a daemon whose per-chat caches hold a few entries each; a
    chat whose entries went is answered as before."""
    monkeypatch.setattr(sessions_store, "CACHED_SESSIONS", 3)
    monkeypatch.setattr(reminders_store, "CACHED_USERS", 3)
    built: list[Storage] = []

    def stores(db: Database) -> Storage:
        built.append(_small_tails(8)(db))
        return built[-1]

    async with FakeLLM() as llm:
        chat = FakeChannel()
        daemon = build_daemon(make_settings(tmp_path, llm.url), [chat], stores=stores)
        await daemon.start()
        try:
            for n in range(12):
                reply = await chat.ask(f"hello {n}", chat=f"c{n}", user=f"u{n}")
                assert reply.text == f"echo: hello {n}"
            sessions: Any = daemon.sessions
            zones: Any = built[0].user_settings
            sent: Any = daemon.runner._sent  # type: ignore[attr-defined]
            assert len(sessions._ids) <= 3 and len(sessions._summaries) <= 3
            assert sessions._tails.size <= 8
            assert len(zones._zones) <= 3
            assert sent.sessions <= 2_000 and sent.rows <= 20_000
            again = await chat.ask("hello again", chat="c0", user="u0")  # long evicted
            assert again.text == "echo: hello again"
        finally:
            await daemon.stop(timeout=2)


async def test_the_chosen_workspace_is_kept_for_a_bounded_number_of_chats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(routing, "CACHED_CHATS", 3)
    storage = sqlite_storage(tmp_path / "bot.db")
    await storage.backend.open()
    try:
        router = routing.WorkspaceRouter(
            WorkspacesSettings(), storage.workspaces, Workspaces(tmp_path / "workspaces")
        )
        await router.use(ChatKey("t", "c0"), "team", set_by="test", create=True)
        for n in range(1, 10):
            assert await router.chosen(ChatKey("t", f"c{n}")) is None
        assert len(router._chosen) <= 3  # type: ignore[attr-defined]
        assert await router.chosen(ChatKey("t", "c0")) == "team"  # read again
    finally:
        await storage.backend.close()


async def test_senders_told_about_a_limit_are_remembered_up_to_a_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ratelimit, "TOLD_KEPT", 3)
    bus = InProcessBus()
    limit = ratelimit.RateLimit(
        bus,
        ratelimit.TokenBuckets(1, 60, clock=lambda: 0.0),
        exempt=lambda m: False,
        may_answer=lambda m: True,
    )
    for n in range(10):

        def msg(n: int = n) -> InboundMessage:
            return InboundMessage(ChatKey("t", f"c{n}"), f"u{n}", "hi")

        assert await limit(msg()) and not await limit(msg())  # over: told once
        assert not await limit(msg())
    assert bus.outbound_depth() == 10
    assert len(limit._told) <= 3  # type: ignore[attr-defined]


async def test_strangers_told_they_are_not_allowed_are_remembered_up_to_a_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(middlewares, "TOLD_KEPT", 3)
    bus = InProcessBus()
    access = middlewares.AccessControl(bus, {"t": ["friend"]}, admins=[], trusted_channels=())
    for n in range(10):
        msg = InboundMessage(ChatKey("t", f"c{n}"), f"stranger{n}", "hi", direct=True)
        assert not await access(msg) and not await access(msg)  # told once
    assert bus.outbound_depth() == 10
    assert len(access._told) <= 3  # type: ignore[attr-defined]
