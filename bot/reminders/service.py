"""What users can do with reminders, shared by the model's tools and the slash commands.

All validation lives here, so a tool call and ``/remind`` refuse the same things with
the same words: a past or unparseable time, an invalid cron, more than ten years ahead,
an unknown zone, too many active reminders (the user's, or the chat's), someone else's
reminder, a repeat in a group more often than its minimum.

A group is shared: one member's reminders reach everyone there. So the chat has a cap of
its own beside each member's (twenty members under their own caps would otherwise fill
it), a repeat there fires at most every ``min_group_repeat`` (a per-minute one, a hundred
times over, was a hundred posts a minute nobody else could end), and an admin of the
chat's workspace lists and cancels any reminder set in it (:meth:`list_chat`,
``any_owner``), as its "/cancel N ends it" promises everyone who reads it.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from bot.errors import ChatQuotaExceeded, QuotaExceeded, ToolError
from bot.messages import ChatKey, utcnow
from bot.reminders import rezone
from bot.reminders.cron import cron_trigger, next_occurrence
from bot.reminders.schedule import describe as describe_repeat
from bot.reminders.scheduler import ReminderScheduler
from bot.reminders.timeparse import (
    DEFAULT_TIME,
    check_future,
    format_local,
    parse_when,
    read_when,
    trimmed,
)
from bot.reminders.zones import describe_zone, user_zone
from bot.store.base import Reminders, UserSettings
from bot.store.reminders import (
    Reminder,
    ReminderKind,
    ReminderStatus,
)
from bot.text import MAX_NUMBER, markdown_literal, shows_nothing

log = logging.getLogger(__name__)

MAX_CONTENT_CHARS = 2000
INTERVAL_SAMPLES = 48  # next runs of a recurring follow-up checked against the minimum
# How deep follow-ups set by follow-ups may nest: a person's message sets depth 1, its
# turn may set depth 2, that one depth 3, and a depth-3 turn sets none. Every follow-up
# is a paid model turn the owner did not ask for at that moment; one that re-arms itself
# would otherwise run forever. Three generations cover "check back later, and once more";
# something that must repeat is a recurring follow-up, which has its minimum interval.
MAX_FOLLOWUP_CHAIN = 3


class ReminderService:
    def __init__(
        self,
        store: Reminders,
        users: UserSettings,
        scheduler: ReminderScheduler,
        *,
        default_timezone: str,
        max_active_per_user: int = 100,
        max_active_per_chat: int = 100,
        clock: Callable[[], datetime] = utcnow,
        min_followup_interval: timedelta = timedelta(minutes=15),
        min_group_repeat: timedelta = timedelta(minutes=15),
    ) -> None:
        self._min_followup = min_followup_interval
        self._min_group_repeat = min_group_repeat
        self._max_in_chat = max_active_per_chat
        self._store = store
        self._users = users
        self._scheduler = scheduler
        self._default_tz = default_timezone
        self._max_active = max_active_per_user
        self._clock = clock

    async def user_timezone(self, channel: str, user_id: str) -> str:
        return await self._users.timezone(channel, user_id) or self._default_tz

    async def set_timezone(self, channel: str, user_id: str, tz_name: str) -> str:
        """Set the user's zone and move their reminders to it (:mod:`.rezone`): the
        answer says what moved."""
        tz = user_zone(tz_name)
        await self._users.set_timezone(channel, user_id, tz.key)
        moved = await self._rezone(channel, user_id, tz.key)
        now = format_local(self._clock(), tz.key)
        return f"Time zone set to {describe_zone(tz.key)}; it is now {now}.{moved}"

    async def _rezone(self, channel: str, user_id: str, tz: str) -> str:
        active = await self._store.active_for_user(channel, user_id)
        moves = rezone.plan(active, tz, self._clock())
        repeats = await self._store.rezoned_many(moves.repeats) if moves.repeats else 0
        one_offs = await self._store.rezoned_many(moves.one_offs) if moves.one_offs else 0
        for reminder_id, *_ in moves.repeats:
            if (moved := await self._store.get(reminder_id)) is not None:
                self._scheduler.schedule(moved)
        return rezone.said(repeats, one_offs, tz)

    async def create(
        self,
        key: ChatKey,
        user_id: str,
        content: str,
        when: str,
        *,
        recurrence: str | None = None,
        kind: ReminderKind = ReminderKind.REMINDER,
        source: str | None = None,
        workspace: str = "default",
        chain_depth: int = 0,
        group: bool = False,
    ) -> Reminder:
        """Validate and store a reminder. ``source`` (the message and effect that asked
        for it) makes creation idempotent when a message is replayed after a crash.
        ``chain_depth`` is that of the turn setting it (0: a person's message); a
        follow-up is one deeper, refused past :data:`MAX_FOLLOWUP_CHAIN`. ``group``: set
        in a chat others read, where a repeat keeps the group minimum."""
        if source is not None and (existing := await self._store.by_source(source)):
            return existing
        content = _valid_content(content)
        followup = kind is ReminderKind.FOLLOWUP
        if followup:
            _check_chain(chain_depth)
        tz = await self.user_timezone(key.channel, user_id)
        now = self._clock()
        recurrence = (recurrence or "").strip() or None
        if recurrence and group:
            self._check_group_repeat(recurrence, tz, now)
        first = self._first_fire(
            when, recurrence, tz, now, followup=followup, chain_depth=chain_depth
        )
        try:
            reminder = await self._store.add(
                key,
                user_id,
                content=content,
                kind=kind,
                fire_at=first,
                recurrence=recurrence,
                timezone=tz,
                source=source,
                workspace=workspace,
                max_active=self._max_active,  # counted in the insert's own transaction
                chain_depth=chain_depth + 1 if followup else 0,
                max_active_in_chat=self._max_in_chat,
            )
        except ChatQuotaExceeded:
            raise ToolError(
                f"this chat already has {self._max_in_chat} active reminders, the most "
                "allowed; cancel some first (in a group its admins can cancel any: see "
                "/reminders)"
            ) from None
        except QuotaExceeded:
            raise ToolError(
                f"you already have {self._max_active} active reminders, the most allowed; "
                "cancel some first"
            ) from None
        self._scheduler.schedule(reminder)
        return reminder

    def _first_fire(
        self,
        when: str,
        recurrence: str | None,
        tz: str,
        now: datetime,
        *,
        followup: bool,
        chain_depth: int,
    ) -> datetime:
        """When the reminder first fires; refused when past, when its schedule never
        fires, and for a follow-up that would run more often than the minimum interval
        (a schedule's runs, or one set during a follow-up: ``chain_depth`` > 0)."""
        if recurrence:
            cron_trigger(recurrence, tz)  # validate before anything else
            if followup:
                self._check_interval(recurrence, tz, now)
            start = now if when.strip().lower() in {"", "now"} else parse_when(when, tz, now)
            check_future(start, now, tz)
            first = next_occurrence(recurrence, tz, max(start, now) - _EPSILON)
            if first is None:
                raise ToolError(f"the schedule '{recurrence}' never fires")
        else:
            first = parse_when(when, tz, now)
            if followup and chain_depth:
                self._check_rearm(first, now)
        check_future(first, now, tz)
        return first

    def _check_rearm(self, first: datetime, now: datetime) -> None:
        """A one-shot follow-up set during a follow-up keeps the minimum interval a
        recurring one has: re-arming "in 1 second" made a paid turn a second."""
        if first - now < self._min_followup:
            minutes = self._min_followup.total_seconds() / 60
            raise ToolError(
                f"a follow-up set during a follow-up must be at least {minutes:g} minutes "
                "away (each run is a model call)"
            )

    def _check_interval(self, recurrence: str, tz: str, now: datetime) -> None:
        """Each follow-up is a model turn: a schedule may not fire more often than the
        minimum interval."""
        _keep_minimum(
            recurrence,
            tz,
            now,
            self._min_followup,
            "runs more often than follow-ups may: at most once every {minutes:g} minutes "
            "(each run is a model call); use a sparser cron expression, e.g. '*/30 * * * *'",
        )

    def _check_group_repeat(self, recurrence: str, tz: str, now: datetime) -> None:
        """In a group everyone gets each run: a repeat there fires at most every
        ``min_group_repeat`` (a direct chat's repeats are its person's business)."""
        cron_trigger(recurrence, tz)  # an invalid schedule says so first
        _keep_minimum(
            recurrence,
            tz,
            now,
            self._min_group_repeat,
            "repeats more often than a group allows: at most once every {minutes:g} "
            "minutes, as everyone there gets each one; repeat less often (e.g. every 30 "
            "minutes, '*/30 * * * *'), or set it in a direct chat with the bot",
        )

    async def page(self, limit: int, offset: int = 0) -> list[Reminder]:
        """One page of every active reminder, by user and chat (the admin page)."""
        return await self._store.active_page(limit, offset)

    async def list_chat(self, key: ChatKey) -> list[Reminder]:
        """Every active reminder set in ``key``'s chat (any thread), whoever set it: what
        an admin of the chat's workspace sees there."""
        return await self._store.active_in_chat(key.channel, key.chat_id)

    async def list(
        self,
        channel: str,
        user_id: str,
        workspace: str | None = None,
        *,
        chat: ChatKey | None = None,
    ) -> list[Reminder]:
        """The user's active reminders; with ``workspace``, only those set in it; with
        ``chat``, only those set in that chat (a group must not see the ones its member
        set in private)."""
        active = await self._store.active_for_user(channel, user_id, workspace)
        return [r for r in active if _set_in(r, chat)]

    async def get(self, reminder_id: int) -> Reminder | None:
        return await self._store.get(reminder_id)

    async def cancel(
        self,
        channel: str,
        user_id: str,
        reminder_id: int,
        workspace: str | None = None,
        *,
        chat: ChatKey | None = None,
        any_owner: bool = False,
    ) -> Reminder:
        """Cancel the user's active reminder; with ``chat``, only one set in that chat
        (a group's ``/cancel`` must neither show nor end what its member set in private,
        as :meth:`list` does not show it there). ``any_owner`` (with ``chat``: an admin
        of the chat's workspace there) also ends another member's reminder set in it.
        An id no row can have (a model's 20-digit number) is no reminder too: the store
        could not even look it up."""
        if not 0 < reminder_id <= MAX_NUMBER:
            raise no_such_reminder(reminder_id)
        reminder = await self._store.get(reminder_id)
        # Someone else's reminder gets the same answer as a missing one: an id must not
        # tell a stranger that it exists.
        if (
            reminder is None
            or reminder.status is not ReminderStatus.ACTIVE
            or reminder.key.channel != channel
            or (workspace is not None and reminder.workspace != workspace)
            or (reminder.user_id != user_id and not (any_owner and chat is not None))
            or not _set_in(reminder, chat)
        ):
            raise no_such_reminder(reminder_id)
        await self._store.set_status(reminder_id, ReminderStatus.CANCELLED)
        return reminder

    async def chat_gone(self, key: ChatKey, reason: str, *, thread_only: bool = False) -> int:
        """The chat refuses the bot for good (delivery saw it): its repeats and follow-ups
        are cancelled, or each would be refused (a follow-up after a paid turn) forever.
        ``thread_only``: only the key's thread is gone. One line per chat that had any."""
        thread = (key.thread_id or "") if thread_only else None
        ended = await self._store.cancel_in_chat(key.channel, key.chat_id, thread)
        if ended:
            where = key if thread_only else f"{key.channel}:{key.chat_id}"
            log.warning(
                "%d active reminders and follow-ups in %s cancelled: the chat refuses the "
                "bot for good (%s)",
                ended,
                where,
                reason,
            )
        return ended

    async def chat_moved(self, key: ChatKey, new_chat_id: str) -> int:
        """The chat lives on under ``new_chat_id`` (the platform gave it a new id): its
        active reminders and follow-ups go there, each in its thread."""
        if new_chat_id == key.chat_id:
            return 0
        moved = await self._store.move_chat(key.channel, key.chat_id, new_chat_id)
        if moved:
            log.info(
                "%d active reminders and follow-ups of %s:%s moved to its new id %s",
                moved,
                key.channel,
                key.chat_id,
                new_chat_id,
            )
        return moved


def _keep_minimum(
    recurrence: str, tz: str, now: datetime, minimum: timedelta, refusal: str
) -> None:
    """Refuses ``recurrence`` (with ``refusal``, its ``{minutes}`` filled in) when it
    fires twice within ``minimum``, checked over its next runs, so "0,1 9 * * *" counts
    too; a minimum of 0 allows anything."""
    if minimum <= timedelta(0):
        return
    fires: list[datetime] = []
    after = now
    for _ in range(INTERVAL_SAMPLES):
        nxt = next_occurrence(recurrence, tz, after)
        if nxt is None:
            break
        fires.append(nxt)
        after = nxt
    if any(b - a < minimum for a, b in itertools.pairwise(fires)):
        said = refusal.format(minutes=minimum.total_seconds() / 60)
        raise ToolError(f"the schedule '{recurrence}' {said}")


def _set_in(reminder: Reminder, chat: ChatKey | None) -> bool:
    """Whether ``reminder`` was set in ``chat`` (any of its threads); None: anywhere."""
    return chat is None or reminder.key.chat_id == chat.chat_id


def no_such_reminder(reminder_id: int | str) -> ToolError:
    """A missing, finished or someone else's reminder: one answer for all (an id must not
    tell a stranger that it exists), also for a number larger than any row id."""
    return ToolError(f"there is no active reminder #{reminder_id} of yours")


def _valid_content(content: str) -> str:
    """The reminder's text, stripped: refused empty (zero-width characters alone are)
    or over :data:`MAX_CONTENT_CHARS`, with the same words for a tool call and ``/remind``."""
    content = content.strip()
    if shows_nothing(content):
        raise ToolError("the reminder has no text; say what to remind about")
    if len(content) > MAX_CONTENT_CHARS:
        raise ToolError(f"the reminder text is over {MAX_CONTENT_CHARS} characters")
    return content


def _check_chain(chain_depth: int) -> None:
    """A follow-up's turn may set further ones only up to :data:`MAX_FOLLOWUP_CHAIN`
    deep: each is a paid model turn, and one that re-arms itself would run forever."""
    if chain_depth >= MAX_FOLLOWUP_CHAIN:
        raise ToolError(
            f"this turn is a follow-up of follow-ups ({chain_depth} deep); a follow-up "
            f"may set further ones at most {MAX_FOLLOWUP_CHAIN} deep. Answer now, or "
            "ask the user for a recurring follow-up if this must repeat"
        )


def describe(reminder: Reminder, *, chat: bool = False) -> str:
    """One line a user reads: id, when (their zone), what, how often. ``chat``: for a
    chat's Markdown, the reminder's words exactly as written (:func:`markdown_literal`)."""
    when = format_local(reminder.next_fire_at, reminder.timezone) if reminder.next_fire_at else "-"
    what = "follow-up" if reminder.kind is ReminderKind.FOLLOWUP else "reminder"
    repeat = f", repeats {describe_repeat(reminder.recurrence)}" if reminder.recurrence else ""
    words = markdown_literal(reminder.content) if chat else reminder.content
    return f"#{reminder.id} {what} at {when}{repeat}: {words}"


def confirmation(
    reminder: Reminder, when: str, *, repeat_without_time: str = "", chat: bool = False
) -> str:
    """:func:`describe` for a reminder just set from ``when``: when that named a day and
    no time of day, it also says the time taken and how to pick another; so does a
    repeat said in words with no time of day (``repeat_without_time``: its words)."""
    line = describe(reminder, chat=chat)
    if repeat_without_time:
        example = f"every {trimmed(repeat_without_time)} at 18:00"
    elif reminder.recurrence or not _default_time(reminder, when):
        return line
    else:
        example = f"{trimmed(when)} at 18:00"
    return (
        f"{line} (no time of day was given, so {DEFAULT_TIME:%H:%M}; to change it, cancel "
        f"#{reminder.id} and set it again with a time, e.g. '{example}')"
    )


def _default_time(reminder: Reminder, when: str) -> bool:
    try:  # the phrase parsed a moment ago: only whether it named a time is asked again
        return read_when(when, reminder.timezone, reminder.created_at).default_time
    except ToolError:
        return False


_EPSILON = timedelta(seconds=1)
