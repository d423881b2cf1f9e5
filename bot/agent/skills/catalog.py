"""The skills one workspace sees: built-ins overridden by its own, minus its disabled list.

Built-in skills ship in the package (``bot/agent/skills/builtin``); a workspace's
``skills/<name>/SKILL.md`` replaces a built-in of the same name. The disabled list is
``skills/disabled.txt`` in the workspace (one name per line), so the chat command, the
CLI and an admin's editor all change the same file. Files are re-read only when their
modification time or size changes, so an unchanged catalog costs a few ``stat`` calls
per turn and renders byte-identical text (the provider's prompt cache keeps hitting).
A skill's requirements (a binary on PATH, a variable set) are checked again at most every
:data:`RECHECK_S` seconds: a binary installed while the daemon runs makes its skill
usable without a restart, and a turn does not walk PATH for every skill.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cached_property
from importlib import resources
from pathlib import Path

from bot.agent.skills.loader import SKILL_FILE, discover
from bot.agent.skills.model import Skill, SkillState
from bot.errors import SkillError, ToolError

log = logging.getLogger(__name__)

SKILLS_DIR = "skills"
RECHECK_S = 5.0  # how stale "missing binary x" may be after x is installed
DISABLED_FILE = "disabled.txt"
CATALOG_INTRO = (
    "# Skills\n"
    "Skills are instructions for particular tasks. Before doing one of these tasks, call "
    "read_skill(name) and follow what it says."
)

Stamp = tuple[tuple[str, int, int], ...]


def builtin_folder() -> Path:
    return Path(str(resources.files("bot.agent.skills").joinpath("builtin")))


@dataclass(slots=True)
class _Loaded:
    """A workspace's skills as read at ``stamp``, their requirements checked at ``checked``."""

    stamp: Stamp
    states: list[SkillState]
    problems: list[str]
    checked: float


