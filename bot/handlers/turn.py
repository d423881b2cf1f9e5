"""One turn per inbound message: a command or an agent run, answered, counted and timed.

Kept out of :mod:`bot.daemon` so the wiring module is only about building, starting
and stopping parts, while the rules of a turn (typing indicator, command dispatch,
turning model failures into user-facing messages) live in one place. It imports no
concrete channel or tool: the daemon passes in what a turn needs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any

from bot.agent.effects import Acted, done_before
from bot.agent.llm.credentials import CONFIGURE_HINT
from bot.agent.runner import AgentRunner
from bot.bus.base import Bus
from bot.dispatcher.stops import StoppedAfter, ended_by_stop
from bot.errors import (
    CredentialsRejectedError,
    FencedOff,
    ModelNotConfiguredError,
    ModelUnavailableError,
    PromptTooLongError,
    ToolError,
)
from bot.handlers.commands import CommandRouter
from bot.messages import Attachment, InboundMessage, OutboundKind, OutboundMessage, new_id
from bot.ops.metrics import Metrics
from bot.streaming.preview import PreviewStream
from bot.streaming.service import Streaming
from channels.base import Channel, MarksWorking, SupportsTyping, can_type

log = logging.getLogger(__name__)

TYPING_REFRESH_S = 4.0  # platforms show "typing" for about 5 s per call
# A turn answered sooner than this shows no indicator: it would only cost a platform
# call (one more HTTP request per message) for a "typing" the user never sees.
TYPING_AFTER_S = 1.0
# A configuration error: the message was forgotten, not kept for the next turn.
NOT_PROCESSED = "Your message was not processed: send it again once this is fixed."
# After what a failed turn's tools did (bot/agent/effects.py): asked again, they would
# do it twice. Kept: the history holds the calls; forgotten: it holds nothing of them.
DONE_KEPT = "That stays done: no need to ask for it again."
DONE_FORGOTTEN = (
    "That stays done, though our chat keeps no note of it: no need to ask for it again."
)


class TurnHandler:
    """Answers one inbound message; the dispatcher calls :meth:`handle` per message."""

    def __init__(
        self,
        *,
        bus: Bus,
        commands: CommandRouter,
        runner: AgentRunner,
        channels: Mapping[str, Channel],
        metrics: Metrics,
        typing_after_s: float = TYPING_AFTER_S,
        late_note: Callable[[InboundMessage], str] = lambda _msg: "",
        streaming: Streaming | None = None,
    ) -> None:
        self.streaming = streaming  # None: no channel streams (every answer sent whole)
        self.bus = bus
        self.late_note = late_note  # said while the bot was away: the answer says so
        self.typing_after_s = typing_after_s
        self.commands = commands
        self.runner = runner
        self.channels = channels
        self.metrics = metrics

    async def handle(self, msg: InboundMessage) -> None:
        """One turn: a command if it is one, else the agent; counted and timed."""
        self.metrics.message_in(msg.key.channel)
        matched = self.commands.match(msg)
        started = time.perf_counter()
        outcome = "error"  # raised: the dispatcher apologizes with an error id
        try:
            if matched is not None:
                command, args = matched
                try:
                    text = await command.func(msg, args)
                    outcome = "ok"
                except ToolError as exc:
                    text, outcome = f"Error: {exc}", "tool_error"
                if text:
                    await self.reply(msg, text)
            else:
                outcome = await self._agent_turn(msg)
        except asyncio.CancelledError as exc:
            # A shutdown (the message stays in the inbox), or its person's /stop.
            outcome = "stopped" if ended_by_stop(exc) else "cancelled"
            raise
        finally:
            kind = "agent" if matched is None else "command"
            self.metrics.turn(msg.key.channel, kind, outcome, time.perf_counter() - started)

    async def _agent_turn(self, msg: InboundMessage) -> str:
        preview = await self.streaming.open(msg) if self.streaming is not None else None
        acted = Acted()
        try:
            return await self._answer(msg, preview, acted)
        except asyncio.CancelledError as exc:
            if ended_by_stop(exc):
                await self._stopped(msg, preview)
                if acted.effects:
                    await self._set_aside(msg, acted)
                    raise StoppedAfter(acted.lines()) from exc
            raise
        except FencedOff:
            raise  # the chat's new owner adopted the preview: left to it (abandoned below)
        except Exception:
            if preview is not None:
                await preview.discard()
            raise
        finally:
            if preview is not None:  # an answer queued it already; else kept for a replay
                await preview.abandon()

    async def _stopped(self, msg: InboundMessage, preview: PreviewStream | None) -> None:
        """A /stop ended the turn: no answer will replace its preview or take its
        working mark off, so both go now (a stream its person stopped in the chat stays
        as they stopped it)."""
        if preview is not None and not preview.stopped_in_chat:
            await preview.discard()
        channel = self.channels.get(msg.key.channel)
        if isinstance(channel, MarksWorking):
            try:
                await channel.done_working(msg.key, msg.message_id)
            except Exception as exc:  # cosmetic: never fail the stop over it
                log.info("working mark in %s not taken off: %s", msg.key, exc)

    async def _set_aside(self, msg: InboundMessage, acted: Acted) -> None:
        """A stopped turn's tools acted: the chat keeps its message and a note of it."""
        try:
            await self.runner.set_aside(msg, acted)
        except Exception as exc:  # stored whole, or forgotten: legal either way
            log.warning("stopped turn in %s: its note not stored: %s", msg.key, exc)

    async def _answer(
        self, msg: InboundMessage, preview: PreviewStream | None, acted: Acted
    ) -> str:
        try:
            async with self.typing(msg):
                shown = None if preview is None or not preview.shows else preview
                outcome = await self.runner.run_turn(msg, shown, acted)
        except CredentialsRejectedError as exc:
            error_id = self._logged(msg, exc)
            text = (
                "The language model refused this bot's credentials, so I cannot answer "
                f"right now (error id {error_id}). {CONFIGURE_HINT.format(env=exc.env)} "
                + NOT_PROCESSED
            )
            await self._failed(msg, _with_done(text, acted.lines(), DONE_FORGOTTEN), preview)
            return "model_not_configured"
        except ModelNotConfiguredError as exc:
            # Built from the model's name and fixed hints only: how to configure it.
            text = _with_done(f"{exc} {NOT_PROCESSED}", acted.lines(), DONE_FORGOTTEN)
            await self._failed(msg, text, preview)
            return "model_not_configured"
        except ModelUnavailableError as exc:
            error_id = self._logged(msg, exc)
            await self._failed(msg, _unavailable(exc, error_id, acted.lines()), preview)
            return "model_unavailable"
        extras: dict[str, Any] = {}
        if outcome.structured_data is not None:
            extras["structured_data"] = outcome.structured_data
        if outcome.next_actions:
            extras["next_actions"] = list(outcome.next_actions)
        await self.reply(
            msg, outcome.answer, extras=extras, attachments=outcome.attachments, preview=preview
        )
        return "fallback" if outcome.fallback else "ok"

    async def _failed(self, msg: InboundMessage, text: str, preview: PreviewStream | None) -> None:
        await self.reply(msg, text, OutboundKind.ERROR, preview=preview)

    @staticmethod
    def _logged(msg: InboundMessage, exc: Exception) -> str:
        """Provider text and configuration (an api_base, a key fragment) go to the log,
        which redacts secrets, never into a reply; the id ties the two together."""
        error_id = new_id()[:8]
        log.warning("turn in %s failed (error id %s): %s", msg.key, error_id, exc)
        return error_id

    @contextlib.asynccontextmanager
    async def typing(self, msg: InboundMessage) -> AsyncIterator[None]:
        """Show and refresh the channel's typing indicator once a turn has run for
        ``typing_after_s``, until it ends. A timer, not a sleeping task: most turns end
        before it fires, and then nothing was started that must be cancelled."""
        channel = self.channels.get(msg.key.channel)
        if not can_type(channel):
            yield
            return
        assert isinstance(channel, SupportsTyping)

        async def refresh() -> None:
            while True:
                try:
                    await channel.typing(msg.key, msg.message_id)
                except Exception as exc:  # cosmetic: never fail a turn over it
                    log.debug("typing indicator failed in %s: %s", msg.key, exc)
                await asyncio.sleep(TYPING_REFRESH_S)

        tasks: list[asyncio.Task[None]] = []
        timer = asyncio.get_running_loop().call_later(
            self.typing_after_s, lambda: tasks.append(asyncio.create_task(refresh()))
        )
        try:
            yield
        finally:
            timer.cancel()
            for task in tasks:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def reply(
        self,
        msg: InboundMessage,
        text: str,
        kind: OutboundKind = OutboundKind.REPLY,
        extras: dict[str, Any] | None = None,
        *,
        attachments: tuple[Attachment, ...] = (),
        preview: PreviewStream | None = None,
    ) -> None:
        """Queue an answer to ``msg`` on the bus (durable: the outbox delivers it, and
        its files with it). With a streamed ``preview``, previews stop first and the
        answer replaces it in place."""
        text = self.late_note(msg) + text
        preview_id = await preview.finish() if preview is not None else None
        answer = OutboundMessage.reply(
            msg, text, kind, extras, attachments=attachments, preview_id=preview_id
        )
        await self.bus.put_outbound(answer)


