"""The PostgreSQL session store under a replica's fence (the real server, a throwaway
schema): what it keeps in memory (the summary, the unsummarized tail) answers exactly
what the database holds, is trusted only under the fence it was read with, and every
turn write carries the fence check in its own statement (one round trip)."""

from __future__ import annotations

from typing import Any

import pytest

from bot.cluster.fence import fenced
from bot.errors import FencedOff
from bot.messages import ChatKey, InboundMessage, OutboundMessage
from bot.store.base import Storage
from tests.fakes import pg_schema
from tests.fakes.pg_schema import opened, take

KEY = ChatKey("telegram", "42")
LIMIT = 40

url = pg_schema.migrated_url


async def turn(storage: Storage, n: int) -> Any:
    """One turn's writes: the user's message, the answer; what the turn started from."""
    start = await storage.sessions.begin_turn(
        KEY, f"m{n}", {"role": "user", "content": f"q{n}"}, LIMIT
    )
    await storage.sessions.append(
        KEY, [{"role": "assistant", "content": f"a{n}"}], source_id=f"m{n}"
    )
    return start


async def stored_before(storage: Storage, user_row: int) -> list[tuple[int, dict[str, Any]]]:
    """What a fresh read finds before ``user_row``, after the summary's cursor."""
    summary = await storage.sessions.summary(KEY)
    through = summary[1] if summary else 0
    rows = await storage.sessions.history_rows(KEY)
    return [r for r in rows if through < r[0] < user_row][-LIMIT:]


async def test_a_fenced_turn_starts_from_its_kept_tail_which_is_what_the_database_holds(
    url: str,
) -> None:
    a = await take(url, "a")
    async with opened(url) as storage, opened(url) as reader:
        starts = []
        with fenced(a):
            for n in range(5):
                if n == 3:
                    through = starts[1].before[1][0]  # q0 and a0
                    await storage.sessions.save_summary(KEY, "q0 a0", through)
                starts.append(await turn(storage, n))
                assert starts[-1].before == await stored_before(reader, starts[-1].user_row)
                assert not starts[-1].resumed
            assert await storage.sessions.summary(KEY) == ("q0 a0", through)
        # The rows handed to a turn are the same objects the last turn was handed (the
        # prompt builder remembers their sent forms by object).
        assert starts[2].before[0][1] is starts[1].before[0][1]
        assert [m["content"] for _, m in starts[4].before] == ["q1", "a1", "q2", "a2", "q3", "a3"]
        assert [m["content"] for m in await reader.sessions.history(KEY)] == [
            f"{w}{n}" for n in range(5) for w in "qa"
        ]


async def test_a_tail_kept_under_one_fence_is_not_trusted_under_the_next(url: str) -> None:
    """Replica A runs the chat, B takes it over and answers, A takes it back under a new
    token: A's turn starts from what B wrote, not from what A kept."""
    async with opened(url) as a_store, opened(url) as b_store:
        with fenced(await take(url, "a")):
            await turn(a_store, 0)
            await turn(a_store, 1)
        with fenced(await take(url, "b")):
            await turn(b_store, 2)
            await b_store.sessions.save_summary(KEY, "all before b", 2)
        with fenced(await take(url, "a")):
            back = await turn(a_store, 3)
            assert await a_store.sessions.summary(KEY) == ("all before b", 2)
        assert [m["content"] for _, m in back.before] == ["q1", "a1", "q2", "a2"]
        assert back.before == await stored_before(b_store, back.user_row)


async def test_a_replayed_turn_reads_afresh_and_stores_its_message_once(url: str) -> None:
    async with opened(url) as storage:
        with fenced(await take(url, "a")):
            await turn(storage, 0)
            again = await storage.sessions.begin_turn(
                KEY, "m0", {"role": "user", "content": "q0"}, LIMIT
            )
            assert again.resumed and again.before == []
            assert [m["content"] for m in await storage.sessions.history(KEY)] == ["q0", "a0"]
            nxt = await turn(storage, 1)
            assert [m["content"] for _, m in nxt.before] == ["q0", "a0"]


async def test_every_turn_write_is_refused_once_the_lease_moved_on(url: str) -> None:
    msg = InboundMessage(KEY, "u1", "hi", message_id="m9")
    async with opened(url) as storage:
        assert await storage.inbox.accept(msg)
        old = await take(url, "a")
        with fenced(old):
            await turn(storage, 0)
        await take(url, "b")  # the lease moved on: A's token is no longer current
        with fenced(old):
            writes = [
                storage.sessions.begin_turn(KEY, "m1", {"role": "user", "content": "x"}, LIMIT),
                storage.sessions.append(KEY, [{"role": "assistant", "content": "x"}]),
                storage.outbox.add(OutboundMessage.reply(msg, "late")),
                storage.inbox.started(msg),
                storage.inbox.done(msg),
                storage.inbox.accept(InboundMessage(KEY, "u1", "x", message_id="m10")),
                storage.memory.note_speaker(KEY, 1, "u1"),
                storage.previews.save("turn", KEY, "p1"),
            ]
            for write in writes:
                with pytest.raises(FencedOff):
                    await write
        assert [m["content"] for m in await storage.sessions.history(KEY)] == ["q0", "a0"]
        assert await storage.outbox.depth() == 0
        assert [m.message_id for m in await storage.inbox.pending()] == ["m9"]
        assert await storage.previews.get("turn") is None
