"""How many trips to the database thread a turn makes, from inbound to marked sent.

Each trip is a hand-off to the database thread and back, a fixed CPU cost whatever the
statement; a chat's first turn used to make fifteen. Counting them keeps a new per-turn
query from slipping in unnoticed (a count, not a timing)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.fakes.waiting import outbox_settled

# A chat's first turn also looks up its workspace (its session and archived summary
# come with the turn's first trip); the user here has asked before, so the timezone is known.
FIRST_TURN = 11
LATER_TURN = 10


async def test_a_turn_makes_a_fixed_few_database_trips(daemon_factory) -> None:
    daemon, chat = await daemon_factory()
    trips: list[str] = []
    real = daemon.db.submit  # every trip goes through it (run awaits it)

    def counted(work: Callable[[Any], Any]) -> Any:
        trips.append(getattr(work, "__qualname__", repr(work)))
        return real(work)

    await chat.ask("warm up")  # the daemon's own first work is not a turn's
    await outbox_settled(daemon.db.path)
    daemon.db.submit = counted  # type: ignore[method-assign]
    for expected, text in ((FIRST_TURN, "hello"), (LATER_TURN, "and again")):
        trips.clear()
        reply = await chat.ask(text, chat="c-trips")
        assert reply.text == f"echo: {text}"
        await outbox_settled(daemon.db.path)
        await daemon.runner.consolidator.idle()
        assert len(trips) == expected, trips
