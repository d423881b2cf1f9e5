"""Slash commands that need no model: they work when no provider is configured or up.

Commands are registered by name, so later features (reminders, time zones, weather)
add theirs without touching the dispatcher. A command runs inside the chat's worker,
so it is ordered with the chat's other messages.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

from bot.messages import TO_ANY_BOT, InboundMessage

log = logging.getLogger(__name__)

# ASCII letter first, like the platforms' own command names: "/123", "/²" are not commands.
_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
# "/name[@bot]" then arguments after any whitespace (a newline too).
_COMMAND = re.compile(r"/(\S+)(.*)", re.DOTALL)

CommandFunc = Callable[[InboundMessage, str], Awaitable[str]]  # its reply; "": none

# Sent by a platform itself (a "Start" button on a first visit): a greeting
# for the assistant, not a mistyped command; in a group, only when it names the bot
# (a bare /start there goes to every bot, mostly to another one).
GREETINGS = frozenset({"start"})


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    usage: str
    summary: str
    func: CommandFunc


def parse_command(text: str) -> tuple[str, str] | None:
    """``"/remind@MyBot in 5m tea"`` -> ``("remind", "in 5m tea")``; None if not a command."""
    found = _COMMAND.fullmatch(text.strip())
    if found is None:
        return None
    head, rest = found.groups()
    name = head.split("@", 1)[0].lower()
    if not _NAME.fullmatch(name):
        return None
    return name, rest.strip()


class CommandRouter:
    def __init__(self, hints: Mapping[str, str] | None = None) -> None:
        """``hints``: per channel, how its users type a command where a plain ``/name``
        does not reach the bot (a client that takes "/" for its own commands); /help
        there says it, or its list was of commands no one could send."""
        self._commands: dict[str, Command] = {}
        self._hints = dict(hints or {})
        self.register(Command("help", "/help", "show the commands", self._help))

    def register(self, command: Command) -> None:
        self._commands[command.name] = command

    def names(self) -> list[str]:
        return sorted(self._commands)

    def match(self, msg: InboundMessage) -> tuple[Command, str] | None:
        """The command ``msg`` names, if a person sent it. A scheduled follow-up's prompt
        was written by the model (perhaps steered by someone else's text): run as a
        command it would act with its owner's rights (``/approve``, ``/soul set``)
        without any model call, so a machine-made message is always an agent turn."""
        if not msg.from_person:
            return None
        parsed = parse_command(msg.text)
        if parsed is None:
            return None
        name, args = parsed
        cmd = self._commands.get(name)
        if cmd is None:
            if msg.extras.get(TO_ANY_BOT):  # another bot's (/ban, /start), or "/etc is full"
                cmd = Command(name, f"/{name}", "not ours", _silent)
            elif name in GREETINGS:  # to us: the assistant greets
                return None
            else:  # a typo costs no model call and says where the list is
                cmd = Command(name, f"/{name}", "unknown", self._unknown)
        return cmd, args

    def for_another_bot(self, msg: InboundMessage) -> bool:
        """A bare /command a platform handed to every bot in a group that names none of
        ours (a dice bot's /roll): another bot's to answer, so it costs its sender nothing
        here. One registered only when the agent side is built (right after ready) may
        count as another bot's before then: uncharged, it still runs."""
        parsed = parse_command(msg.text) if msg.extras.get(TO_ANY_BOT) else None
        return parsed is not None and parsed[0] not in self._commands

    async def _unknown(self, msg: InboundMessage, args: str) -> str:
        parsed = parse_command(msg.text)
        return f"Unknown command /{parsed[0] if parsed else ''}, see /help."

    async def _help(self, msg: InboundMessage, args: str) -> str:
        lines = ["Commands (they work even when the model is down):"]
        lines += [f"{c.usage} — {c.summary}" for c in sorted(self._commands.values(), key=_name)]
        lines.append("Anything else you write goes to the assistant.")
        if hint := self._hints.get(msg.key.channel):
            lines.append(hint)
        return "\n".join(lines)


async def _silent(msg: InboundMessage, args: str) -> str:
    return ""  # no reply


def _name(c: Command) -> str:
    return c.name
