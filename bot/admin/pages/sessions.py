"""Sessions: the chats with the most recent activity first; start a fresh session
(the chat's history and summary forgotten) as ``/new`` does."""

from __future__ import annotations

from aiohttp import web

from bot.admin.site import PAGE_SIZE, PageRoute, View
from bot.errors import ToolError
from bot.handlers.session_commands import fresh_session
from bot.messages import ChatKey

PATH = "/admin/sessions"


async def sessions(view: View) -> web.StreamResponse:
    found = await view.services.sessions.recent(PAGE_SIZE + 1, view.offset)
    return view.render("sessions.html", chats=found[:PAGE_SIZE], more=len(found) > PAGE_SIZE)


async def fresh(view: View) -> web.StreamResponse:
    channel, chat_id = view.form.get("channel", ""), view.form.get("chat_id", "")
    if not channel or not chat_id:
        raise ToolError("choose a chat")
    key = ChatKey(channel, chat_id, view.form.get("thread_id") or None)
    note = await fresh_session(view.services.sessions, key)
    return view.done(PATH, f"{key}: {note}")


ROUTES = [PageRoute("GET", PATH, sessions), PageRoute("POST", f"{PATH}/new", fresh, PATH)]
