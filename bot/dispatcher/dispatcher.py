"""Per-chat workers: strict order within a chat, concurrency across chats.

A turn that raises never kills its worker: the user gets an apology with an error id
and the log gets the traceback under the same id. Every message leaves the inbox
journal once handled (or refused by a filter), so only unfinished turns are replayed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

from bot.bus.base import Bus
from bot.dispatcher.lanes import KeyedSerial
from bot.messages import ChatKey, InboundMessage, OutboundKind, OutboundMessage, new_id

log = logging.getLogger(__name__)

Handler = Callable[[InboundMessage], Awaitable[None]]
# A filter returns True to let the message through; it may reply on its own.
Filter = Callable[[InboundMessage], Awaitable[bool]]


class Dispatcher:
    def __init__(
        self,
        bus: Bus,
        handler: Handler,
        *,
        max_concurrent: int = 64,
        idle_s: float = 300.0,
        filters: Sequence[Filter] = (),
    ) -> None:
        self._bus = bus
        self._handler = handler
        self._filters = list(filters)
        self._workers: KeyedSerial[ChatKey, InboundMessage] = KeyedSerial(
            self._run_turn, max_concurrent=max_concurrent, idle_s=idle_s, name="chat"
        )

    @property
    def active_workers(self) -> int:
        return self._workers.lanes

    @property
    def busy_workers(self) -> int:
        return self._workers.busy

    async def run(self) -> None:
        """Consume the inbound side of the bus until cancelled."""
        while True:
            msg = await self._bus.get_inbound()
            await self.submit(msg)

    async def submit(self, msg: InboundMessage) -> None:
        if self._workers.closing:
            # Left in the inbox journal: answered after the next start.
            log.info("stopping; message %s in %s deferred", msg.message_id, msg.key)
            return
        for keep in self._filters:
            if not await keep(msg):
                await self._bus.inbound_done(msg)
                return
        self._workers.submit(msg.key, msg)

    async def _run_turn(self, msg: InboundMessage) -> None:
        try:
            await self._handler(msg)
        except asyncio.CancelledError:
            raise
        except Exception:
            error_id = new_id()[:8]
            log.exception("turn failed in %s (error id %s)", msg.key, error_id)
            await self._bus.put_outbound(
                OutboundMessage.reply(
                    msg,
                    (
                        "Sorry, something went wrong while handling that message "
                        f"(error id {error_id}). Please try again."
                    ),
                    OutboundKind.ERROR,
                )
            )
        await self._bus.inbound_done(msg)

    async def drain(self, timeout: float) -> bool:
        """Stop taking messages and wait for queued turns; True if all finished in time."""
        return await self._workers.drain(timeout)
