"""Messages said while the bot was away: past the grace not answered, within it answered
with a note that the answer is late; live messages and follow-ups untouched."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.dispatcher.backlog import Backlog
from bot.messages import ChatKey, InboundMessage, MessageKind
from channels.base import CAUGHT_UP

STARTED = datetime(2026, 1, 10, 12, 0, tzinfo=UTC)
KEY = ChatKey("telegram", "1")


def backlog(now: datetime = STARTED) -> Backlog:
    return Backlog(timedelta(hours=24), started=STARTED, clock=lambda: now)


def said(ago: timedelta, now: datetime = STARTED, **kw: object) -> InboundMessage:
    return InboundMessage(KEY, "7", "hi", received_at=now - ago, **kw)  # type: ignore[arg-type]


async def test_a_message_older_than_the_grace_is_not_journaled_a_younger_one_is() -> None:
    journaled: list[str] = []

    async def journal(msg: InboundMessage) -> None:
        journaled.append(msg.message_id)

    put = backlog().screen(journal)
    old, recent = said(timedelta(hours=30)), said(timedelta(hours=2))
    await put(old)
    await put(recent)
    assert journaled == [recent.message_id]


def test_the_answer_to_a_message_said_while_away_says_it_is_late() -> None:
    assert backlog().late_note(said(timedelta(hours=2, minutes=5))) == (
        "(Late answer: I was offline when your message came, 2 h 5 min ago.)\n\n"
    )
    assert "3 min ago" in backlog().late_note(said(timedelta(minutes=3)))
    assert backlog().late_note(said(timedelta(seconds=20))) == ""  # a restart's blink


def test_live_messages_and_follow_ups_are_never_late_nor_dropped() -> None:
    later = STARTED + timedelta(hours=50)
    slow = said(timedelta(minutes=5), now=later)  # said after the start, queued a while
    assert backlog(later).late_note(slow) == "" and not backlog(later).too_old(slow)
    followup = said(timedelta(hours=30), kind=MessageKind.SCHEDULED)
    assert backlog().late_note(followup) == "" and not backlog().too_old(followup)


def test_a_message_read_back_after_a_gap_mid_run_counts_as_said_while_away() -> None:
    later = STARTED + timedelta(hours=5)
    caught = said(timedelta(minutes=10), now=later, extras={CAUGHT_UP: True})
    assert "10 min ago" in backlog(later).late_note(caught)
    assert backlog(later + timedelta(hours=30)).too_old(caught)
