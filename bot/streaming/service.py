"""Which turns stream, and the state shared between them (per-chat pauses).

A turn streams when ``[streaming] enabled``, its channel is ``SupportsPreview`` and its
``[channels.<name>] streaming`` is not false. Every other channel is untouched: no
store read, no task, the answer is sent as before.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Collection, Mapping

from bot.config import StreamingSettings
from bot.messages import ChatKey, InboundMessage
from bot.store.base import Previews
from bot.store.previews import turn_of
from bot.streaming.pauses import ChatPauses
from bot.streaming.preview import PreviewPlan, PreviewStream
from channels.base import Channel, can_preview


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
    ) -> None:
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
        if not self.streams(msg.key.channel):
            return None
        channel = self._channels[msg.key.channel]
        assert can_preview(channel)
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
        turn = turn_of(msg)
        return PreviewStream(
            channel,
            plan,
            turn=turn,
            previews=self._previews,
            pauses=self.pauses,
            record=await self._previews.get(turn),
            clock=self._clock,
            runs=self._runs,
            on_stopped=functools.partial(self._end_turn, msg),
        )