def _unavailable(exc: ModelUnavailableError, error_id: str, done: Sequence[str] = ()) -> str:
    """What a failed model call tells the user: a request the provider refused (or found
    too long) is not helped by waiting, nor is a model its server does not have; an
    outage is. And what the turn's tools did before it failed."""
    if isinstance(exc, PromptTooLongError):
        return _with_done(_too_long(exc, error_id), done, DONE_FORGOTTEN)
    if exc.refused:
        text = (
            f"The language model refused this message (error id {error_id}), so it is not "
            "kept in the conversation and your next message will not carry it; sending it "
            "again the same way will not help: try saying it differently."
        )
        return _with_done(text, done, DONE_FORGOTTEN)
    hint = f"; {exc.hint}" if exc.hint else ""
    if exc.setup:
        text = (
            f"The language model this bot is set up with cannot be used (error id "
            f"{error_id}{hint}). Your message is saved, but waiting will not help: the "
            "bot's setup must be fixed first."
        )
        return _with_done(text, done, DONE_KEPT)
    text = (
        f"The language model is unavailable right now (error id {error_id}{hint}). "
        "Your message is saved; please try again in a little while."
    )
    return _with_done(text, done, DONE_KEPT)


def _too_long(exc: PromptTooLongError, error_id: str) -> str:
    """A message over the model's window even with older turns left out: too long to
    keep; /new is offered only when the request still held some of our conversation."""
    if exc.history:
        return (
            f"Your message together with our conversation is too long for this model "
            f"(error id {error_id}), so it is not kept. Send /new to start a fresh "
            "conversation and then send it again, or send it shorter."
        )
    return (
        f"Your message is too long for this model (error id {error_id}), so it is not "
        "kept in the conversation and your next message will not carry it: please "
        "shorten it or send it in parts."
    )


def _with_done(text: str, done: Sequence[str], after: str) -> str:
    """``text``, then the effects ``done`` (one line each) and ``after`` them."""
    if not done:
        return text
    return f"{text}\n\n{done_before('the error', done)}\n{after}"
