"""``[workspaces]``: which chat uses which workspace, file budgets, per-workspace admins.

``[workspaces.routes]`` maps a routing key (``"<channel>:<chat id>"``, or the key a
channel gives its tenancy unit such as a team or a guild, ``"*"`` for the rest) to a
workspace name; every other table under ``[workspaces]`` is one workspace's own
section, e.g. ``[workspaces.team]`` with ``admins = [...]``: who may edit that
workspace besides the global ``admins``, and ``disabled_tools = [...]``: tools its
model is not offered.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

from pydantic import ConfigDict, Field, ValidationError, field_validator, model_validator

from bot.config.admins import admin_entries
from bot.config.section import Section

WORKSPACE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
DEFAULT_ROUTES = {"*": "default"}


def check_workspace_name(name: str) -> str:
    if not WORKSPACE_NAME.fullmatch(name):
        raise ValueError(
            f"invalid workspace name {name!r}: use 1-64 of a-z, 0-9, '_' and '-', "
            "starting with a letter or digit"
        )
    return name


def _not_a_key(name: str, known: set[str]) -> str:
    import difflib  # only for a mistake

    close = difflib.get_close_matches(name, sorted(known), n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return (
        f"unknown key {name!r}: {hint}(its keys are {', '.join(sorted(known))}; a table "
        f"[workspaces.<name>] is one workspace's section)"
    )


class WorkspaceSection(Section):
    """``[workspaces.<name>]``."""

    admins: list[str] = Field(default=[])
    # Tools this workspace's model is not offered (e.g. ["web_fetch", "web_search"]).
    disabled_tools: list[str] = Field(default=[])

    @field_validator("admins")
    @classmethod
    def _admin_entries(cls, values: list[str]) -> list[str]:
        return admin_entries(values)

    @field_validator("disabled_tools")
    @classmethod
    def _final_result_stays(cls, names: list[str]) -> list[str]:
        if "final_result" in names:
            raise ValueError("final_result cannot be disabled: every turn ends with it")
        return names


class WorkspacesSettings(Section):
    model_config = ConfigDict(extra="allow", validate_default=True)

    routes: dict[str, str] = Field(default_factory=lambda: dict(DEFAULT_ROUTES))
    # Each persona file (AGENTS.md, SOUL.md, USER.md) may hold at most this many characters;
    # a longer text is refused, never cut.
    max_file_chars: int = Field(default=8_000, ge=100, le=1_000_000)

    @field_validator("routes")
    @classmethod
    def _route_targets(cls, routes: dict[str, str]) -> dict[str, str]:
        for target in routes.values():
            check_workspace_name(target)
        return routes

    @model_validator(mode="before")
    @classmethod
    def _sections(cls, data: Any) -> Any:
        """Every extra table is a workspace: a valid name with a valid section."""
        if not isinstance(data, dict):
            return data
        known = set(cls.model_fields)
        out = dict(data)
        for name, value in data.items():
            if name in known:
                continue
            if not isinstance(value, dict):  # a misspelled key, not a [workspaces.<name>]
                raise ValueError(_not_a_key(name, known))
            check_workspace_name(name)
            try:
                out[name] = WorkspaceSection.model_validate(value)
            except ValidationError as exc:  # said with its own path, not "workspaces"
                first = exc.errors()[0]
                where = ".".join(str(part) for part in ("workspaces", name, *first["loc"]))
                if first["type"] == "extra_forbidden":
                    raise ValueError(f"unknown key {where!r}") from None
                said = str(first["msg"]).removeprefix("Value error, ")
                raise ValueError(f"{where!r}: {said}") from None
        return out

    def sections(self) -> dict[str, WorkspaceSection]:
        extra = self.__pydantic_extra__ or {}
        return {k: v for k, v in extra.items() if isinstance(v, WorkspaceSection)}

    def admins_of(self, name: str) -> list[str]:
        section = self.sections().get(name)
        return list(section.admins) if section else []

    def names(self) -> list[str]:
        """Every workspace the config names (route targets and sections), sorted."""
        return sorted({*self.routes.values(), *self.sections()})

    def unknown_tools(self, known: Collection[str]) -> list[str]:
        """A line for each ``disabled_tools`` entry that names none of the ``known``
        tools, with the one likely meant: a misspelled name turns nothing off, and
        refusing it would stop a config that loaded before. ``mcp_*`` names pass (MCP
        tools register after start-up)."""
        import difflib  # only for a mistake

        lines = []
        for workspace, section in self.sections().items():
            for name in section.disabled_tools:
                if name in known or name.startswith("mcp_"):
                    continue
                close = difflib.get_close_matches(name, sorted(known), n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                lines.append(
                    f"[workspaces.{workspace}] disabled_tools: {name!r} names no tool; "
                    f"{hint}it turns nothing off (the tools: {', '.join(sorted(known))})"
                )
        return lines
