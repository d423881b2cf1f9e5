"""Slash commands for reminders and time zones: no model involved, so they work when
no provider is configured or the provider is down.

In a group an admin of the chat's workspace (as for /soul, /skills) sees every reminder
set there with ``/reminders`` and ends any of them with ``/cancel``: each repeat says
"/cancel N ends it" to everyone, and a member's flood of them was otherwise only
stoppable from the operator's shell."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime

from bot.errors import ToolError
from bot.handlers.commands import Command, CommandRouter
from bot.messages import InboundMessage, utcnow
from bot.reminders.phrases import is_number, is_quantity, is_unit
from bot.reminders.repeats import USAGE, every, names_no_time
from bot.reminders.service import ReminderService, confirmation, describe, no_such_reminder
from bot.reminders.timeparse import format_local, parse_when
from bot.reminders.zones import describe_zone
from bot.store.reminders import Reminder
from bot.text import row_number

MAX_WHEN_WORDS = 8
# Words a time never ends with: "tomorrow at" is cut mid-phrase; "at 5pm a" (of "at 5pm
# a quick check") and "at 5pm one" were read as a month later, "a" and "one" taken for
# "one month", and "at 5pm we" (of "we need milk") as Wednesday: dateparser's two-letter
# weekdays are words of the text, never how a reminder names a day.
_NEVER_LAST = frozenset(
    {"at", "on", "in", "by", "of", "the", "next", "this", "a", "an", "one"}
    | {"mo", "tu", "we", "th", "fr", "sa", "su"}
)


def split_when_what(args: str, tz: str, now: datetime) -> tuple[str, str]:
    """``"in 10 minutes tea"`` -> ``("in 10 minutes", "tea")``.

    An explicit separator (``|``) wins; otherwise the longest leading run of words that
    parses as a time is the time, and the rest is the reminder text. A unit is never
    split off its number ("in 1 | hour") nor a time after "at" ("tomorrow at | 8"), and
    an amount dateparser ignored at the end of the time ("tomorrow 9am 10 min standup")
    goes back to the text. All of it a time is a reminder without text.
    """
    if "|" in args:
        when, _, what = args.partition("|")
        return when.strip(), what.strip()
    if _parses(args, tz, now):
        raise ToolError(
            "the reminder has no text; say what to remind about after the time, e.g. "
            f"'/remind {args.strip()} | stretch'"
        )
    words = args.split()
    parsed: dict[int, datetime] = {}
    for n in range(1, min(len(words) - 1, MAX_WHEN_WORDS) + 1):
        if not _cuts_a_phrase(words, n) and (at := _parses(" ".join(words[:n]), tz, now)):
            parsed[n] = at
    if not parsed:
        raise ToolError(
            "usage: /remind <when> <what>, e.g. '/remind in 10 minutes tea' or "
            "'/remind tomorrow 9am | call mom'"
        )
    longest = max(parsed)
    # An amount dateparser skipped ("10 min" in "tomorrow 9am 10 min standup") is text.
    same = (n for n, at in parsed.items() if at == parsed[longest] and is_quantity(words, n))
    best = min(same, default=longest)
    return " ".join(words[:best]), " ".join(words[best:])


def _parses(text: str, tz: str, now: datetime) -> datetime | None:
    try:
        return parse_when(text, tz, now)
    except ToolError:
        return None


def _cuts_a_phrase(words: list[str], n: int) -> bool:
    """Whether ending the time before ``words[n]`` cuts it mid-phrase: dateparser
    ignores a trailing "at", and read "in 1" as January. "may" ends a time only as the
    month of a day ("on 5 may"): "at 5pm may I call" was 17:00 on 7 May."""
    last = words[n - 1].lower()
    if last == "may" and not (n > 1 and is_number(words[n - 2])):
        return True
    return last in _NEVER_LAST or (is_unit(words[n]) and is_number(last))


def _every_split(rest: str, tz: str) -> tuple[str, str]:
    """``"day at 9am water"`` -> ``("day at 9am", "water")``: the longest leading run
    of words that is a repeat."""
    words = rest.split()
    for n in range(min(len(words) - 1, MAX_WHEN_WORDS), 0, -1):
        try:
            every(" ".join(words[:n]), tz, utcnow())
        except ToolError:
            continue
        return " ".join(words[:n]), " ".join(words[n:])
    raise ToolError(USAGE)


async def _default_workspace(msg: InboundMessage) -> str:
    return "default"


def _no_admins(msg: InboundMessage, workspace: str) -> bool:
    return False


IsAdmin = Callable[[InboundMessage, str], bool]  # (message, its chat's workspace)


class _ReminderCommands:
    """The commands' handlers, sharing the service, the clock and the workspace lookup."""

    def __init__(
        self,
        service: ReminderService,
        clock: Callable[[], datetime],
        workspace_of: Callable[[InboundMessage], Awaitable[str]],
        is_admin: IsAdmin,
    ) -> None:
        self._service = service
        self._clock = clock
        self._workspace_of = workspace_of
        self._is_admin = is_admin

    def _group_admin(self, msg: InboundMessage, workspace: str) -> bool:
        """Whether ``msg`` is from an admin of the chat's workspace, in a group (in a
        direct chat everyone sees and cancels only their own, as before)."""
        return not msg.direct and self._is_admin(msg, workspace)

    async def remind(self, msg: InboundMessage, args: str) -> str:
        """``/remind <when> <what>`` or ``/remind every <repeat> <what>``; the message's
        id as the source, so a message replayed after a crash sets it once."""
        tz = await self._service.user_timezone(msg.key.channel, msg.user_id)
        when, what, recurrence, untimed = args, "", None, ""
        head, _, rest = args.strip().partition(" ")
        if head.lower() == "every":
            when, what = rest.partition("|")[::2] if "|" in rest else _every_split(rest, tz)
            untimed = when if names_no_time(when) else ""
            when, recurrence = "now", every(when, tz, self._clock())
        else:
            when, what = split_when_what(args, tz, self._clock())
        reminder = await self._service.create(
            msg.key,
            msg.user_id,
            what.strip(),
            when,
            recurrence=recurrence,
            source=f"{msg.key}:{msg.message_id}#command",
            workspace=await self._workspace_of(msg),
            group=not msg.direct,
        )
        return f"OK, {confirmation(reminder, when, repeat_without_time=untimed, chat=True)}"

    async def reminders(self, msg: InboundMessage, args: str) -> str:
        """``/reminders``: the sender's active reminders in this chat's workspace; a
        group's admin gets every reminder set in the group, each with who set it."""
        workspace = await self._workspace_of(msg)
        if self._group_admin(msg, workspace):
            return _chat_listing(msg, await self._service.list_chat(msg.key))
        # In a group only what was set in this chat: the rest is nobody else's business.
        active = await self._service.list(
            msg.key.channel,
            msg.user_id,
            workspace,
            chat=None if msg.direct else msg.key,
        )
        where = "" if msg.direct else " in this chat"
        if not active:
            return f"You have no active reminders{where}."
        return f"Your reminders{where}:\n" + "\n".join(describe(r, chat=True) for r in active)

    async def cancel(self, msg: InboundMessage, args: str) -> str:
        """``/cancel 3``, or several at once (``/cancel 3 4 #5``, ``3,4``): each id is
        cancelled or named as not found; one id alone fails as a whole. In a group only
        the reminders set in it, the ones its ``/reminders`` lists (a group admin's: any
        member's). Anything but ASCII digits is the usage ("²" is no id); digits past any
        row id are not found."""
        idents = list(dict.fromkeys(a.lstrip("#") for a in args.replace(",", " ").split()))
        if not idents or not all(ident.isascii() and ident.isdigit() for ident in idents):
            raise ToolError("usage: /cancel <id> [<id> ...]  (see /reminders for the ids)")
        workspace = await self._workspace_of(msg)
        admin = self._group_admin(msg, workspace)
        lines = []
        for ident in idents:
            try:
                number = row_number(ident)
                if number is None:
                    raise no_such_reminder(ident)
                cancelled = await self._service.cancel(
                    msg.key.channel,
                    msg.user_id,
                    number,
                    None if admin else workspace,  # an admin: any set in this chat
                    chat=None if msg.direct else msg.key,  # as /reminders lists them
                    any_owner=admin,
                )
            except ToolError as exc:
                if len(idents) == 1:
                    raise
                lines.append(f"Error: {exc}")
            else:
                lines.append(f"Cancelled {describe(cancelled, chat=True)}")
        return "\n".join(lines)

    async def timezone(self, msg: InboundMessage, args: str) -> str:
        """``/timezone`` shows the sender's zone and local time; ``/timezone <zone>`` sets it."""
        if not args.strip():
            tz = await self._service.user_timezone(msg.key.channel, msg.user_id)
            return (
                f"Your time zone is {describe_zone(tz)}; it is now "
                f"{format_local(self._clock(), tz)}. Change it with /timezone <zone>, e.g. "
                "/timezone Europe/Berlin (a city's zone keeps its summer time)"
            )
        return await self._service.set_timezone(msg.key.channel, msg.user_id, args)


