"""What was said while the daemon was away: answered once, late and saying so, or, past
the grace, not at all, the same on every platform.

Channels that read their history after a start (``channels.base.CatchesUp``) read no
further back than the grace; others get a platform's stored backlog handed over by
itself. So the rule lives here, by the platform's own time of each message
(``received_at``): one said before this start (or read back after a gap,
``CAUGHT_UP``) and older than ``reminders.missed_grace_h`` is logged and dropped before
it is journaled; a younger one is marked :data:`SAID_AWAY` as it is journaled, and its
answer begins with a short note that it is late because the bot was offline.

Messages already journaled before a restart are not dropped: they were accepted. The
mark travels in the journal, so one a previous run had heard live (and perhaps started
answering) is never said to have come while the bot was offline: when its answer comes
late, the note says the bot was restarted instead.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import datetime, timedelta

from bot.messages import PERSON_KINDS, InboundMessage, utcnow
from channels.base import CAUGHT_UP

log = logging.getLogger(__name__)

LATE_AFTER = timedelta(minutes=1)  # an answer this much later than the message says so
# An ``InboundMessage.extras`` key: said while nobody listened, judged by the run that
# journaled it first (a later run replaying it from the inbox did not hear it come).
SAID_AWAY = "said_away"
# A platform may stamp a message in whole seconds, and its clock and ours differ a
# little: one stamped this close before the start came while this run was listening.
START_BLUR = timedelta(seconds=2)
OFFLINE = "(Late answer: I was offline when your message came, {ago} ago.)\n\n"
RESTARTED = "(Sorry for the delay: I was restarted before I could answer.)\n\n"
PutInbound = Callable[[InboundMessage], Awaitable[None]]


def _ago(age: timedelta) -> str:
    minutes = int(age.total_seconds() // 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    return f"{hours // 24} d {hours % 24} h"


class Backlog:
    def __init__(
        self,
        grace: timedelta,
        *,
        started: datetime | None = None,
        late_after: timedelta = LATE_AFTER,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self._grace = grace
        self._started = started or clock()
        self._late_after = late_after
        self._clock = clock

    def _before_start(self, msg: InboundMessage) -> bool:
        return msg.received_at < self._started - START_BLUR

    def _missed(self, msg: InboundMessage) -> bool:
        """Said while nobody listened: before this start, or read back after a gap."""
        if msg.kind not in PERSON_KINDS:
            return False  # a follow-up fires now; its own catch-up rules apply
        return self._before_start(msg) or bool(msg.extras.get(CAUGHT_UP))

    def too_old(self, msg: InboundMessage) -> bool:
        return self._missed(msg) and self._clock() - msg.received_at > self._grace

    def late_note(self, msg: InboundMessage) -> str:
        """The line that starts a late answer ("" when it is not late): offline when the
        message came, or, for one a previous run had journaled as it came, restarted."""
        age = self._clock() - msg.received_at
        if msg.kind not in PERSON_KINDS or age < self._late_after:
            return ""
        if msg.extras.get(SAID_AWAY):
            return OFFLINE.format(ago=_ago(age))
        return RESTARTED if self._before_start(msg) else ""

    def screen(self, put: PutInbound) -> PutInbound:
        """``put`` for what is within the grace; the rest is logged and acknowledged."""

        async def put_recent(msg: InboundMessage) -> None:
            if self.too_old(msg):
                log.info(
                    "message %s in %s was said %s ago, while the bot was away: older than "
                    "reminders.missed_grace_h, not answered",
                    msg.message_id,
                    msg.key,
                    _ago(self._clock() - msg.received_at),
                )
                return
            if self._missed(msg):
                msg = replace(msg, extras={**msg.extras, SAID_AWAY: True})
            await put(msg)

        return put_recent
