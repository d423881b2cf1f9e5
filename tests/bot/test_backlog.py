"""Messages said while the bot was away: past the grace not answered, within it answered
with a note that the answer is late; live messages and follow-ups untouched. One a
previous run heard as it came is answered late saying the bot restarted, never that it
was offline."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.dispatcher.backlog import Backlog
from bot.messages import ChatKey, InboundMessage, MessageKind, inbound_from_json, to_json
from channels.base import CAUGHT_UP

STARTED = datetime(2026, 1, 10, 12, 0, tzinfo=UTC)
KEY = ChatKey("telegram", "1")


def backlog(now: datetime = STARTED, started: datetime = STARTED) -> Backlog:
    """The run started at ``started``, at ``now``."""
    return Backlog(timedelta(hours=24), started=started, clock=lambda: now)


def said(ago: timedelta, now: datetime = STARTED, **kw: object) -> InboundMessage:
    return InboundMessage(KEY, "7", "hi", received_at=now - ago, **kw)  # type: ignore[arg-type]


async def journaled(run: Backlog, msg: InboundMessage) -> InboundMessage:
    """``msg`` as ``run`` hands it to the inbox, and as any later run reads it back."""
    rows: list[str] = []

    async def journal(m: InboundMessage) -> None:
        rows.append(to_json(m))

    await run.screen(journal)(msg)
    [row] = rows
    return inbound_from_json(row)


async def test_a_message_older_than_the_grace_is_not_journaled_a_younger_one_is() -> None:
    journaled: list[str] = []

    async def journal(msg: InboundMessage) -> None:
        journaled.append(msg.message_id)

    put = backlog().screen(journal)
    old, recent = said(timedelta(hours=30)), said(timedelta(hours=2))
    await put(old)
    await put(recent)
    assert journaled == [recent.message_id]


async def test_the_answer_to_a_message_said_while_away_says_it_is_late() -> None:
    away = await journaled(backlog(), said(timedelta(hours=2, minutes=5)))
    assert backlog().late_note(away) == (
        "(Late answer: I was offline when your message came, 2 h 5 min ago.)\n\n"
    )
    three = await journaled(backlog(), said(timedelta(minutes=3)))
    assert "3 min ago" in backlog().late_note(three)
    blink = await journaled(backlog(), said(timedelta(seconds=20)))
    assert backlog().late_note(blink) == ""  # a restart's blink


def test_live_messages_and_follow_ups_are_never_late_nor_dropped() -> None:
    later = STARTED + timedelta(hours=50)
    slow = said(timedelta(minutes=5), now=later)  # said after the start, queued a while
    assert backlog(later).late_note(slow) == "" and not backlog(later).too_old(slow)
    followup = said(timedelta(hours=30), kind=MessageKind.SCHEDULED)
    assert backlog().late_note(followup) == "" and not backlog().too_old(followup)


async def test_a_message_read_back_after_a_gap_mid_run_counts_as_said_while_away() -> None:
    later = STARTED + timedelta(hours=5)
    caught = said(timedelta(minutes=10), now=later, extras={CAUGHT_UP: True})
    assert "10 min ago" in backlog(later).late_note(await journaled(backlog(later), caught))
    assert backlog(later + timedelta(hours=30)).too_old(caught)


async def test_a_message_heard_live_and_answered_after_a_restart_says_so() -> None:
    """The run before this one journaled it as it came and started answering; a restart
    cut that off and this run answers it from the inbox 3 minutes on: the bot was
    online when it came, so the note says the answer is late for the restart."""
    before = backlog(STARTED - timedelta(minutes=2), started=STARTED - timedelta(hours=1))
    heard = await journaled(before, said(timedelta(minutes=2)))
    assert before.late_note(heard) == ""  # answered by that run in time: no note
    assert backlog(STARTED + timedelta(minutes=1)).late_note(heard) == (
        "(Sorry for the delay: I was restarted before I could answer.)\n\n"
    )
    quick = STARTED - timedelta(minutes=1, seconds=30)  # back and answered within the minute
    assert backlog(quick, started=quick).late_note(heard) == ""


async def test_a_message_stamped_in_the_second_the_bot_started_was_not_missed() -> None:
    """Telegram stamps whole seconds: a message that came 0.4 s after a start at
    12:00:00.6 reads as 12:00:00, before it. Answered late by that run (behind a slow
    turn) it has no note; cut off by a restart, its answer says the bot restarted."""
    start = STARTED + timedelta(milliseconds=600)
    heard = await journaled(backlog(start, started=start), said(timedelta(0)))
    assert backlog(start + timedelta(minutes=3), started=start).late_note(heard) == ""
    restarted = backlog(STARTED + timedelta(minutes=3), started=STARTED + timedelta(minutes=2))
    assert restarted.late_note(heard) == (
        "(Sorry for the delay: I was restarted before I could answer.)\n\n"
    )


async def test_a_message_said_while_away_is_still_said_so_after_another_restart() -> None:
    """Journaled by the run that caught up on it; that run's turn was cut off too."""
    caught = await journaled(backlog(), said(timedelta(minutes=30)))
    again = backlog(STARTED + timedelta(minutes=6), started=STARTED + timedelta(minutes=5))
    assert again.late_note(caught) == (
        "(Late answer: I was offline when your message came, 36 min ago.)\n\n"
    )
