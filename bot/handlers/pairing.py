"""``/approve <code>`` and ``/deny <code>``: an admin answers a stranger's pairing request
from any chat (or the admin page); the stranger is told in the chat they asked from."""

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


class PairingDecisions:
    """An admin's answer to a pairing request, told to the stranger: the one path the
    chat commands and the admin page take."""

    def __init__(self, pairing: Pairing, bus: Bus) -> None:
        self.pairing = pairing
        self._bus = bus

    async def approve(self, code: str, by: str) -> PairingRequest:
        request = await self.pairing.approve(code, by=by)
        await self._tell(request, APPROVED)
        return request

    async def deny(self, code: str, by: str) -> PairingRequest:
        request = await self.pairing.deny(code, by=by)
        await self._tell(request, DENIED)
        return request

    async def _tell(self, request: PairingRequest, text: str) -> None:
        await self._bus.put_outbound(
            OutboundMessage(key=request.key, text=text, kind=OutboundKind.NOTICE)
        )


def register_pairing_commands(
    router: CommandRouter,
    decisions: PairingDecisions,
    is_admin: Callable[[InboundMessage], bool],
) -> None:
    def admin_only(msg: InboundMessage, verb: str) -> None:
        if not is_admin(msg):
            raise ToolError(f"only an admin can {verb} pairing requests")

    async def approve(msg: InboundMessage, args: str) -> str:
        admin_only(msg, "approve")
        request = await decisions.approve(args, by=msg.sender)
        return f"Approved {request.sender}{user_name(request)}."

    async def deny(msg: InboundMessage, args: str) -> str:
        admin_only(msg, "deny")
        request = await decisions.deny(args, by=msg.sender)
        return f"Denied {request.sender}{user_name(request)}; their code is void."

    router.register(Command("approve", "/approve <code>", "admins: let a stranger in", approve))
    router.register(Command("deny", "/deny <code>", "admins: refuse a pairing request", deny))


def user_name(request: PairingRequest) -> str:
    return f" ({request.user_name})" if request.user_name else ""
