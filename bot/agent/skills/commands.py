"""``/skills``: admins list a workspace's skills and enable or disable them from the chat."""

from __future__ import annotations

from collections.abc import Callable

from bot.agent.skills.catalog import SkillCatalog
from bot.agent.skills.model import SkillState
from bot.errors import SkillError
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
    states = catalog.states(workspace)
    lines = [f"Skills of workspace {workspace}:"]
    lines += [describe(s) for s in states] or ["(none)"]
    problems = catalog.problems(workspace)
    if problems:
        lines.append("Skipped (fix these files):")
        lines += [f"- {p}" for p in problems]
    return "\n".join(lines)


def register_skill_commands(
    router: CommandRouter,
    catalog: SkillCatalog,
    *,
    is_admin: Callable[[InboundMessage], bool],
    workspace_of: WorkspaceOf,
) -> None:
    async def skills(msg: InboundMessage, args: str) -> str:
        if not is_admin(msg):  # the listing names files on the server: admins only
            return "Only an admin can list, enable or disable skills."
        workspace = await workspace_for(workspace_of, msg)
        action, _, name = args.strip().partition(" ")
        if not action:
            return skills_listing(catalog, workspace)
        if action not in ("enable", "disable") or not name.strip():
            return f"usage: {USAGE}"
        try:
            state = catalog.set_enabled(workspace, name.strip(), action == "enable")
        except SkillError as exc:
            return str(exc)
        return f"Skill {state.skill.name} is now {'enabled' if state.enabled else 'disabled'}."

    router.register(Command("skills", USAGE, "admins: list, enable or disable skills", skills))
