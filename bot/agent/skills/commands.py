"""``/skills``: admins list a workspace's skills and enable or disable them from the chat."""

from __future__ import annotations

from collections.abc import Callable

from bot.agent.skills.catalog import SkillCatalog
from bot.agent.skills.model import SkillState
from bot.errors import SkillError, ToolError
from bot.handlers.commands import Command, CommandRouter
from bot.messages import InboundMessage
from bot.workspaces.routing import WorkspaceOf, workspace_for

USAGE = "/skills [enable|disable <name>]"


def describe(state: SkillState) -> str:
    marks = []
    if not state.enabled:
        marks.append("disabled")
    if state.missing:
        marks.append(f"unavailable: missing {', '.join(state.missing)}")
    if state.skill.always:
        marks.append("always on")
    marks.append(state.skill.source)
    return f"- {state.skill.name} ({'; '.join(marks)}): {state.skill.description}"


def skills_listing(catalog: SkillCatalog, workspace: str) -> str:
    """The skipped files first: a long listing is cut at the end, and they are what
    needs fixing."""
    lines: list[str] = []
    problems = catalog.problems(workspace)
    if problems:
        lines.append("Skipped (fix these files):")
        lines += [f"- {p}" for p in problems]
    lines.append(f"Skills of workspace {workspace}:")
    lines += [describe(s) for s in catalog.states(workspace)] or ["(none)"]
    return "\n".join(lines)


def toggle(catalog: SkillCatalog, workspace: str, name: str, enable: bool) -> str:
    """What ``/skills enable|disable`` says; a refusal (no such skill) as a ToolError, so
    it reads "Error: ..." like every other command's."""
    word = "enabled" if enable else "disabled"
    known = {s.skill.name: s for s in catalog.states(workspace)}
    if name in known and known[name].enabled == enable:
        return f"Skill {name} is already {word}; nothing changed."
    try:
        state = catalog.set_enabled(workspace, name, enable)
    except SkillError as exc:
        raise ToolError(f"{exc}; /skills lists them") from None
    return f"Skill {state.skill.name} is now {word}."


def register_skill_commands(
    router: CommandRouter,
    catalog: SkillCatalog,
    *,
    is_admin: Callable[[InboundMessage, str], bool],
    workspace_of: WorkspaceOf,
) -> None:
    """``is_admin(msg, workspace)``: the global admins and that workspace's own, as for
    ``/soul``."""

    async def skills(msg: InboundMessage, args: str) -> str:
        workspace = await workspace_for(workspace_of, msg)
        if not is_admin(msg, workspace):  # the listing names files on the server
            return "Only an admin can list, enable or disable skills."
        # skill names are lower-case (the folder's): "/skills enable Reminders" is reminders
        action, _, name = args.strip().lower().partition(" ")
        if not action:
            return skills_listing(catalog, workspace)
        if action not in ("enable", "disable") or not name.strip():
            raise ToolError(f"usage: {USAGE}")
        return toggle(catalog, workspace, name.strip(), action == "enable")

    router.register(Command("skills", USAGE, "admins: list, enable or disable skills", skills))
