"""``/approve <code>`` and ``/deny <code>``: an admin answers a stranger's pairing request
from any chat; the stranger is told in the chat they asked from. Admins only."""

from __future__ import annotations

from collections.abc import Callable

from bot.bus.base import Bus
from bot.dispatcher.pairing import Pairing
from bot.errors import ToolError
from bot.handlers.commands import Command, CommandRouter
from bot.messages import InboundMessage, OutboundKind, OutboundMessage
from bot.store.access import PairingRequest

APPROVED = "An admin approved you: I answer your messages now. Please send your request again."
DENIED = "An admin declined your access request."


def register_pairing_commands(
    router: CommandRouter,
    pairing: Pairing,
    bus: Bus,
    is_admin: Callable[[InboundMessage], bool],
) -> None:
    def admin_only(msg: InboundMessage, verb: str) -> None:
        if not is_admin(msg):
            raise ToolError(f"only an admin can {verb} pairing requests")

    async def tell(request: PairingRequest, text: str) -> None:
        await bus.put_outbound(
            OutboundMessage(key=request.key, text=text, kind=OutboundKind.NOTICE)
        )

    async def approve(msg: InboundMessage, args: str) -> str:
        admin_only(msg, "approve")
        request = await pairing.approve(args, by=msg.sender)
        await tell(request, APPROVED)
        return f"Approved {request.sender}{_name(request)}."

    async def deny(msg: InboundMessage, args: str) -> str:
        admin_only(msg, "deny")
        request = await pairing.deny(args, by=msg.sender)
        await tell(request, DENIED)
        return f"Denied {request.sender}{_name(request)}; their code is void."

    router.register(Command("approve", "/approve <code>", "admins: let a stranger in", approve))
    router.register(Command("deny", "/deny <code>", "admins: refuse a pairing request", deny))


def _name(request: PairingRequest) -> str:
    return f" ({request.user_name})" if request.user_name else ""
