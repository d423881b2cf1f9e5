"""The contract every channel adapter fulfils.

An adapter normalizes platform updates into InboundMessage and puts them on the bus,
and turns OutboundMessage into platform sends. It holds no agent logic.
"""

from __future__ import annotations

from typing import Protocol

from bot.bus import Bus
from bot.messages import ChatKey, OutboundMessage


class Channel(Protocol):
    name: str
    # Local channels (the terminal) skip allow_from: whoever runs them owns the daemon.
    trusted: bool

    @property
    def connected(self) -> bool:
        """True while the adapter can receive and send (health checks read it)."""
        ...

    async def start(self, bus: Bus) -> None:
        """Connect and begin putting inbound messages on the bus; return once started."""
        ...

    async def send(self, msg: OutboundMessage) -> None:
        """Deliver one message; raise ChannelError when the platform refuses it."""
        ...

    async def typing(self, key: ChatKey) -> None:
        """Show a typing indicator in the chat, where the platform has one."""
        ...

    async def stop(self) -> None: ...
