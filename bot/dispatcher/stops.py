"""/stop: a person ends the turn that is answering them, while it runs, and sets aside
their messages still waiting for their turn in that chat.

A command waits in its chat's lane like any message, so it would run only after the turn
it means to stop. The dispatcher therefore looks at a /stop as it arrives, before its
lane, and cancels that turn at once; the person's messages queued before the /stop are
withdrawn (each is finished without a turn when its lane reaches it), as someone who
says "stop" means everything they asked so far. Messages sent after the /stop, and other
people's, are answered. The /stop then runs in the lane as an ordinary command, after
what it ended, and its reply says how much was stopped.

The cancellation is the lane worker's own (a task per turn would cost each turn a task,
and the reads its start made ahead for it, which belong to the task that counted it), and
it can only land inside the turn: the worker is suspended in it, and nothing else runs
until it resumes there. The turn's end takes it back (``Task.uncancel``), so the worker
and the messages queued behind it go on; a shutdown or a lost lease arriving at the same
time still cancels the worker. Only the person whose message is being
answered may stop it: in a group, someone else's /stop must not end their turn. A
stopped message is finished: it is not run again after a restart, and what its turn
stored is forgotten (as for a message given up), so its words do not reach the model
with the chat's next message. What its tools already did stays done, so a turn stopped
after a tool acted (a reminder created) is not forgotten whole: the stop's reply names
what was done, and the chat keeps the message with a note of it (:class:`StoppedAfter`),
or the model, asked about it next, would know nothing of it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
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
STOPPED_MANY = (
    "Stopped. I set your last {count} messages aside: they get no answer and are not part "
    "of our chat."
)
STOPPED_AFTER = (
    "Stopped: that message gets no answer, but before the stop I had already:\n{done}\n"
    "That stays done, and our chat keeps a note of it."
)
STOPPED_MANY_AFTER = (
    "Stopped. I set your last {count} messages aside: they get no answer, but before the "
    "stop I had already:\n{done}\nThat stays done, and our chat keeps a note of it."
)
NOTHING = "Nothing to stop: no answer to a message of yours is being written here."


class StoppedAfter(asyncio.CancelledError):
    """A /stop's cancellation of a turn whose tools had acted, raised on by its handler
    once the turn's message and a note of ``done`` (one line each) are stored in place
    of its rows: the stop's reply names them, and the turn is not forgotten."""

    def __init__(self, done: Sequence[str]) -> None:
        super().__init__(STOPPED_BY_USER)
        self.done = tuple(done)


def ended_by_stop(exc: BaseException) -> bool:
    """Whether ``exc`` (a turn's CancelledError) is a /stop's, not a shutdown's."""
    return isinstance(exc, asyncio.CancelledError) and exc.args == (STOPPED_BY_USER,)


@dataclass(slots=True)
class _Running:
    message_id: str
    user_id: str
    task: asyncio.Task[object]  # the lane worker running the turn
    stopped: bool = False


def stopped_reply(count: int, done: Sequence[str] = ()) -> str:
    """The /stop's reply when it ended ``count`` of its person's messages, whose tools
    did ``done`` (one line each) before the stop."""
    if count == 0:
        return NOTHING
    if done:
        text = STOPPED_AFTER if count == 1 else STOPPED_MANY_AFTER
        return text.format(count=count, done="\n".join(done))
    return STOPPED if count == 1 else STOPPED_MANY.format(count=count)


