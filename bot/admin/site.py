"""The admin page's routes on the one ``[web]`` app: login, the guard every page passes
(a live session; for a change, a POST with the session's CSRF token), and rendering.

Pages live in :mod:`bot.admin.pages`, one module each; each handler gets a
:class:`View` and calls the same service the matching chat command calls.
"""

from __future__ import annotations

import hmac
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from importlib import resources
from typing import Any, TypeVar
from urllib.parse import urlencode

from aiohttp import web

from bot.admin.auth import LOGIN_PATH, Session
from bot.admin.render import HEADERS, Renderer
from bot.admin.services import AdminServices
from bot.errors import BotError, StoreError, ToolError, WorkspaceError
from bot.store.busy import busy
from bot.text import MAX_NUMBER, row_number
from bot.workspaces.folders import DEFAULT_WORKSPACE
from channels.base import Route

log = logging.getLogger(__name__)

COOKIE = "bot_admin"
PAGE_SIZE = 20
KEPT = ("file",)  # form fields a refused change carries back to its page
STATIC = frozenset({"admin.css", "admin.js"})
_TOKEN = re.compile("[0-9a-f]{64}")  # a CSRF token's shape (an HMAC-SHA256 in hex)
_TYPES = {".css": "text/css", ".js": "text/javascript"}
Handler = Callable[["View"], Awaitable[web.StreamResponse]]
Answer = Callable[[web.Request], Awaitable[web.StreamResponse]]
T = TypeVar("T")


def available(part: T | None, what: str) -> T:
    """A part of the agent side, or a refusal naming it (a daemon built without it)."""
    if part is None:
        raise ToolError(f"{what} is not available in this daemon")
    return part


@dataclass(frozen=True)
class PageRoute:
    """``back``: the page a refused change returns to (a POST's own path has no page);
    ``keeps``: the field whose typed text a refusal page shows, to copy (the editor's:
    the page it was typed in is gone once the browser leaves it)."""

    method: str
    path: str
    handler: Handler
    back: str = ""
    keeps: str = ""


@dataclass(frozen=True)
class View:
    """One signed-in request: who, which workspace is selected, the form if posted."""

    request: web.Request
    session: Session
    services: AdminServices
    renderer: Renderer
    form: Mapping[str, str]

    @property
    def who(self) -> str:
        """How the change is recorded (a persona version's author): ``web:<admin>``."""
        return f"web:{self.session.admin}"

    @cached_property
    def workspaces(self) -> list[str]:
        known = {*self.services.folders.names(), *self.services.settings.workspaces.names()}
        return sorted(known | {DEFAULT_WORKSPACE})

    @cached_property
    def workspace(self) -> str:
        """The selected workspace; a page asking for one not known shows the default."""
        wanted = self.form.get("ws") or self.request.query.get("ws", "")
        return wanted if wanted in self.workspaces else DEFAULT_WORKSPACE

    def require_workspace(self) -> None:
        """A change names the workspace its form was for: one gone since (its folder
        renamed, its config removed) is refused, never made in the default instead."""
        wanted = self.form.get("ws", "")
        if wanted and wanted not in self.workspaces:
            raise WorkspaceError(f"there is no workspace {wanted}; nothing was changed.")

    @property
    def page(self) -> int:
        """The ``page`` asked for; page 1 for one that is no number or so far on that
        its offset overflows a store's integer."""
        number = row_number(self.request.query.get("page", "1"))
        return number if number and number <= MAX_NUMBER // PAGE_SIZE else 1

    @property
    def offset(self) -> int:
        return (self.page - 1) * PAGE_SIZE

    def render(self, template: str, status: int = 200, **values: Any) -> web.Response:
        values.setdefault("note", self.request.query.get("note", ""))
        values.setdefault("path", self.request.path)  # a POST's page: the page it came from
        return self.renderer.response(
            template,
            status,
            session=self.session,
            csrf=self.session.csrf,
            workspace=self.workspace,
            workspaces=self.workspaces,
            page=self.page,
            page_size=PAGE_SIZE,
            **values,
        )

    def done(self, path: str, note: str, **query: str) -> web.Response:
        """After a change: back to a page (a GET: reloading it changes nothing)."""
        params = {"ws": self.workspace, **query, "note": note}
        return see_other(f"{path}?{urlencode(params)}")


