"""Workspace folders: the persona files an admin edits (AGENTS.md, SOUL.md, USER.md).

Missing files are created from the shipped templates at start; existing files are
never overwritten. A file still equal to its template is left out of the prompt, so
placeholder text never poses as real instructions.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

log = logging.getLogger(__name__)

BOOTSTRAP_FILES = ("AGENTS.md", "SOUL.md", "USER.md")
DEFAULT_WORKSPACE = "default"
_SAFE_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


def template_text(name: str) -> str:
    return resources.files("bot").joinpath("templates", name).read_text(encoding="utf-8")


@dataclass(frozen=True, slots=True)
class BootstrapFile:
    name: str
    text: str


class Workspaces:
    def __init__(self, root: Path) -> None:
        self.root = root
        self._templates = {name: template_text(name) for name in BOOTSTRAP_FILES}
        self._cache: dict[Path, tuple[tuple[int, int], str]] = {}

    def path(self, name: str = DEFAULT_WORKSPACE) -> Path:
        if not _SAFE_NAME.match(name) or name.startswith("."):
            raise ValueError(f"invalid workspace name {name!r}")
        return self.root / name

    def ensure(self, name: str = DEFAULT_WORKSPACE) -> Path:
        """Create the workspace and any missing bootstrap file from its template."""
        ws = self.path(name)
        ws.mkdir(parents=True, exist_ok=True)
        for fname, text in self._templates.items():
            target = ws / fname
            if not target.exists():
                target.write_text(text, encoding="utf-8")
                log.info("created %s from template", target)
        return ws

    def bootstrap(self, name: str = DEFAULT_WORKSPACE) -> list[BootstrapFile]:
        """The customised bootstrap files, in a fixed order; templates are skipped."""
        ws = self.path(name)
        out: list[BootstrapFile] = []
        for fname in BOOTSTRAP_FILES:
            text = self._read(ws / fname)
            if text is None or not text.strip():
                continue
            if text.strip() == self._templates[fname].strip():
                continue
            out.append(BootstrapFile(fname, text.strip()))
        return out

    def _read(self, path: Path) -> str | None:
        """Read with an (mtime, size) cache: admins edit files while the daemon runs."""
        try:
            st = path.stat()
        except FileNotFoundError:
            return None
        stamp = (st.st_mtime_ns, st.st_size)
        cached = self._cache.get(path)
        if cached and cached[0] == stamp:
            return cached[1]
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            log.warning("cannot read %s: %s", path, exc)
            return None
        self._cache[path] = (stamp, text)
        return text
