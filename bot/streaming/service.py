"""Which turns stream, and the state shared between them (per-chat pauses).

A turn streams when ``[streaming] enabled``, its channel is ``SupportsPreview`` and its
``[channels.<name>] streaming`` is not false. Every other channel is untouched: no
store read, no task, the answer is sent as before; except a turn answering a message said
before this start, which an earlier run (streaming then) may have left half answered: its
saved preview is looked up, and the answer replaces it instead of standing beside it.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Collection, Mapping
from datetime import datetime

from bot.config import StreamingSettings
from bot.messages import ChatKey, InboundMessage, utcnow
from bot.store.base import Previews
from bot.store.previews import PreviewRecord, turn_of
from bot.streaming.pauses import ChatPauses
from bot.streaming.preview import PreviewPlan, PreviewStream
from channels.base import Channel, SupportsPreview, can_preview


class Streaming:
    def __init__(
        self,
        settings: StreamingSettings,
        channels: Mapping[str, Channel],
        previews: Previews,
        *,
        off: Collection[str] = (),
        clock: Callable[[], float] = time.monotonic,
        runs: Callable[[ChatKey], bool] = lambda _key: True,
        end_turn: Callable[[InboundMessage], None] = lambda _msg: None,
        started: datetime | None = None,
        delivering: Callable[[ChatKey], bool] = lambda _key: False,
    ) -> None:
        # An earlier reply to the chat is still being delivered: no preview posted above it.
        self._delivering = delivering
        # Only a message said before this start can be a turn an earlier run streamed.
        self._started = started or utcnow()
        self._end_turn = end_turn  # a person stopped the stream: their turn ends (/stop)
        self._settings = settings
        self._channels = channels
        self._previews = previews
        self._off = frozenset(off)  # channels whose section says streaming = false
        self._clock = clock
        self._runs = runs  # among replicas: this one still runs the chat
        self.pauses = ChatPauses(clock)

    def streams(self, channel_name: str) -> bool:
        if not self._settings.enabled or channel_name in self._off:
            return False
        return can_preview(self._channels.get(channel_name))

    async def open(self, msg: InboundMessage) -> PreviewStream | None:
        """The preview of the turn answering ``msg``, or None where nothing streams."""
        channel = self._channels.get(msg.key.channel)
        if not can_preview(channel):
            return None
        if not self.streams(msg.key.channel):
            return await self._left_over(msg, channel)
        turn = turn_of(msg)
        return self._stream(msg, channel, turn, await self._previews.get(turn))

    async def _left_over(
        self, msg: InboundMessage, channel: SupportsPreview
    ) -> PreviewStream | None:
        """Streaming is off now, but an earlier run cut off mid-answer (a crash, a stop)
        may have posted this turn's preview: it shows nothing more, and the answer
        replaces it (or a failed turn deletes it) rather than leaving it half written."""
        if msg.received_at >= self._started:
            return None  # said since this start: no earlier run saw it
        turn = turn_of(msg)
        record = await self._previews.get(turn)
        if record is None:
            return None
        return self._stream(msg, channel, turn, record, shows=False)

    def _stream(
        self,
        msg: InboundMessage,
        channel: SupportsPreview,
        turn: str,
        record: PreviewRecord | None,
        *,
        shows: bool = True,
    ) -> PreviewStream:
        settings = self._settings
        configured = settings.private_interval_s if msg.direct else settings.group_interval_s
        plan = PreviewPlan(
            key=msg.key,
            reply_to=msg.message_id,
            interval=channel.preview_interval(msg.key, configured),
            min_chars=settings.min_chars,
            limit=channel.preview_limit(msg.key),
            max_failures=settings.max_failures,
        )
        return PreviewStream(
            channel,
            plan,
            turn=turn,
            previews=self._previews,
            pauses=self.pauses,
            record=record,
            clock=self._clock,
            runs=self._runs,
            on_stopped=functools.partial(self._end_turn, msg),
            shows=shows,
            delivering=self._delivering,
        )
