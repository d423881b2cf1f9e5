"""Access: pending pairing codes (approve, deny), approved users (revoke), the allow
lists and admins of the config; through the pairing service ``/approve`` uses."""

from __future__ import annotations

from aiohttp import web

from bot.admin.site import PAGE_SIZE, PageRoute, View
from bot.dispatcher.pairing import describe_request
from bot.handlers.pairing import user_name
from bot.messages import utcnow

PATH = "/admin/access"


async def access(view: View) -> web.StreamResponse:
    pairing = view.services.pairing.pairing
    now = utcnow()
    approved = await pairing.approved_page(PAGE_SIZE + 1, view.offset)
    return view.render(
        "access.html",
        pending=[(r, describe_request(r, now)) for r in await pairing.pending()],
        approved=approved[:PAGE_SIZE],
        more=len(approved) > PAGE_SIZE,
        allow_lists=view.services.allow_lists,
        admins=view.services.settings.admins,
        policy=view.services.settings.access.dm_policy,
    )


async def approve(view: View) -> web.StreamResponse:
    request = await view.services.pairing.approve(view.form.get("code", ""), by=view.who)
    return view.done(PATH, f"Approved {request.sender}{user_name(request)}.")


async def deny(view: View) -> web.StreamResponse:
    request = await view.services.pairing.deny(view.form.get("code", ""), by=view.who)
    return view.done(PATH, f"Denied {request.sender}{user_name(request)}; their code is void.")


async def revoke(view: View) -> web.StreamResponse:
    revoked = await view.services.pairing.pairing.revoke(view.form.get("user", ""))
    return view.done(PATH, f"Revoked the approval of {revoked}.")


ROUTES = [
    PageRoute("GET", PATH, access),
    PageRoute("POST", f"{PATH}/approve", approve, PATH),
    PageRoute("POST", f"{PATH}/deny", deny, PATH),
    PageRoute("POST", f"{PATH}/revoke", revoke, PATH),
]
