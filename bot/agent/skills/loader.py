"""Reading ``SKILL.md`` files in the common format other agents use.

YAML front matter between ``---`` lines: ``name`` (equal to the folder), ``description``
(at most :data:`MAX_DESCRIPTION_CHARS`: it is in every prompt),
optional ``always: true`` and ``requires: {bins: [...], env: [...]}``; the same
``requires`` is also read under ``metadata.nanobot`` and ``metadata.openclaw`` so skills
written for those agents work unchanged. PyYAML's ``safe_load`` parses it: a skill file
is data, never code.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from bot.agent.skills.model import Skill
from bot.errors import SkillError

log = logging.getLogger(__name__)

SKILL_FILE = "SKILL.md"
MAX_SKILL_CHARS = 50_000
# Every description goes into each system prompt of its workspace: the cap MCP tool
# descriptions have (tools/mcp/tool.py), counted after runs of whitespace become one.
MAX_DESCRIPTION_CHARS = 1_024
_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)(.*)\Z", re.DOTALL)
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


def parse_skill(path: Path, source: str) -> Skill:
    """One skill from ``<folder>/SKILL.md``; SkillError names the file and the problem."""
    try:
        text = path.read_text(encoding="utf-8-sig")  # a BOM (Windows editors) hid the "---"
    except (OSError, UnicodeDecodeError) as exc:
        raise SkillError(f"{path}: cannot read: {exc}") from exc
    if len(text) > MAX_SKILL_CHARS:
        raise SkillError(f"{path}: {len(text):,} characters; the limit is {MAX_SKILL_CHARS:,}")
    found = _FRONT.match(text)
    if found is None:
        raise SkillError(f"{path}: no front matter (a '---' block with name and description)")
    import yaml  # on the first prompt with skills, not on the way to ready:

    try:
        meta = yaml.safe_load(found.group(1))
    except yaml.YAMLError as exc:
        raise SkillError(f"{path}: front matter is not valid YAML: {exc}") from exc
    if not isinstance(meta, dict):
        raise SkillError(f"{path}: front matter must be a mapping of keys")
    return _skill(path, meta, found.group(2).strip(), source)


def _skill(path: Path, meta: dict[str, Any], body: str, source: str) -> Skill:
    folder = path.parent
    name, description = meta.get("name"), meta.get("description")
    if not isinstance(name, str):
        raise SkillError(
            f'{path}: name must be text; quote it (name: "{folder.name}") if YAML read '
            f"it as {type(name).__name__}"
        )
    if name != folder.name or not _NAME.match(name):
        raise SkillError(
            f"{path}: name must equal the folder name {folder.name!r} "
            "(lower-case letters, digits, '-' and '_')"
        )
    if not isinstance(description, str) or not description.strip():
        raise SkillError(f"{path}: description is missing")
    description = " ".join(description.split())
    if len(description) > MAX_DESCRIPTION_CHARS:
        raise SkillError(
            f"{path}: description is {len(description):,} characters; the limit is "
            f"{MAX_DESCRIPTION_CHARS:,} (it goes into every prompt: put the rest in the body)"
        )
    always = meta.get("always", False)
    if not isinstance(always, bool):
        raise SkillError(f"{path}: always must be true or false")
    requires = _requires(path, meta)
    return Skill(
        name=str(name),
        description=description,
        body=body,
        folder=folder,
        source=source,
        always=always,
        bins=requires["bins"],
        env=requires["env"],
    )


def _requires(path: Path, meta: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """``requires`` at the top level and under the other agents' metadata, merged."""
    candidates = [meta.get("requires")]
    metadata = meta.get("metadata")
    if isinstance(metadata, dict):
        candidates += [
            agent.get("requires")
            for agent in (metadata.get("nanobot"), metadata.get("openclaw"))
            if isinstance(agent, dict)
        ]
    merged: dict[str, tuple[str, ...]] = {"bins": (), "env": ()}
    for found in candidates:
        if found is None:
            continue
        if not isinstance(found, dict):
            raise SkillError(f"{path}: requires must be a mapping (bins, env)")
        for key in merged:
            merged[key] += _strings(path, found.get(key), key)
    return {key: tuple(dict.fromkeys(values)) for key, values in merged.items()}


def _strings(path: Path, values: Any, key: str) -> tuple[str, ...]:
    values = values or []
    if not isinstance(values, list) or not all(isinstance(v, str) and v for v in values):
        raise SkillError(f"{path}: requires.{key} must be a list of names")
    return tuple(values)


def discover(folder: Path, source: str) -> tuple[dict[str, Skill], list[str]]:
    """Every ``<folder>/<name>/SKILL.md``; broken ones are reported, never fatal."""
    skills: dict[str, Skill] = {}
    problems: list[str] = []
    if not folder.is_dir():
        return skills, problems
    for path in sorted(folder.glob(f"*/{SKILL_FILE}")):
        try:
            skill = parse_skill(path, source)
        except SkillError as exc:
            problems.append(str(exc))
            continue
        skills[skill.name] = skill
    return skills, problems
