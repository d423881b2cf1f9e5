"""/stop: a person ends the turn that is answering them, while it runs.

A command waits in its chat's lane like any message, so it would run only after the turn
it means to stop. The dispatcher therefore looks at a /stop as it arrives, before its
lane, and cancels that turn at once; the /stop then runs in the lane as an ordinary
command, after the turn it ended, and its reply says whether anything was stopped.

The cancellation is the lane worker's own (a task per turn would cost each turn a task,
and the reads its start made ahead for it, which belong to the task that counted it), and
it can only land inside the turn: the worker is suspended in it, and nothing else runs
until it resumes there. The turn's end takes it back (``Task.uncancel``), so the worker
and the messages queued behind it go on; a shutdown or a lost lease arriving at the same
time still cancels the worker. Only the person whose message is being
answered may stop it: in a group, someone else's /stop must not end their turn. A
stopped message is finished: it is not run again after a restart, and what its turn
stored is forgotten (as for a message given up), so its words do not reach the model
with the chat's next message. What its tools already did stays done.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.handlers.commands import Command, parse_command
from bot.lru import LRU
from bot.messages import ChatKey, InboundMessage

log = logging.getLogger(__name__)

STOP = "stop"
# The cancellation's message (CancelledError.args): the turn was stopped by its person,
# not by a shutdown, so a streamed preview of its answer goes too (nothing will replace it).
STOPPED_BY_USER = "stopped by /stop"
KEPT = 1_024  # /stop messages remembered until their reply is written
STOPPED = "Stopped. I set that message aside: it gets no answer and is not part of our chat."
NOTHING = "Nothing to stop: no answer to a message of yours is being written here."


def ended_by_stop(exc: BaseException) -> bool:
    """Whether ``exc`` (a turn's CancelledError) is a /stop's, not a shutdown's."""
    return isinstance(exc, asyncio.CancelledError) and exc.args == (STOPPED_BY_USER,)


@dataclass(slots=True)
class _Running:
    message_id: str
    user_id: str
    task: asyncio.Task[object]  # the lane worker running the turn
    stopped: bool = False


class TurnStops:
    def __init__(self) -> None:
        self._running: dict[ChatKey, _Running] = {}
        self._asked: LRU[str, str] = LRU(KEPT)  # /stop message id -> the message it meant
        self._ended: LRU[str, None] = LRU(KEPT)  # messages whose turn a /stop ended

    @staticmethod
    def asks_to_stop(msg: InboundMessage) -> bool:
        """A person's own /stop (a follow-up's prompt is never a command)."""
        parsed = parse_command(msg.text) if msg.from_person else None
        return parsed is not None and parsed[0] == STOP

    def stop(self, msg: InboundMessage) -> None:
        """On arrival of ``msg`` (a /stop): cancel the turn answering its sender in its
        chat, if one is running here."""
        running = self._running.get(msg.key)
        if running is None or running.user_id != msg.user_id or running.stopped:
            return
        self._asked[msg.message_id] = running.message_id
        running.stopped = True
        running.task.cancel(STOPPED_BY_USER)
        log.info("message %s in %s: its turn stopped by /stop", running.message_id, msg.key)

    async def run(self, msg: InboundMessage, turn: Callable[[], Awaitable[None]]) -> bool:
        """Run ``msg``'s turn in this task; True if a /stop ended it (a cancellation of
        this task for any other reason still raises)."""
        task = asyncio.current_task()
        assert task is not None, "a turn runs in a task"
        running = _Running(msg.message_id, msg.user_id, task)
        self._running[msg.key] = running
        try:
            await turn()
            if running.stopped:
                task.uncancel()  # the turn swallowed it and answered anyway
            return False
        except asyncio.CancelledError:
            if not running.stopped or task.uncancel() > 0:
                raise  # a shutdown, a lease lost (perhaps besides the /stop)
            self._ended[msg.message_id] = None
            return True
        finally:
            if self._running.get(msg.key) is running:
                del self._running[msg.key]

    async def reply(self, msg: InboundMessage, args: str) -> str:
        """The /stop command, run in its lane after the turn it ended."""
        meant = self._asked.pop(msg.message_id)
        return STOPPED if meant is not None and meant in self._ended else NOTHING

    def command(self) -> Command:
        return Command(STOP, "/stop", "stop the answer being written to your message", self.reply)
