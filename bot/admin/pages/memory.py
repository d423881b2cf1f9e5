"""Memory: the selected workspace's facts by user and chat; forget one, or all of one
user's or chat's; through :class:`~bot.agent.memory.service.MemoryService`, as ``/forget``."""

from __future__ import annotations

from aiohttp import web

from bot.admin.site import PAGE_SIZE, PageRoute, View, available
from bot.errors import ToolError
from bot.store.memory import Scope
from bot.text import row_number

PATH = "/admin/memory"


async def memory(view: View) -> web.StreamResponse:
    facts = await available(view.services.agent().memory, "memory").page(
        view.workspace, PAGE_SIZE + 1, view.offset
    )
    return view.render("memory.html", facts=facts[:PAGE_SIZE], more=len(facts) > PAGE_SIZE)


async def forget(view: View) -> web.StreamResponse:
    memory = available(view.services.agent().memory, "memory")
    ident = view.form.get("id", "")
    number = row_number(ident)
    fact = await memory.store.get(number) if number is not None else None
    if fact is None or fact.workspace != view.workspace:
        raise ToolError(f"there is no fact #{ident} in workspace {view.workspace}")
    await memory.forget([fact], by=view.who)
    return view.done(PATH, f"Forgot: {fact.text}")


async def forget_all(view: View) -> web.StreamResponse:
    memory = available(view.services.agent().memory, "memory")
    scope, owner = view.form.get("scope", ""), view.form.get("owner", "")
    if scope not in (Scope.USER.value, Scope.CHAT.value) or not owner:
        raise ToolError("choose whose facts to forget")
    facts = await memory.of_owner(view.workspace, Scope(scope), owner)
    count = await memory.forget(facts, by=view.who)
    return view.done(PATH, f"Forgot {count} fact{'s' if count != 1 else ''} of {owner}.")


ROUTES = [
    PageRoute("GET", PATH, memory),
    PageRoute("POST", f"{PATH}/forget", forget, PATH),
    PageRoute("POST", f"{PATH}/forget-all", forget_all, PATH),
]
