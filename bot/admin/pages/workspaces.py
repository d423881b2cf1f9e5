"""Workspaces: the routes, and per workspace the persona files (editor with the live
size against the budget, history, a side-by-side diff of any version, rollback), all
through :class:`~bot.workspaces.personas.Personas`, as ``/soul`` and friends."""

from __future__ import annotations

import asyncio

from aiohttp import web
from markupsafe import Markup

from bot.admin.diff import side_by_side
from bot.admin.site import PAGE_SIZE, PageRoute, View
from bot.errors import BotError, EditConflict, WorkspaceError
from bot.store.workspaces import text_hash
from bot.text import row_number
from bot.workspaces.commands import saved_note
from bot.workspaces.files import PERSONA_FILES, not_utf8
from bot.workspaces.personas import Personas

PATH = "/admin/workspaces"
VIA = "web"


def _file(view: View) -> str:
    wanted = view.form.get("file") or view.request.query.get("file", "")
    return wanted if wanted in PERSONA_FILES else "SOUL.md"


async def workspaces(view: View) -> web.StreamResponse:
    return await _editor(view)


async def _editor(
    view: View, draft: str | None = None, note: str = "", based_on: str = "", status: int = 200
) -> web.Response:
    """The page; with ``draft``, a refused save's text stays in the editor, unsaved.
    The form carries the hash of the text it started from (``based_on``, else the
    file's text now): a save over another editor's newer text is refused. A file that
    is not UTF-8 has no editor, and the page says so; its tabs and history stay (a
    rollback writes a recorded version over it)."""
    personas, ws, file = view.services.personas, view.workspace, _file(view)
    now: str | None = None
    try:
        now = await personas.current(ws, file)
    except WorkspaceError as exc:
        if not not_utf8(exc):
            raise
        note, status = note or f"Error: {exc}", 409
    text = now if draft is None else draft
    history = await personas.history_page(ws, file, PAGE_SIZE + 1, view.offset)
    try:
        diff = None if now is None else await _diff(view, ws, file, now)
    except WorkspaceError as exc:  # the editor still shows, on the file asked for
        diff, note, status = None, note or f"Error: {exc}", 404
    return view.render(
        "workspaces.html",
        status,
        path=PATH,
        routes=view.services.settings.workspaces.routes,
        files=PERSONA_FILES,
        file=file,
        text=text,
        based_on=based_on or text_hash(now or ""),
        max_chars=personas.max_chars,
        history=history[:PAGE_SIZE],
        more=len(history) > PAGE_SIZE,
        diff=diff,
        note=note or view.request.query.get("note", ""),
    )


async def _diff(view: View, ws: str, file: str, now: str) -> tuple[int, Markup] | None:
    """The side-by-side diff the query asks for (``diff=<version>``), if any; made on a
    thread: a file edited on disk may be far over the budget, and chats wait meanwhile."""
    wanted = view.request.query.get("diff", "")
    if not wanted:
        return None
    number = row_number(wanted)
    if number is None:
        raise WorkspaceError(f"{file} of workspace {ws} has no version {wanted}")
    old = (await view.services.personas.version(ws, file, number)).text
    names = f"{file} version {number}", f"{file} now"
    return number, await asyncio.to_thread(side_by_side, old, now, *names)


async def save(view: View) -> web.StreamResponse:
    """A refusal (over the budget, empty, changed since the form was opened, ...) shows
    the page again with the text as sent: sent back to the file's current text, an
    admin lost everything typed. After a conflict the form is based on the file's new
    text, so saving again replaces it knowingly."""
    ws, file = view.workspace, _file(view)
    # A browser sends a textarea's lines with CRLF; the files keep what chat writes.
    text = view.form.get("text", "").replace("\r\n", "\n")
    based_on = view.form.get("based_on", "")
    personas = view.services.personas
    try:
        if not text.strip():
            raise WorkspaceError(f"{file} cannot be empty; nothing was changed.")
        if not based_on:  # a page opened before forms said so: nothing to check against
            raise EditConflict(
                f"the form did not say which text of {file} it was opened with;"
                " nothing was changed."
            )
        if await _as_sent(personas, ws, file, text):
            return view.done(PATH, _AS_SENT.format(file=file, ws=ws), file=file)
        version = await personas.set(ws, file, text, author=view.who, via=VIA, based_on=based_on)
    except EditConflict as exc:
        again = " Your text is below, not saved; save it again to replace the file's text now."
        return await _editor(view, text, f"Error: {exc}{again}", status=409)
    except BotError as exc:
        kept = " Your text is below, not saved." if text.strip() else ""
        return await _editor(view, text, f"Error: {exc}{kept}", based_on)
    return view.done(PATH, saved_note(file, ws, version, personas), file=file)


_AS_SENT = (
    "{file} of workspace {ws} already says that (it holds a NUL or a lone carriage return,"
    " which a browser sends back otherwise; they are kept as they are); nothing changed."
)


async def _as_sent(personas: Personas, ws: str, file: str, text: str) -> bool:
    """Whether ``text`` is the file's text as a browser's textarea sends it back, and
    not that text itself: HTML reads a NUL as U+FFFD and a lone CR as a line end, so an
    unchanged file was written again, and recorded as a new version."""
    now = await personas.current(ws, file)
    sent = now.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "\ufffd")
    return text != now and text == sent


async def rollback(view: View) -> web.StreamResponse:
    ws, file = view.workspace, _file(view)
    number = row_number(view.form.get("version", ""))
    if number is None:
        raise WorkspaceError("choose a version to restore")
    personas = view.services.personas
    version = await personas.rollback(ws, file, number, author=view.who, via=VIA)
    note = saved_note(file, ws, version, personas, f"version {number} restored")
    return view.done(PATH, note, file=file)


ROUTES = [
    PageRoute("GET", PATH, workspaces),
    PageRoute("POST", f"{PATH}/save", save, PATH, keeps="text"),
    PageRoute("POST", f"{PATH}/rollback", rollback, PATH),
]
