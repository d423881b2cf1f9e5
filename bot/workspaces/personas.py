"""Persona files under version control: every change is a stored version.

Edits come from chat, the CLI, or an editor on disk; each becomes a version with its
author, channel of change (``via``) and full text, so any state can be shown, diffed
and restored (a rollback is itself a new version). A text over the file budget is
refused whole, never cut. Disk edits are noticed cheaply: a stamp (mtime, size, inode,
ctime) per file each turn, a hash only when that moved. A file saved in another encoding
than UTF-8 is never recorded: the prompt keeps its last good version, and edits are
refused until it is saved as UTF-8 or a recorded version is restored over it (a file
with no version yet is read as cp1252 for the prompt).
"""

from __future__ import annotations

import asyncio
import difflib
import logging
from collections.abc import AsyncIterator, Collection
from contextlib import asynccontextmanager

from bot.errors import EditConflict, WorkspaceError
from bot.store.base import WorkspaceRecords
from bot.store.workspaces import PersonaVersion, text_hash
from bot.workspaces.files import PERSONA_FILES, Stamp, not_utf8, persona_file, workspace_name
from bot.workspaces.folders import Workspaces, require_known
from bot.workspaces.locking import file_lock

log = logging.getLogger(__name__)

DISK = "disk"


class Personas:
    """Reads never create a workspace; an edit creates one only when it is known (on
    disk, in the config, the default) or when asked to (``create``)."""

    def __init__(
        self,
        folders: Workspaces,
        records: WorkspaceRecords,
        *,
        max_chars: int,
        configured: Collection[str] = (),
    ) -> None:
        self.folders = folders
        self.records = records
        self.max_chars = max_chars
        self.configured = frozenset(configured)  # the workspaces the config names
        self._stamps: dict[tuple[str, str], Stamp | None] = {}
        self._ready: set[str] = set()
        # One edit at a time per file: its text and its version number go together, so
        # concurrent editors never write a file whose version then fails to be numbered.
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}

    @asynccontextmanager
    async def _editing(self, workspace: str, file: str) -> AsyncIterator[None]:
        """This process's editors queue on an asyncio lock, then the process takes the
        file's OS lock, which other processes (the CLI, the daemon) honour too."""
        in_process = self._locks.setdefault((workspace, file), asyncio.Lock())
        async with in_process, file_lock(self.folders.file(workspace, file)):
            yield

    def _ensure(self, workspace: str, create: bool) -> None:
        """An edit of a known workspace (or one asked to be created) creates it from the
        templates: once, and again if its folder was removed while the daemon runs (an
        admin starting it over), which otherwise left no folder to hold the lock file."""
        if workspace in self._ready and self.folders.exists(workspace):
            return
        if workspace not in self._ready and not create:
            require_known(self.folders, self.configured, workspace)
        self.folders.ensure(workspace)
        self._ready.add(workspace)

    async def sync(self, workspace: str) -> list[PersonaVersion]:
        """Record files changed on disk since the last look as versions "via disk".

        A file whose stamp moved is looked at under its lock: an edit by another process
        is then either not begun or numbered, never half done (written, not yet a version).
        """
        recorded = []
        for file in PERSONA_FILES:
            if not self._moved(workspace, file):
                continue  # the per-turn path: one lstat, no lock
            if not self.folders.exists(workspace):
                break  # nothing to record, nor a folder to hold a lock file
            async with self._editing(workspace, file):
                found = await self._sync_file(workspace, file)
            if found is not None:
                recorded.append(found)
        return recorded

    def _moved(self, workspace: str, file: str) -> bool:
        key = (workspace, file)
        return key not in self._stamps or self._stamps[key] != self.folders.stamp(workspace, file)

    async def _sync_file(self, workspace: str, file: str) -> PersonaVersion | None:
        """The disk look at one file; its lock is held."""
        if not self._moved(workspace, file):
            return None
        self._stamps[(workspace, file)] = self.folders.stamp(workspace, file)
        try:
            text = self.folders.read(workspace, file)
        except WorkspaceError as exc:
            log.warning("workspace %s: %s", workspace, exc)
            if not_utf8(exc) and (good := await self.records.latest(workspace, file)):
                self.folders.keep(workspace, file, good.text)  # nothing recorded
            return None
        if text is None:
            return None
        latest = await self.records.latest(workspace, file)
        if latest is not None and latest.sha256 == text_hash(text):
            return None
        first = latest is None and text == self.folders.template(file)
        via = "template" if first else DISK
        version = await self.records.add_version(workspace, file, text, author=via, via=via)
        if len(text) > self.max_chars:
            log.warning(
                "%s of workspace %s is %d characters, over its budget of %d (used whole)",
                file,
                workspace,
                len(text),
                self.max_chars,
            )
        return version

    def _on_disk(self, workspace: str, create: bool = False) -> bool:
        """Whether a read finds ``workspace`` on disk; a read of one that is not there
        is refused unless it is known or about to be created (then it reads as its
        templates)."""
        if self.folders.exists(workspace):
            return True
        if not create and workspace not in self._ready:  # one made here is known
            require_known(self.folders, self.configured, workspace)
        return False

    async def current(self, workspace: str, file: str, *, create: bool = False) -> str:
        """The file's text (its template while the workspace is not on disk)."""
        workspace, file = _names(workspace, file)
        if not self._on_disk(workspace, create):
            return self.folders.template(file)  # what it starts from: nothing is created
        await self.sync(workspace)
        text = self.folders.read(workspace, file)
        return self.folders.template(file) if text is None else text

    def size_line(self, text: str) -> str:
        return f"{len(text):,} / {self.max_chars:,} chars"

    async def show(self, workspace: str, file: str) -> str:
        text = await self.current(workspace, file)
        over = " (over budget after an edit on disk: edits that keep it over are refused)"
        note = over if len(text) > self.max_chars else ""
        return f"{file} of workspace {workspace}: {self.size_line(text)}{note}\n\n{text}"

    async def set(
        self,
        workspace: str,
        file: str,
        text: str,
        *,
        author: str,
        via: str,
        create: bool = False,
        based_on: str | None = None,
        over_unreadable: bool = False,
    ) -> PersonaVersion | None:
        """Replace the file with ``text``; None when it already says exactly that.
        ``create``: make the workspace if it does not exist yet. ``based_on``: the
        :func:`text_hash` of the text the editor started from; a file changed since is
        refused (:class:`EditConflict`), checked under the file's lock so no edit that
        lands in between is overwritten unseen. ``over_unreadable``: a file that is not
        UTF-8 is replaced too (a rollback: the text is a recorded version's)."""
        workspace, file = _names(workspace, file)
        self._ensure(workspace, create)  # the folder must exist to hold the lock file
        async with self._editing(workspace, file):
            if based_on is not None:
                await self._unchanged_since(workspace, file, based_on, text, author=author, via=via)
            return await self._set(
                workspace, file, text, author=author, via=via, over_unreadable=over_unreadable
            )

    async def _unchanged_since(
        self, workspace: str, file: str, based_on: str, text: str, *, author: str, via: str
    ) -> None:
        """Refuse an edit whose starting text the file no longer holds (its lock held);
        one that arrives at the file's very text changes nothing and passes."""
        now = await self._held_current(workspace, file)
        if text_hash(now) == based_on or text == now:
            return
        latest = await self.records.latest(workspace, file)
        since = (
            f"it is now version {latest.version}, by {latest.author} via {latest.via}"
            f" at {latest.created_at.strftime('%Y-%m-%d %H:%M:%S')} UTC"
            if latest is not None
            else "it was changed"
        )
        await self.records.refused(
            workspace, file, author=author, via=via, action="set", reason="changed since read"
        )
        raise EditConflict(
            f"{file} of workspace {workspace} changed since you opened it: {since};"
            " nothing was changed."
        )

    async def _held_current(self, workspace: str, file: str) -> str:
        """The file's text, its lock held: a disk edit since the last look is recorded."""
        await self._sync_file(workspace, file)
        text = self.folders.read(workspace, file)
        return self.folders.template(file) if text is None else text

    async def _held_before(self, workspace: str, file: str, unreadable: bool) -> str | bytes:
        """What an edit replaces (its lock held): the text, or with ``unreadable`` the
        bytes of a file that is not UTF-8 (put back as they were if the edit fails)."""
        try:
            return await self._held_current(workspace, file)
        except WorkspaceError as exc:
            if not (unreadable and not_utf8(exc)):
                raise
            return self.folders.raw(workspace, file) or b""

    async def _set(
        self,
        workspace: str,
        file: str,
        text: str,
        *,
        author: str,
        via: str,
        over_unreadable: bool = False,
    ) -> PersonaVersion | None:
        """Write and number one edit; the file's lock is held."""
        old = await self._held_before(workspace, file, over_unreadable)
        if len(text) > self.max_chars:
            reason = (
                f"{file} would be {len(text):,} characters, over its budget of "
                f"{self.max_chars:,}; nothing was changed. Shorten it and try again."
            )
            await self.records.refused(
                workspace, file, author=author, via=via, action="set", reason="over budget"
            )
            raise WorkspaceError(reason)
        unchanged = isinstance(old, str) and text == old
        if unchanged and await self.records.latest(workspace, file) is not None:
            return None
        self.folders.write(workspace, file, text)
        self._stamps[(workspace, file)] = self.folders.stamp(workspace, file)
        try:
            version = await self.records.add_version(workspace, file, text, author=author, via=via)
        except Exception:  # no version: the old text goes back, never a "disk" edit
            self.folders.write(workspace, file, old)
            self._stamps[(workspace, file)] = self.folders.stamp(workspace, file)
            raise
        log.info("%s of workspace %s is now version %d (%s via %s)", file, workspace,
                 version.version, author, via)  # fmt: skip
        return version

    async def append(
        self, workspace: str, file: str, text: str, *, author: str, via: str
    ) -> PersonaVersion | None:
        """Add ``text`` at the end; a file still at its template starts empty instead."""
        workspace, file = _names(workspace, file)
        self._ensure(workspace, create=False)
        async with self._editing(workspace, file):
            old = await self._held_current(workspace, file)
            if old.strip() == self.folders.template(file).strip():
                old = ""  # its placeholder would reach every prompt beside the new line
            joined = old + ("\n" if old and not old.endswith("\n") else "") + text
            return await self._set(workspace, file, joined, author=author, via=via)

    async def history(self, workspace: str, file: str) -> list[PersonaVersion]:
        workspace, file = _names(workspace, file)
        if self._on_disk(workspace):
            await self.sync(workspace)
        return await self.records.versions(workspace, file)

    async def history_page(
        self, workspace: str, file: str, limit: int, offset: int = 0
    ) -> list[PersonaVersion]:
        """One page of the history, newest first, with edits on disk recorded first."""
        workspace, file = _names(workspace, file)
        if self._on_disk(workspace):
            await self.sync(workspace)
        return await self.records.recent_versions(workspace, file, limit, offset)

    async def compare(self, workspace: str, file: str, number: int) -> tuple[str, str]:
        """Version ``number``'s text and the current text (a side-by-side diff)."""
        old = await self.version(workspace, file, number)
        return old.text, await self.current(workspace, file)

    async def version(self, workspace: str, file: str, number: int) -> PersonaVersion:
        workspace, file = _names(workspace, file)
        found = await self.records.version(workspace, file, number)
        if found is None:
            raise WorkspaceError(f"{file} of workspace {workspace} has no version {number}")
        return found

    async def diff(self, workspace: str, file: str, number: int) -> str:
        """Unified diff from version ``number`` to the current text."""
        old = await self.version(workspace, file, number)
        now = await self.current(workspace, file)
        lines = difflib.unified_diff(
            old.text.splitlines(keepends=True),
            now.splitlines(keepends=True),
            fromfile=f"{file} version {number}",
            tofile=f"{file} current",
        )
        out = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
        return out.rstrip("\n") or f"Version {number} is the same as the current {file}."

    async def rollback(
        self, workspace: str, file: str, number: int, *, author: str, via: str
    ) -> PersonaVersion | None:
        """Version ``number`` as a new version; over a file that is not UTF-8 too (the
        way back to a version the prompt can use, without an editor on the server)."""
        old = await self.version(workspace, file, number)
        return await self.set(
            workspace, file, old.text, author=author, via=via, over_unreadable=True
        )


def describe(v: PersonaVersion) -> str:
    """One history line: number, when, who, via, size."""
    when = v.created_at.strftime("%Y-%m-%d %H:%M:%S UTC")
    return f"#{v.version}  {when}  {v.author}  via {v.via}  {len(v.text):,} chars"


def _names(workspace: str, file: str) -> tuple[str, str]:
    return workspace_name(workspace), persona_file(file)
