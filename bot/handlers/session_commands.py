"""``/new``: start a fresh session in this chat, without a model call.

The chat's stored history and its archived summary are forgotten (and, through the
session store's clear hooks, the offloaded tool results, the files users sent and those
the bot wrote in the chat); the persona files and the user's settings and reminders
stay. It runs in the chat's worker like any command, so a turn already queued in the
chat finishes first.

In a one-to-one chat it is the user's own history; in a group it is everyone's, so
there only an admin of the chat's workspace may wipe it (a member who could would erase
what the others said and the context they rely on).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from bot.handlers.commands import Command
from bot.messages import ChatKey, InboundMessage
from bot.store.base import Sessions
from bot.workspaces.routing import WorkspaceOf, session_key, workspace_for

log = logging.getLogger(__name__)


async def fresh_session(sessions: Sessions, key: ChatKey) -> str:
    """Forget the history stored under ``key`` (its session key in its workspace): what
    ``/new`` and the admin page's Sessions do; says how much went."""
    forgotten = await sessions.clear(key)
    if not forgotten:
        return "Started a fresh session (there was nothing to forget)."
    return f"Started a fresh session; the {forgotten} earlier messages here are forgotten."


def new_session_command(
    sessions: Sessions, workspace_of: WorkspaceOf, is_admin: Callable[[InboundMessage, str], bool]
) -> Command:
    """``workspace_of`` picks the history to forget: the chat's in its current workspace;
    ``is_admin(msg, workspace)`` says who may do it in a group."""

    async def new(msg: InboundMessage, args: str) -> str:
        workspace = await workspace_for(workspace_of, msg)
        if not msg.direct and not is_admin(msg, workspace):
            log.warning("/new refused in %s: %s is not an admin", msg.key, msg.sender)
            return (
                "Only an admin can start a fresh session in a group (it forgets everyone's "
                "messages here)."
            )
        return await fresh_session(sessions, session_key(msg.key, workspace))

    return Command(
        "new", "/new", "start a fresh session (forget this chat's history; groups: admins)", new
    )