class TurnStops:
    def __init__(self) -> None:
        self._running: dict[ChatKey, _Running] = {}
        # A person's messages queued in each chat, not yet begun: message id -> sender.
        self._waiting: dict[ChatKey, dict[str, str]] = {}
        self._withdrawn: LRU[str, None] = LRU(KEPT)  # set aside before their turn began
        self._asked: LRU[str, tuple[str, ...]] = LRU(KEPT)  # /stop id -> the messages it meant
        # Messages a /stop ended or set aside -> what their tools did before it.
        self._ended: LRU[str, tuple[str, ...]] = LRU(KEPT)

    @staticmethod
    def asks_to_stop(msg: InboundMessage) -> bool:
        """A person's own /stop (a follow-up's prompt is never a command)."""
        parsed = parse_command(msg.text) if msg.from_person else None
        return parsed is not None and parsed[0] == STOP

    def queued(self, msg: InboundMessage) -> None:
        """``msg`` joined its chat's lane: a later /stop of its sender may withdraw it."""
        if msg.from_person:
            self._waiting.setdefault(msg.key, {})[msg.message_id] = msg.user_id

    def stop(self, msg: InboundMessage) -> None:
        """On arrival of ``msg`` (a /stop): cancel the turn answering its sender in its
        chat, if one is running here, and withdraw their messages waiting behind it."""
        meant = [*self._cancel_running(msg), *self._withdraw_waiting(msg)]
        if meant:
            self._asked[msg.message_id] = tuple(meant)

    def end(self, msg: InboundMessage) -> None:
        """End the turn answering ``msg`` as its person's /stop would: they stopped the
        answer in the platform's own interface. Their messages behind it still go."""
        running = self._running.get(msg.key)
        if running is not None and running.message_id == msg.message_id:
            self._cancel(running, msg.key, "in the chat")

    def _cancel_running(self, msg: InboundMessage) -> list[str]:
        running = self._running.get(msg.key)
        if running is None or running.user_id != msg.user_id:
            return []
        return [running.message_id] if self._cancel(running, msg.key, "by /stop") else []

    @staticmethod
    def _cancel(running: _Running, key: ChatKey, how: str) -> bool:
        """Cancel ``running``'s turn as a stop (once); False if a stop already did."""
        if running.stopped:
            return False
        running.stopped = True
        running.task.cancel(STOPPED_BY_USER)
        log.info("message %s in %s: its turn stopped %s", running.message_id, key, how)
        return True

    def _withdraw_waiting(self, msg: InboundMessage) -> list[str]:
        waiting = self._waiting.get(msg.key, {})
        theirs = [m for m, user in waiting.items() if user == msg.user_id]
        for message_id in theirs:
            del waiting[message_id]
            self._withdrawn[message_id] = None
        if theirs:
            log.info("%d waiting message(s) in %s set aside by /stop", len(theirs), msg.key)
        return theirs

    def begins(self, msg: InboundMessage) -> bool:
        """``msg``'s lane reached it: False if a /stop withdrew it meanwhile (it is then
        finished without a turn)."""
        waiting = self._waiting.get(msg.key)
        if waiting is not None:
            waiting.pop(msg.message_id, None)
            if not waiting:
                del self._waiting[msg.key]
        if msg.message_id not in self._withdrawn:
            return True
        self._withdrawn.pop(msg.message_id)
        self._ended[msg.message_id] = ()
        return False

    def forsake(self, keep: Callable[[ChatKey], bool]) -> None:
        """The chats ``keep`` selects left this replica, their queued messages with them."""
        for key in [k for k in self._waiting if keep(k)]:
            del self._waiting[key]

    async def run(self, msg: InboundMessage, turn: Callable[[], Awaitable[None]]) -> bool:
        """Run ``msg``'s turn in this task; True if a /stop ended it and what the turn
        stored is to be forgotten: not after its tools acted (:class:`StoppedAfter`), whose
        note stays. A cancellation of this task for any other reason still raises."""
        task = asyncio.current_task()
        assert task is not None, "a turn runs in a task"
        running = _Running(msg.message_id, msg.user_id, task)
        self._running[msg.key] = running
        try:
            await turn()
            if running.stopped:
                task.uncancel()  # the turn swallowed it and answered anyway
            return False
        except asyncio.CancelledError as exc:
            if not running.stopped or task.uncancel() > 0:
                raise  # a shutdown, a lease lost (perhaps besides the /stop)
            done = exc.done if isinstance(exc, StoppedAfter) else ()
            self._ended[msg.message_id] = done
            return not done
        finally:
            if self._running.get(msg.key) is running:
                del self._running[msg.key]

    async def reply(self, msg: InboundMessage, args: str) -> str:
        """The /stop command, run in its lane after the turn it ended."""
        meant = self._asked.pop(msg.message_id) or ()
        ended = [m for m in meant if m in self._ended]
        return stopped_reply(len(ended), [line for m in ended for line in self._ended[m]])

    def command(self) -> Command:
        return Command(STOP, "/stop", "stop answering your messages sent so far", self.reply)
