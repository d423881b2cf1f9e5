"""``/soul``, ``/agents``, ``/user`` and ``/workspace``: admins edit a workspace from chat.

No model is involved. A non-admin's attempt is refused and recorded. The text of
``set`` and ``append`` is the rest of the message exactly as sent (several lines too).
"""

from __future__ import annotations

import logging
import re

from bot.errors import WorkspaceError
from bot.handlers.commands import Command, CommandFunc, CommandRouter
from bot.messages import InboundMessage
from bot.store.workspaces import PersonaVersion
from bot.text import row_number
from bot.workspaces.admins import WorkspaceAdmins
from bot.workspaces.files import workspace_name
from bot.workspaces.personas import Personas, describe
from bot.workspaces.routing import WorkspaceRouter

log = logging.getLogger(__name__)

VIA = "chat"
HISTORY_SHOWN = 20
# "/soul[@bot] <sub> <text...>": the text keeps its own lines and inner spacing.
_RAW = re.compile(r"\s*/\S+\s+(\S+)(.*)", re.DOTALL)
_LEAD = re.compile(r"^[ \t]*\n?")
COMMAND_FILES = {"soul": "SOUL.md", "agents": "AGENTS.md", "user": "USER.md"}


def subcommand(msg: InboundMessage, args: str) -> tuple[str, str]:
    """``("set", text as sent)`` from the raw message; ``("", "")`` for a bare command."""
    if not args.strip():
        return "", ""
    found = _RAW.match(msg.text)
    if found is None:
        return "", ""
    return found.group(1).lower(), _LEAD.sub("", found.group(2), count=1)


class WorkspaceCommands:
    def __init__(
        self, personas: Personas, router: WorkspaceRouter, admins: WorkspaceAdmins
    ) -> None:
        self.personas = personas
        self.router = router
        self.admins = admins

    def register(self, commands: CommandRouter) -> None:
        for name, file in COMMAND_FILES.items():
            commands.register(
                Command(
                    name,
                    f"/{name} [set <text> | append <text> | history | diff <n> | rollback <n>]",
                    f"show or edit {file} of this chat's workspace (admins)",
                    self._file_command(file),
                )
            )
        commands.register(
            Command(
                "workspace",
                "/workspace [use <name> | new <name>]",
                "show or change this chat's workspace, or make a new one (admins)",
                self.workspace,
            )
        )

    async def _refuse(self, msg: InboundMessage, workspace: str, file: str, action: str) -> str:
        await self.personas.records.refused(
            workspace, file, author=msg.sender, via=VIA, action=action, reason="not an admin"
        )
        log.warning("%s refused: %s is not an admin of workspace %s", action, msg.sender, workspace)
        return (
            f"Only an admin of workspace {workspace} can do that; "
            "this attempt was refused and recorded."
        )

    def _file_command(self, file: str) -> CommandFunc:
        async def run(msg: InboundMessage, args: str) -> str:
            workspace = await self.router.resolve(msg)
            sub, text = subcommand(msg, args)
            action = f"/{file.removesuffix('.md').lower()} {sub}".strip()
            if not self.admins.is_admin(msg, workspace):
                return await self._refuse(msg, workspace, file, action)
            return await self._edit(msg, workspace, file, sub, text)

        return run

    async def _edit(self, msg: InboundMessage, ws: str, file: str, sub: str, text: str) -> str:
        p, who = self.personas, msg.sender
        if sub == "":
            return await p.show(ws, file)
        if sub in ("set", "append"):
            if not text.strip():
                raise WorkspaceError(f"usage: /{_cmd(file)} {sub} <text>")
            edit = p.set if sub == "set" else p.append
            return saved_note(file, ws, await edit(ws, file, text, author=who, via=VIA), p)
        if sub == "history":
            versions = await p.history(ws, file)
            shown = versions[-HISTORY_SHOWN:]
            head = f"{file} of workspace {ws}: {len(versions)} version(s), newest last"
            return "\n".join([head, *(describe(v) for v in shown)])
        if sub in ("diff", "rollback"):
            usage = f"usage: /{_cmd(file)} {sub} <n>  (see /{_cmd(file)} history)"
            number = _number(text, usage, f"{file} of workspace {ws} has no version")
            if sub == "diff":  # fenced: chat apps would render "+", "-" lines as markup
                return f"```diff\n{await p.diff(ws, file, number)}\n```"
            version = await p.rollback(ws, file, number, author=who, via=VIA)
            return saved_note(file, ws, version, p, f"version {number} restored")
        raise WorkspaceError(
            f"usage: /{_cmd(file)} [set <text> | append <text> | history | diff <n> | rollback <n>]"
        )

    async def workspace(self, msg: InboundMessage, args: str) -> str:
        current = await self.router.resolve(msg)
        sub, rest = subcommand(msg, args)
        action = f"/workspace {sub}".strip()
        # names are lower-case (bot/config/workspaces.py): "/workspace new Team" is "team"
        target = rest.strip().lower() if sub in ("use", "new") else current
        if not self.admins.is_admin(msg, current) or not self.admins.is_admin(msg, target):
            return await self._refuse(msg, target, "-", action)
        if sub not in ("", "use", "new"):
            raise WorkspaceError("usage: /workspace [use <name> | new <name>]")
        if sub == "":
            known = ", ".join(self.personas.folders.names()) or current
            return f"This chat uses workspace {current}. Workspaces: {known}."
        if not target:
            raise WorkspaceError(f"usage: /workspace {sub} <name>")
        if sub == "new" and self.personas.folders.exists(workspace_name(target)):
            raise WorkspaceError(f"workspace {target} exists already: /workspace use {target}")
        await self.router.use(msg.key, target, set_by=msg.sender, create=sub == "new")
        made = "a new " if sub == "new" else ""
        return f"This chat now uses {made}workspace {target}."


def _cmd(file: str) -> str:
    return file.removesuffix(".md").lower()


def _number(text: str, usage: str, missing: str) -> int:
    """The version typed: anything but ASCII digits is ``usage`` ("³" is no number);
    digits past any row id are a version that does not exist (SQLite overflowed)."""
    value = text.strip().lstrip("#")
    if not (value.isascii() and value.isdigit()):
        raise WorkspaceError(usage)
    number = row_number(value)
    if number is None:
        raise WorkspaceError(f"{missing} {value}")
    return number


def saved_note(
    file: str, ws: str, version: PersonaVersion | None, personas: Personas, what: str = "saved"
) -> str:
    if version is None:
        return f"{file} of workspace {ws} already says exactly that; nothing changed."
    return (
        f"{file} of workspace {ws}: {what} as version {version.version} "
        f"({personas.size_line(version.text)}). The next reply uses it."
    )
