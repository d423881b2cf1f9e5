"""``/new``: start a fresh session in this chat, without a model call.

The chat's stored history and its archived summary are forgotten (and the offloaded
tool results kept for it, through the session store's clear hooks); the persona files
and the user's settings and reminders stay. It runs in the chat's worker like any
command, so a turn already queued in the chat finishes first.
"""

from __future__ import annotations

from bot.handlers.commands import Command
from bot.messages import InboundMessage
from bot.store.base import Sessions
from bot.workspaces.routing import WorkspaceOf, session_key, workspace_for


def new_session_command(sessions: Sessions, workspace_of: WorkspaceOf) -> Command:
    """``workspace_of`` picks the history to forget: the chat's in its current workspace."""

    async def new(msg: InboundMessage, args: str) -> str:
        workspace = await workspace_for(workspace_of, msg)
        forgotten = await sessions.clear(session_key(msg.key, workspace))
        if not forgotten:
            return "Started a fresh session (there was nothing to forget)."
        return f"Started a fresh session; the {forgotten} earlier messages here are forgotten."

    return Command("new", "/new", "start a fresh session (forget this chat's history)", new)
