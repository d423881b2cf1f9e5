"""``/admin``: an admin, in a one-to-one chat with the bot, gets a one-time login link
to the admin page (the same kind ``bot admin link`` prints)."""

from __future__ import annotations

from collections.abc import Callable

from bot.admin.auth import LINK_TTL, AdminAuth
from bot.config import Settings
from bot.handlers.commands import Command
from bot.messages import InboundMessage


def admin_link_command(
    settings: Settings,
    auth: AdminAuth,
    is_admin: Callable[[InboundMessage], bool],
    base: Callable[[], str],
) -> Command:
    """``base`` is where people open the page (known once the web app is bound)."""

    async def admin(msg: InboundMessage, args: str) -> str:
        if not is_admin(msg):
            return "Only an admin can open the admin page."
        if not (settings.admin.enabled and settings.web.enabled):
            return (
                "The admin page is off: set [admin] enabled = true (and [web] enabled) in "
                "bot.toml and restart."
            )
        if not msg.direct:
            return "Send /admin to me in a one-to-one chat: a login link is not for a group."
        link = await auth.new_link(msg.sender, base())
        minutes = int(LINK_TTL.total_seconds() // 60)
        return f"Your admin page login link (works once, for {minutes} minutes):\n{link}"

    return Command("admin", "/admin", "admins: a one-time login link to the admin page", admin)
