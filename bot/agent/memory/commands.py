"""``/memory`` and ``/forget``: people see what is remembered about them and correct it.

Each fact is shown with its stored id (``#12``), the number ``/forget`` takes: a fact
learned between ``/memory`` and ``/forget`` shifts no number, so the fact removed is the
one that was read (``bot memory list`` shows the same ids). Your facts come first (one
kept only in this chat, as what a group taught is, says so), then this chat's; the ids
are not a list's "1." either, which a chat's Markdown would renumber. Your own facts,
those kept here included, are yours to remove; the chat's facts are removed by an admin,
or by you in a one-to-one chat (a direct message, as the channel knows it: on most
platforms a DM's id is not the user's id, so comparing the two would never let a DM's
owner in).
"""

from __future__ import annotations

from collections.abc import Callable

from bot.agent.memory.service import Known, MemoryService
from bot.handlers.commands import Command, CommandRouter
from bot.messages import InboundMessage
from bot.store.memory import Fact, Scope
from bot.text import row_number
from bot.workspaces.routing import WorkspaceOf, workspace_for

FORGET_USAGE = "/forget <n> [<n> ...]|all"


def listing(known: Known) -> str:
    if not known.numbered:
        return "I remember nothing about you or this chat yet."
    lines: list[str] = []
    for title, facts in (("About you:", known.user), ("About this chat:", known.chat)):
        if not facts:
            continue
        lines.append(title)
        for fact in facts:
            only_here = " (only in this chat)" if fact.scope is Scope.USER and fact.chat else ""
            lines.append(f"#{fact.id} {fact.text}{only_here}")
    example = known.numbered[0].id
    lines.append(
        f"Remove one with /forget and its number (/forget {example}), "
        "or all of it with /forget all."
    )
    return "\n".join(lines)


def register_memory_commands(
    router: CommandRouter,
    memory: MemoryService,
    *,
    is_admin: Callable[[InboundMessage, str], bool],
    workspace_of: WorkspaceOf,
) -> None:
    """``is_admin(msg, workspace)``: the global admins and that workspace's own, as for
    ``/soul``."""

    def may_edit_chat(msg: InboundMessage, workspace: str) -> bool:
        return is_admin(msg, workspace) or msg.direct

    async def show(msg: InboundMessage, args: str) -> str:
        return listing(
            await memory.known(await workspace_for(workspace_of, msg), msg.key, msg.user_id)
        )

    async def forget(msg: InboundMessage, args: str) -> str:
        workspace = await workspace_for(workspace_of, msg)
        known = await memory.known(workspace, msg.key, msg.user_id)
        may = may_edit_chat(msg, workspace)
        arg = args.strip().lower()
        if arg == "all":
            gone: list[Fact] = list(known.user)
            if may:
                gone += known.chat
            count = await memory.forget(gone, by=msg.sender)
            kept = "" if may or not known.chat else " (this chat's need an admin)"
            return f"Forgot {count} fact{'s' if count != 1 else ''}{kept}."
        # "/forget 2", "/forget #2", several as /cancel takes them: "/forget 2 3", "2,3"
        numbers = list(dict.fromkeys(a.lstrip("#") for a in arg.replace(",", " ").split()))
        if not numbers or not all(n.isascii() and n.isdigit() for n in numbers):  # not "²"
            return f"usage: {FORGET_USAGE} (numbers as /memory shows them)"
        said = []
        for number in numbers:
            said.append(await _forget_one(known.numbered, number, msg, may))
        return "\n".join(said)

    async def _forget_one(
        numbered: list[Fact], number: str, msg: InboundMessage, may_edit_chat: bool
    ) -> str:
        index = row_number(number)
        fact = next((f for f in numbered if f.id == index), None)
        if fact is None:
            return f"There is no fact {number}; /memory shows each fact with its number."
        if fact.scope is Scope.CHAT and not may_edit_chat:
            return "Only an admin can remove this chat's facts."
        await memory.forget([fact], by=msg.sender)
        return f"Forgot: {fact.text}"

    router.register(Command("memory", "/memory", "what I remember about you and this chat", show))
    router.register(Command("forget", FORGET_USAGE, "remove remembered facts", forget))