class AdminSite:
    def __init__(self, services: AdminServices, pages: list[PageRoute]) -> None:
        self.services = services
        self.renderer = Renderer(product="chatbot-daemon", version=services.version)
        self._pages = pages

    def routes(self) -> list[Route]:
        routes = [
            Route("GET", LOGIN_PATH, self._answering(self._login_page)),
            Route("POST", LOGIN_PATH, self._answering(self._login)),
            Route("GET", "/admin/static/{name}", self._static),
            Route("POST", "/admin/logout", self._answering(self._guard(_logout))),
        ]
        routes += [
            Route(
                p.method,
                p.path,
                self._answering(self._guard(p.handler, p.back, p.keeps), p.back, p.keeps),
            )
            for p in self._pages
        ]
        return routes

    async def _refused(
        self, request: web.Request, keeps: str, template: str, status: int, **values: Any
    ) -> web.Response:
        """A page refusing a request; a POST's text in ``keeps`` shown on it, to copy."""
        kept = ""
        if keeps and request.method == "POST":
            sent = (await request.post()).get(keeps)  # read once: aiohttp keeps the form
            kept = sent if isinstance(sent, str) else ""
        return self.renderer.response(template, status, kept=kept, **values)

    def _answering(self, handler: Answer, back: str = "", keeps: str = "") -> Answer:
        """A database that cannot answer now (another process holds SQLite's write lock
        past the wait, PostgreSQL's connection was lost) is a page saying so, 503: it was
        aiohttp's bare "500 Internal Server Error" and a traceback in the log."""

        async def answering(request: web.Request) -> web.StreamResponse:
            try:
                return await handler(request)
            except Exception as exc:
                refused = exc if isinstance(exc, StoreError) else busy(exc)
                if refused is None:
                    raise
                log.warning("admin page: %s %s not answered: %s", request.method,
                            request.path, refused)  # fmt: skip
                posted = request.method == "POST"
                again = (back or "/admin") if posted else request.path_qs
                response = await self._refused(
                    request, keeps, "busy.html", 503, reason=str(refused), posted=posted,
                    again=again,
                )  # fmt: skip
                response.headers["Retry-After"] = "5"
                return response

        return answering

    async def _forged(self, request: web.Request, keeps: str, sent: str) -> web.Response:
        """A POST without the current login's CSRF token. One with a token of the right shape
        came from a page of this browser's earlier session (a login in another tab
        replaced the cookie): it is told so, not that it came without one."""
        log.warning("admin page: %s %s refused: no valid CSRF token",
                    request.method, request.path)  # fmt: skip
        changed = _TOKEN.fullmatch(sent) is not None
        return await self._refused(request, keeps, "refused.html", 403, changed=changed)

    def _limited(self, request: web.Request) -> bool:
        """Whether a failed login try is one too many from its address. Only failures
        count, so a valid link always works: behind a reverse proxy every client shares
        one address, and a scanner there must not lock the admin out."""
        return not self.services.limiter.allow(request.remote or "?")

    def _guard(self, handler: Handler, back: str = "", keeps: str = "") -> Answer:
        async def guarded(request: web.Request) -> web.StreamResponse:
            session = await self.services.auth.session(request.cookies.get(COOKIE, ""))
            if session is None:
                status = 401 if request.method == "GET" else 403
                return await self._refused(request, keeps, "signed_out.html", status)
            form: dict[str, str] = {}
            if request.method == "POST":
                posted = await request.post()
                form = {k: v for k, v in posted.items() if isinstance(v, str)}
                sent = form.get("csrf", "")
                if not _same(sent, session.csrf):
                    return await self._forged(request, keeps, sent)
            view = View(request, session, self.services, self.renderer, form)
            try:
                if request.method == "POST":
                    view.require_workspace()
                return await handler(view)
            except StoreError:
                raise  # a database that cannot answer now: a 503 (_answering)
            except BotError as exc:  # a refusal, worded for people, as in chat
                if request.method != "POST":  # shown here: a redirect to itself would loop
                    return view.render(
                        "error.html", 409, note=f"Error: {exc}", again=request.path_qs
                    )
                kept = {k: form[k] for k in KEPT if k in form}
                return view.done(back or request.path, f"Error: {exc}", **kept)

        return guarded

    async def _login_page(self, request: web.Request) -> web.StreamResponse:
        """The link opens a page with a button: a link previewer fetching the URL
        must not spend it, and the POST from this page is same-site (the Strict
        cookie then reaches the page it leads to)."""
        token = request.query.get("token", "")
        found = await self.services.auth.check_link(token)
        if found.state != "valid" and self._limited(request):
            return self.renderer.response("login.html", 429, state="limited")
        status = 200 if found.state == "valid" else 410 if found.admin else 404
        return self.renderer.response("login.html", status, state=found.state, token=token)

    async def _login(self, request: web.Request) -> web.StreamResponse:
        posted = await request.post()
        token = posted.get("token", "")
        found, session = await self.services.auth.log_in(token if isinstance(token, str) else "")
        if session is None:
            if self._limited(request):
                return self.renderer.response("login.html", 429, state="limited")
            status = 410 if found.admin else 404
            return self.renderer.response("login.html", status, state=found.state)
        response = see_other("/admin")
        response.set_cookie(
            COOKIE,
            session.token,
            path="/admin",
            httponly=True,
            samesite="Strict",
            secure=self.services.secure,
        )
        return response

    async def _static(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        if name not in STATIC:
            raise web.HTTPNotFound()
        body = resources.files("bot.admin").joinpath("static", name).read_bytes()
        kind = _TYPES[name[name.rindex(".") :]]
        return web.Response(body=body, content_type=kind, headers={"Cache-Control": "max-age=3600"})


def _same(sent: str, csrf: str) -> bool:
    """Whether a form's token is the session's, in constant time (``csrf`` is ASCII)."""
    return hmac.compare_digest(sent.encode("utf-8", "surrogatepass"), csrf.encode())


def see_other(location: str) -> web.Response:
    return web.Response(status=303, headers={**HEADERS, "Location": location})


async def _logout(view: View) -> web.StreamResponse:
    await view.services.auth.log_out(view.session.token)
    response = view.renderer.response("signed_out.html", 200, logged_out=True)
    response.del_cookie(COOKIE, path="/admin")
    return response
