"""Workspace folders: the persona files an admin edits (AGENTS.md, SOUL.md, USER.md).

``data/workspaces/<name>/`` per workspace. Missing files are created from the shipped
templates; existing files are never overwritten, and the daemon writes a persona file
only on an explicit admin edit. A file still equal to its template is left out of the
prompt, so placeholder text never poses as real instructions. Symlinks are never
followed (see :mod:`bot.workspaces.files`).
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from bot.errors import WorkspaceError
from bot.workspaces.files import (
    PERSONA_FILES,
    Stamp,
    checked_folder,
    create_text,
    decoded,
    legacy_text,
    read_bytes,
    read_text,
    stamp,
    workspace_name,
    write_text,
)

log = logging.getLogger(__name__)

BOOTSTRAP_FILES = PERSONA_FILES
DEFAULT_WORKSPACE = "default"


def template_text(name: str) -> str:
    return resources.files("bot").joinpath("templates", name).read_text(encoding="utf-8")


@dataclass(frozen=True, slots=True)
class BootstrapFile:
    name: str
    text: str


_CACHED_PATHS = 10_000


class Workspaces:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._templates = {name: template_text(name) for name in BOOTSTRAP_FILES}
        self._template_bodies = {name: text.strip() for name, text in self._templates.items()}
        self._cache: dict[Path, tuple[Stamp, str]] = {}
        self._paths: dict[str, Path] = {}
        self._files: dict[tuple[str, str], Path] = {}

    def path(self, name: str = DEFAULT_WORKSPACE) -> Path:
        """The folder of a valid workspace name (raises for any other): asked several
        times a turn, so each name is checked and joined once."""
        found = self._paths.get(name)
        if found is None:
            found = self.root / workspace_name(name)
            if len(self._paths) < _CACHED_PATHS:
                self._paths[name] = found
        return found

    def file(self, name: str, file: str) -> Path:
        """``path(name) / file``, joined once: every turn stamps its persona files."""
        found = self._files.get((name, file))
        if found is None:
            found = self.path(name) / file
            if len(self._files) < _CACHED_PATHS:
                self._files[(name, file)] = found
        return found

    def names(self) -> list[str]:
        """The workspaces that exist on disk, sorted."""
        if not self.root.is_dir():
            return []
        return sorted(
            p.name
            for p in self.root.iterdir()
            if p.is_dir() and not p.is_symlink() and _valid(p.name)
        )

    def exists(self, name: str) -> bool:
        """Whether workspace ``name`` has its folder on disk (only a write makes one)."""
        return self.path(name).is_dir()

    def template(self, file: str) -> str:
        return self._templates[file]

    def ensure(self, name: str = DEFAULT_WORKSPACE) -> Path:
        """Create the workspace and any missing bootstrap file from its template."""
        ws = self.path(name)
        ws.mkdir(parents=True, exist_ok=True)
        checked_folder(ws)
        for fname, text in self._templates.items():
            if create_text(ws / fname, text):
                log.info("created %s from template", ws / fname)
        return ws

    def read(self, name: str, file: str) -> str | None:
        """The file's text (None when absent); refuses a symlink."""
        return read_text(checked_folder(self.path(name)) / file)

    def raw(self, name: str, file: str) -> bytes | None:
        """The file's bytes (None when absent), whatever their encoding; refuses a symlink."""
        return read_bytes(checked_folder(self.path(name)) / file)

    def write(self, name: str, file: str, text: str | bytes) -> None:
        """An admin's edit, written atomically; the only way the daemon changes a file."""
        write_text(self.path(name), file, text)
        self._cache.pop(self.file(name, file), None)

    def stamp(self, name: str, file: str) -> Stamp | None:
        return stamp(self.file(name, file))

    def bootstrap(self, name: str = DEFAULT_WORKSPACE) -> list[BootstrapFile]:
        """The customised bootstrap files, in a fixed order; templates are skipped."""
        ws = self.path(name)
        try:
            checked_folder(ws)
        except WorkspaceError:  # absent, or a link to elsewhere: nothing is read through it
            return []
        out: list[BootstrapFile] = []
        for fname in BOOTSTRAP_FILES:
            text = self._read(self.file(name, fname))
            body = text.strip() if text else ""
            if body and body != self._template_bodies[fname]:
                out.append(BootstrapFile(fname, body))
        return out

    def keep(self, name: str, file: str, text: str) -> None:
        """Use ``text`` (its last good version) for a file that is not UTF-8, while the
        file stays as it is now: the prompt keeps the persona an admin's save broke."""
        path = self.file(name, file)
        current = stamp(path)
        if current is not None:
            self._cache[path] = (current, text)

    def _read(self, path: Path) -> str | None:
        """Read with a :data:`Stamp` cache: admins edit files while the daemon runs."""
        current = stamp(path)
        if current is None:
            return None
        cached = self._cache.get(path)
        if cached and cached[0] == current:
            return cached[1]
        try:
            data = read_bytes(path)
        except (OSError, WorkspaceError) as exc:
            log.warning("persona file %s not used: %s", path, exc)
            return None
        if data is None:
            return None
        try:
            text = decoded(data, path)
        except WorkspaceError as exc:
            text = cached[1] if cached else legacy_text(data)
            used = "its last good text" if cached else "it read as cp1252"
            log.warning("persona file %s: %s; using %s", path, exc, used)
        self._cache[path] = (current, text)
        return text


def require_known(folders: Workspaces, configured: Collection[str], name: str) -> str:
    """``name``, checked, when it is a workspace (on disk, named in the config, or the
    default); else a refusal that lists the workspaces: a typo must not create one."""
    name = workspace_name(name)
    if name == DEFAULT_WORKSPACE or name in configured or folders.exists(name):
        return name
    known = ", ".join(sorted({DEFAULT_WORKSPACE, *configured, *folders.names()}))
    raise WorkspaceError(
        f"there is no workspace {name!r} (workspaces: {known}); nothing was created. "
        "Create it with /workspace new <name> in a chat, or --create on the command line."
    )


def _valid(name: str) -> bool:
    try:
        workspace_name(name)
    except WorkspaceError:
        return False
    return True