def _chat_listing(msg: InboundMessage, active: list[Reminder]) -> str:
    """A group's reminders for its admin: each names who set it, unless the admin did."""
    if not active:
        return "There are no active reminders in this chat."
    lines = [
        describe(r, chat=True) + ("" if r.user_id == msg.user_id else f" (set by {r.user_id})")
        for r in active
    ]
    return "Reminders in this chat (as an admin you can /cancel any):\n" + "\n".join(lines)


def register_reminder_commands(
    router: CommandRouter,
    service: ReminderService,
    clock: Callable[[], datetime] = utcnow,
    workspace_of: Callable[[InboundMessage], Awaitable[str]] = _default_workspace,
    is_admin: IsAdmin = _no_admins,
) -> None:
    """``workspace_of`` names the chat's workspace: reminders are kept per workspace;
    ``is_admin`` tells its admins, who see and cancel any reminder set in a group."""
    commands = _ReminderCommands(service, clock, workspace_of, is_admin)
    router.register(
        Command(
            "remind",
            "/remind <when> <what> | every <repeat> <what>",
            "set a reminder",
            commands.remind,
        )
    )
    router.register(Command("reminders", "/reminders", "list your reminders", commands.reminders))
    router.register(
        Command("cancel", "/cancel <id> [<id> ...]", "cancel reminders", commands.cancel)
    )
    router.register(
        Command("timezone", "/timezone [zone]", "show or set your time zone", commands.timezone)
    )