class SkillCatalog:
    def __init__(
        self,
        workspaces_root: Path,
        builtin: Path | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._root = workspaces_root
        self._builtin_folder = builtin or builtin_folder()
        self._clock = clock
        self._cache: dict[str, _Loaded] = {}
        # Each workspace's prompt section, for the states it was written from: every
        # turn asks, and it changes only when the skills do.
        self._sections: dict[str, tuple[list[SkillState], str | None]] = {}

    @cached_property
    def _builtin(self) -> dict[str, Skill]:
        """Read at the first use (a turn's prompt), not while the daemon starts."""
        skills, problems = discover(self._builtin_folder, "builtin")
        for problem in problems:
            log.error("built-in skill skipped: %s", problem)
        return skills

    def folder(self, workspace: str) -> Path:
        return self._root / workspace / SKILLS_DIR

    def states(self, workspace: str) -> list[SkillState]:
        """Every skill of the workspace, by name, with whether it may be used."""
        return self._load(workspace)[0]

    def problems(self, workspace: str) -> list[str]:
        """Skill files that could not be read, each naming its file."""
        return self._load(workspace)[1]

    def _load(self, workspace: str) -> tuple[list[SkillState], list[str]]:
        folder = self.folder(workspace)
        stamp = _stamp(folder)
        now = self._clock()
        cached = self._cache.get(workspace)
        if cached is not None and cached.stamp == stamp:
            if now - cached.checked >= RECHECK_S:
                cached.states = _rechecked(cached.states)
                cached.checked = now
            return cached.states, cached.problems
        own, problems = discover(folder, "workspace")
        for problem in problems:
            log.warning("workspace %s: skill skipped: %s", workspace, problem)
        merged = {**self._builtin, **own}
        disabled, unreadable = _disabled(folder)
        if unreadable is not None:
            log.warning("workspace %s: %s", workspace, unreadable)
            problems = [*problems, unreadable]
        states = [
            SkillState(skill, name not in disabled, tuple(skill.missing()))
            for name, skill in sorted(merged.items())
        ]
        self._cache[workspace] = _Loaded(stamp, states, problems, now)
        return states, problems

    def prompt_section(self, workspace: str) -> str | None:
        """Always-on skills inlined, then the catalog of the others; None if none."""
        states = self.states(workspace)
        known = self._sections.get(workspace)
        if known is not None and known[0] is states:
            return known[1]
        section = _section(states)
        self._sections[workspace] = (states, section)
        return section

    def read(self, workspace: str, name: str) -> str:
        """A usable skill's instructions and its other files; ToolError otherwise."""
        state = self._find(workspace, name)
        if state is None or not state.enabled:
            usable = [s.skill.name for s in self.states(workspace) if s.usable]
            why = "is disabled in this workspace" if state else "does not exist"
            raise ToolError(f"skill {name!r} {why}; available: {', '.join(usable) or 'none'}")
        if state.missing:
            raise ToolError(f"skill {name!r} is unavailable: missing {', '.join(state.missing)}")
        skill = state.skill
        files = skill.files()
        extra = (
            f"\n\nOther files of this skill (in {skill.folder}): " + ", ".join(files)
            if files
            else ""
        )
        return f"{skill.body}{extra}"

    def set_enabled(self, workspace: str, name: str, enabled: bool) -> SkillState:
        if self._find(workspace, name) is None:
            raise SkillError(f"no skill named {name!r} in workspace {workspace!r}")
        folder = self.folder(workspace)
        disabled, unreadable = _disabled(folder)
        if unreadable is not None:  # writing it anew would lose what it says
            raise SkillError(f"{unreadable}; fix or remove it first")
        disabled = disabled - {name} if enabled else disabled | {name}
        folder.mkdir(parents=True, exist_ok=True)
        text = "".join(f"{n}\n" for n in sorted(disabled))
        (folder / DISABLED_FILE).write_text(text, encoding="utf-8")
        self._cache.pop(workspace, None)
        found = self._find(workspace, name)
        assert found is not None
        return found

    def _find(self, workspace: str, name: str) -> SkillState | None:
        return next((s for s in self.states(workspace) if s.skill.name == name), None)


def _rechecked(states: list[SkillState]) -> list[SkillState]:
    """``states`` with their requirements checked again; the same list while none changed
    (so the prompt section, kept for that list, is not rendered again)."""
    fresh = [replace(s, missing=tuple(s.skill.missing())) for s in states]
    if all(new.missing == old.missing for new, old in zip(fresh, states, strict=True)):
        return states
    return fresh


def _catalog_line(state: SkillState) -> str:
    line = f"- {state.skill.name}: {state.skill.description}"
    if state.missing:
        line += f" (unavailable: missing {', '.join(state.missing)})"
    return line


def _disabled(folder: Path) -> tuple[set[str], str | None]:
    """The disabled names, and why the list could not be read (None when it could).

    A list saved in another encoding, or a folder in its place, disables nothing and
    is reported with the skipped skill files: the workspace's turns go on."""
    path = folder / DISABLED_FILE
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return set(), None
    except UnicodeDecodeError as exc:
        return set(), (
            f"{path}: not UTF-8 (byte {exc.start}); save it as UTF-8 "
            "(until then no skill is disabled)"
        )
    except OSError as exc:  # a directory, no permission
        return set(), (
            f"{path}: cannot be read ({exc.strerror or exc}); no skill is disabled until fixed"
        )
    return {line.strip() for line in text.splitlines() if line.strip()}, None


def _section(states: list[SkillState]) -> str | None:
    """The prompt section of these states (see :meth:`SkillCatalog.prompt_section`)."""
    offered = [s for s in states if s.enabled]
    if not offered:
        return None
    parts = [
        f"## Skill: {s.skill.name} (always on)\n\n{s.skill.body}"
        for s in offered
        if s.skill.always and s.usable
    ]
    lines = [_catalog_line(s) for s in offered if not (s.skill.always and s.usable)]
    if lines:
        parts.append(CATALOG_INTRO + "\n" + "\n".join(lines))
    return "\n\n".join(parts)


def _stamp(folder: Path) -> Stamp:
    """What changes when a skill or the disabled list is edited, added or removed."""
    if not folder.is_dir():
        return ()
    paths = [*folder.glob(f"*/{SKILL_FILE}"), folder / DISABLED_FILE]
    out = []
    for path in sorted(paths):
        try:
            st = path.stat()
        except FileNotFoundError:
            continue
        out.append((str(path), st.st_mtime_ns, st.st_size))
    return tuple(out)


__all__ = ["Skill", "SkillCatalog", "SkillState"]
