"""How many pieces of database work a turn runs, from inbound to marked sent, and in how
many trips to the database thread.

Each trip is a hand-off to the database thread and back, a fixed CPU cost whatever the
statement; a chat's first turn used to make fifteen. Small pieces may share a trip with
others submitted at the same moment (``Database.run_together``), so the trips a turn
makes depend on what else is running; the pieces do not. Counting them keeps a new
per-turn query from slipping in unnoticed (a count, not a timing)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from bot.store.group import GroupCommit
from tests.fakes.waiting import outbox_settled

# A chat's first turn also looks up its workspace (its session and archived summary
# come with the turn's first piece); the user here has asked before, so the timezone is known.
FIRST_TURN = 11
LATER_TURN = 10
# Every piece but that workspace lookup and the first turn's read of the chat's history
# (rows of unknown number: on the database thread) may share its commit: the journal,
# the turn's reads and writes, and delivery's claim and sent mark.
FIRST_ALONE = {"Database.fetchall.<locals>.<lambda>", "_in_transaction"}
LATER_ALONE: set[str] = set()


def _name(work: Callable[..., Any]) -> str:
    inner = getattr(work, "func", work)
    return str(getattr(inner, "__qualname__", repr(inner)))


async def test_a_turn_runs_a_fixed_few_pieces_of_database_work(
    daemon_factory, monkeypatch: pytest.MonkeyPatch
) -> None:
    daemon, chat = await daemon_factory()
    trips: list[str] = []
    pieces: list[str] = []
    together: set[str] = set()  # the pieces that went through a group (may share a trip)
    real = daemon.db.submit  # every trip goes through it (run awaits it)
    commit = GroupCommit._commit

    def counted(work: Callable[[Any], Any]) -> Any:
        trips.append(_name(work))
        if "group" not in getattr(work, "keywords", {}):  # a shared trip counts below
            pieces.append(_name(work))
        return real(work)

    def shared(self: Any, conn: Any, group: Any) -> Any:
        outcome = commit(self, conn, group)
        named = [_name(item) if callable(item) else "inbox journal" for item in group.items]
        pieces.extend(named)
        together.update(named)
        return outcome

    await chat.ask("warm up")  # the daemon's own first work is not a turn's
    await outbox_settled(daemon.db.path)
    daemon.db.submit = counted  # type: ignore[method-assign]
    monkeypatch.setattr(GroupCommit, "_commit", shared)
    turns = ((FIRST_TURN, FIRST_ALONE, "hello"), (LATER_TURN, LATER_ALONE, "and again"))
    for expected, alone, text in turns:
        trips.clear()
        pieces.clear()
        together.clear()
        reply = await chat.ask(text, chat="c-trips")
        assert reply.text == f"echo: {text}"
        await outbox_settled(daemon.db.path)
        await daemon.runner.consolidator.idle()
        assert len(pieces) == expected, pieces
        assert len(trips) <= len(pieces), trips  # shared trips only ever save some
        assert set(pieces) - together == alone, sorted(together)
