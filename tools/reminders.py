"""Reminder tools: create, follow up, list, cancel, and the user's time zone.

All rules live in ``bot.reminders.service.ReminderService`` (shared with the slash commands);
these classes only describe the calls to the model and format the answers.
"""

from __future__ import annotations

from typing import Any, ClassVar

from bot.agent.toolbox import ReminderAccess, ToolContext
from bot.errors import ToolError
from bot.reminders.service import confirmation, describe
from bot.reminders.zones import MAX_ZONE_CHARS
from bot.store.reminders import ReminderKind
from tools.base import Tool

_TIME_HELP = (
    "ISO 8601 ('2026-12-01T09:00' in the user's time zone, or with an offset) or a "
    "phrase ('in 10 minutes', 'tomorrow at 9am'; a day alone, 'friday', is 09:00). With "
    "a recurrence: when it starts ('now' is fine)."
)
_CRON_HELP = (
    "Optional 5-field cron expression for repeats, in the user's time zone: "
    "'0 9 * * *' daily at 9:00, '30 8 * * 1-5' weekdays at 8:30."
)


_CREATED = "reminders created"  # ctx.scratch: (kind, *_SAME) -> (id, its confirmation)
_SAME = ("content", "time", "recurrence")


def _created(ctx: ToolContext) -> dict[tuple[str, ...], tuple[int, str]]:
    """What this turn's create calls made, by their arguments: two identical calls (one
    response often holds the same call twice) made two reminders of one request."""
    made: dict[tuple[str, ...], tuple[int, str]] = ctx.scratch.setdefault(_CREATED, {})
    return made


def _service(ctx: ToolContext) -> ReminderAccess:
    if ctx.services.reminders is None:
        raise ToolError("reminders are not available in this daemon")
    return ctx.services.reminders


class CreateReminderTool(Tool):
    name = "create_reminder"
    description = (
        "Set a reminder that the bot sends to this chat at the given time, word for word, "
        "without any further thinking. Use it when the user asks to be reminded."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "content": {"type": "string", "minLength": 1, "description": "What to remind of."},
            "time": {"type": "string", "minLength": 1, "description": _TIME_HELP},
            "recurrence": {"type": ["string", "null"], "description": _CRON_HELP},
        },
        "required": ["content", "time"],
        "additionalProperties": False,
    }
    kind = ReminderKind.REMINDER

    async def execute(self, ctx: ToolContext, *args: Any, **kwargs: Any) -> str:
        """An identical call earlier in the turn answers with what it made, once more."""
        same = (self.kind.value, *(str(kwargs.get(k) or "").strip() for k in _SAME))
        if (made := _created(ctx).get(same)) is not None:
            return f"Already created {made[1]} (by an identical call in this turn; not twice)"
        reminder = await _service(ctx).create(
            ctx.chat_key,
            ctx.user_id,
            kwargs["content"],
            kwargs["time"],
            recurrence=kwargs.get("recurrence"),
            kind=self.kind,
            source=ctx.next_effect_id("reminder"),
            workspace=ctx.workspace_name,
            chain_depth=ctx.chain_depth,
            group=not ctx.direct,  # a repeat there keeps the group minimum
        )
        said = confirmation(reminder, kwargs["time"])
        _created(ctx)[same] = (reminder.id, said)
        return f"Created {said}"


class ScheduleFollowupTool(CreateReminderTool):
    name = "schedule_followup"
    description = (
        "Schedule a task for yourself: at `time`, `prompt` runs as a new turn in this chat "
        "(with tools) and its answer is sent here, e.g. 'at 7am check the weather and tell "
        "me if I need an umbrella'."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "prompt": {
                "type": "string",
                "minLength": 1,
                "description": "The instruction to carry out at that time.",
            },
            "time": {"type": "string", "minLength": 1, "description": _TIME_HELP},
            "recurrence": {"type": ["string", "null"], "description": _CRON_HELP},
        },
        "required": ["prompt", "time"],
        "additionalProperties": False,
    }
    kind = ReminderKind.FOLLOWUP

    async def execute(self, ctx: ToolContext, *args: Any, **kwargs: Any) -> str:
        kwargs["content"] = kwargs.pop("prompt")
        return await super().execute(ctx, **kwargs)


class ListRemindersTool(Tool):
    name = "list_reminders"
    description = "List the user's active reminders and scheduled follow-ups with their ids."
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }
    read_only = True

    async def execute(self, ctx: ToolContext, *args: Any, **kwargs: Any) -> str:
        reminders = await _service(ctx).list(
            ctx.chat_key.channel,
            ctx.user_id,
            ctx.workspace_name,
            chat=None if ctx.direct else ctx.chat_key,
        )
        if not reminders:
            return "No active reminders."
        return "\n".join(describe(r) for r in reminders)


class CancelReminderTool(Tool):
    name = "cancel_reminder"
    description = "Cancel one of the user's reminders or follow-ups by its id (see list_reminders)."
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"reminder_id": {"type": "integer", "minimum": 1}},
        "required": ["reminder_id"],
        "additionalProperties": False,
    }

    async def execute(self, ctx: ToolContext, *args: Any, **kwargs: Any) -> str:
        reminder = await _service(ctx).cancel(
            ctx.chat_key.channel,
            ctx.user_id,
            int(kwargs["reminder_id"]),
            ctx.workspace_name,
            chat=None if ctx.direct else ctx.chat_key,  # in a group, only that chat's
        )
        made = _created(ctx)
        for same in [k for k, (made_id, _) in made.items() if made_id == reminder.id]:
            del made[same]  # created again after this: a new one
        return f"Cancelled {describe(reminder)}"


class SetTimezoneTool(Tool):
    name = "set_timezone"
    description = (
        "Set the user's time zone (an IANA name such as 'Europe/Berlin'); reminders and "
        "times are then read and shown in it. Use it when the user says where they are."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"timezone": {"type": "string", "minLength": 1, "maxLength": MAX_ZONE_CHARS}},
        "required": ["timezone"],
        "additionalProperties": False,
    }

    async def execute(self, ctx: ToolContext, *args: Any, **kwargs: Any) -> str:
        return await _service(ctx).set_timezone(
            ctx.chat_key.channel, ctx.user_id, kwargs["timezone"]
        )


__all__ = [
    "CancelReminderTool",
    "CreateReminderTool",
    "ListRemindersTool",
    "ScheduleFollowupTool",
    "SetTimezoneTool",
]
