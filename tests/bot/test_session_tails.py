"""The session store's in-memory tails: exact answers or none, and bounded by rows and
by bytes."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from bot.store.tails import TailCache, footprint


def rows(*ids: int) -> list[tuple[int, dict[str, Any]]]:
    return [(i, {"role": "user", "content": str(i)}) for i in ids]


def test_answers_only_what_it_holds_exactly() -> None:
    tails = TailCache()
    assert tails.newest(1, 5) is None  # nothing loaded: the caller reads the database
    tails.load(1, rows(1, 2, 3), complete=False, keep=3)
    assert tails.newest(1, 2) == rows(2, 3)
    assert tails.newest(1, 3) == rows(1, 2, 3)
    assert tails.newest(1, 4) is None  # older rows may exist beyond the three it holds
    assert tails.newest(1, None) is None
    tails.load(2, rows(7), complete=True, keep=3)
    assert tails.newest(2, 50) == rows(7)  # complete: there is nothing more
    answer = tails.newest(2, None)
    assert answer == rows(7)
    answer.append((9, {}))  # a caller's list is its own
    assert tails.newest(2, None) == rows(7)


def test_extend_keeps_the_newest_and_trim_drops_the_summarized() -> None:
    tails = TailCache()
    tails.extend(1, rows(1))  # not loaded: ignored
    assert tails.newest(1, 1) is None
    tails.load(1, rows(1, 2), complete=True, keep=3)
    tails.extend(1, rows(3, 4))
    assert tails.newest(1, 3) == rows(2, 3, 4)
    assert tails.newest(1, None) is None  # row 1 was let go: no longer complete
    tails.trim(1, 3)
    assert tails.newest(1, 1) == rows(4)
    assert tails.size == 1
    tails.drop(1)
    assert tails.newest(1, 1) is None and tails.size == 0


def test_least_recently_used_sessions_go_once_the_row_budget_is_spent() -> None:
    tails = TailCache(max_rows=4)
    tails.load(1, rows(1, 2), complete=True, keep=None)
    tails.load(2, rows(3, 4), complete=True, keep=None)
    assert tails.newest(1, None) == rows(1, 2)  # session 1 is now the most recent
    tails.load(3, rows(5, 6), complete=True, keep=None)
    assert tails.newest(2, None) is None  # the least recently used went
    assert tails.newest(1, None) == rows(1, 2) and tails.newest(3, None) == rows(5, 6)
    assert tails.size == 4
    tails.extend(3, rows(7))
    assert tails.size <= 4 and tails.newest(3, None) == rows(5, 6, 7)


# One operation on session 0-3: load n rows (complete, keep), extend by n, trim through,
# drop. Row ids only grow, as the database hands them out; texts of varied length.
_OPS = st.lists(
    st.tuples(
        st.sampled_from(["load", "extend", "trim", "drop"]),
        st.integers(0, 3),
        st.integers(0, 6),
        st.booleans(),
        st.sampled_from([None, 2, 4]),
    ),
    max_size=40,
)


@given(_OPS)
def test_the_counts_stay_what_the_tails_hold(
    ops: list[tuple[str, int, int, bool, int | None]],
) -> None:
    """Whatever happens, ``size`` and ``bytes`` are the rows held and their footprint, and
    both stay within their bounds (beyond one session, which is kept however big)."""
    tails = TailCache(max_rows=12, max_bytes=4_000)
    made = 0

    def fresh(n: int) -> list[tuple[int, dict[str, Any]]]:
        nonlocal made
        out = [
            (made + i, {"role": "user", "content": "x" * (37 * (made + i) % 300)}) for i in range(n)
        ]
        made += n
        return out

    for op, sid, n, complete, keep in ops:
        if op == "load":
            tails.load(sid, fresh(n), complete=complete, keep=keep)
        elif op == "extend":
            tails.extend(sid, fresh(n))
        elif op == "trim":
            tails.trim(sid, made - n)
        else:
            tails.drop(sid)
        held = [tails._tails[s].rows for s in tails._tails]
        assert tails.size == sum(len(r) for r in held)
        assert tails.bytes == sum(footprint(row) for r in held for row in r)
        if len(held) > 1:
            assert tails.size <= 12 and tails.bytes <= 4_000


async def test_the_tail_stays_what_the_database_holds_through_real_turns(daemon_factory) -> None:
    """The cached rows are handed to the prompt builder, the governor and litellm on every
    turn; none of them may change them in place (the next turn would send the change)."""
    daemon, chat = await daemon_factory()
    for n in range(6):
        reply = await chat.ask(f"turn {n}", chat="c-tail")
        assert reply.text == f"echo: turn {n}"
    await daemon.runner.consolidator.idle()
    sessions = daemon.sessions
    key = next(k for k in sessions._ids if k.chat_id == "c-tail")
    sid = sessions._ids[key]
    summary = await sessions.summary(key)
    through = summary[1] if summary else 0
    stored = [r for r in await sessions.history_rows(key) if r[0] > through]
    cached = sessions._tails.newest(sid, len(stored))
    assert cached is not None and len(stored) >= 12  # user, final_result call, its result
    assert cached == stored
