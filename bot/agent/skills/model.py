"""A skill as read from its ``SKILL.md``: front matter plus the Markdown body."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    description: str
    body: str
    folder: Path
    source: str  # "builtin" or "workspace"
    always: bool = False
    bins: tuple[str, ...] = ()
    env: tuple[str, ...] = ()

    def missing(self) -> list[str]:
        """Requirements not met on this machine: binaries off PATH, unset variables."""
        gone = [f"binary {b}" for b in self.bins if shutil.which(b) is None]
        gone += [f"env {e}" for e in self.env if not os.environ.get(e)]
        return gone

    def files(self) -> list[str]:
        """The skill's other files (scripts, references), relative to its folder."""
        found = (p for p in self.folder.rglob("*") if p.is_file() and p.name != "SKILL.md")
        return sorted(str(p.relative_to(self.folder)) for p in found)


@dataclass(frozen=True, slots=True)
class SkillState:
    """A skill as one workspace sees it."""

    skill: Skill
    enabled: bool
    missing: tuple[str, ...]

    @property
    def usable(self) -> bool:
        return self.enabled and not self.missing
