"""The contract every channel adapter fulfils, and the spec each platform package exports.

An adapter normalizes platform updates into :class:`InboundMessage`, hands them to the
``put_inbound`` callable it was started with (which returns once the message is
journaled, so the adapter may acknowledge its platform only then), and turns
:class:`OutboundMessage` into platform posts. It holds no agent logic and never sees the
bus or the store.

The contract is deliberately small: ``start``, ``stop``, ``send``. Everything a platform
may or may not offer (editing, typing indicators, reactions, file transfer, webhook
routes) is a separate ``runtime_checkable`` Protocol the adapter implements or not, so
no adapter carries stub methods.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeGuard, TypeVar, runtime_checkable

from pydantic import BaseModel, SecretStr

from bot.messages import ChatKey, InboundMessage, OutboundMessage

if TYPE_CHECKING:  # aiohttp only as types: reading the settings must not import it
    import aiohttp
    from aiohttp import web

    from bot.ops.checks import Check

PutInbound = Callable[[InboundMessage], Awaitable[None]]
"""Journal one inbound message; returns once it is durable (then acknowledge the platform)."""


@dataclass(frozen=True, slots=True)
class Sent:
    """The platform ids of what one ``send`` posted, in order (a long answer is split)."""

    ids: tuple[str, ...] = ()

    @property
    def first(self) -> str | None:
        return self.ids[0] if self.ids else None

    @property
    def last(self) -> str | None:
        return self.ids[-1] if self.ids else None


class Channel(Protocol):
    name: str
    # Local channels (the terminal) skip allow_from: whoever runs them owns the daemon.
    trusted: bool

    @property
    def connected(self) -> bool:
        """True while the adapter can receive and send (health checks read it)."""
        ...

    async def start(self, put_inbound: PutInbound) -> None:
        """Connect and begin handing inbound messages to ``put_inbound``; return once started.

        Raise :class:`bot.errors.ChannelError` when the channel cannot work at all (a
        refused token); a platform that is only unreachable is retried in the background.
        """
        ...

    async def send(self, msg: OutboundMessage) -> Sent:
        """Deliver one message; raise ChannelError when the platform refuses it.

        Outbound attachments are uploaded where the platform can, otherwise the user is
        told they could not be sent; never silently dropped.

        With ``msg.preview_id`` set (only adapters that are :class:`SupportsPreview`
        ever get one), the answer's first part replaces that preview's text in place,
        formatted as any answer; "not modified" is success (so a send retried after a
        crash is harmless); the rest follows as new messages, in order; ``Sent.ids``
        starts with the preview's id. A preview that can no longer be edited (deleted,
        too old, not found) is deleted (best effort) and the answer posted as new
        messages. A rate limit here is the answer's own: handled as for any send.
        """
        ...

    async def stop(self) -> None: ...


@runtime_checkable
class SupportsTyping(Protocol):
    async def typing(self, key: ChatKey, message_id: str | None = None) -> None:
        """Show a typing / working indicator in the chat while a turn runs.

        ``message_id``: the inbound message being answered, for a platform whose signal
        marks the message itself (Slack's :eyes:). The process running a turn need not
        be the one that received its message (replicas), so it cannot look it up."""
        ...


@runtime_checkable
class MarksWorking(Protocol):
    """A working signal that stays on the message until taken off (Slack's :eyes:), not
    one that lapses by itself (Telegram's and Discord's "typing"). It comes off with the
    answer's final send; this is for a turn that ends without one."""

    async def done_working(self, key: ChatKey, message_id: str) -> None:
        """The turn answering ``message_id`` ended without an answer (stopped)."""
        ...


@runtime_checkable
class SupportsEdit(Protocol):
    async def edit(self, key: ChatKey, message_id: str, text: str) -> None:
        """Replace the text of a message this adapter sent (streaming, placeholders)."""
        ...


@runtime_checkable
class SupportsPreview(Protocol):
    """Streamed replies: a preview message whose text grows while the model writes,
    then becomes the final answer in place (the design: ``bot/streaming/``).

    The core decides *when* (at most one call per chat per ``preview_interval``, latest
    text wins, never queued, nothing before ``[streaming] min_chars``) and calls these
    from a task of its own, never from delivery's lanes. The adapter only talks to the
    platform. Every method is called with at most one call in flight per preview.

    Rules for every preview call:

    - Never wait out a rate limit in place: raise
      :class:`bot.errors.PreviewRateLimited` with the platform's ``retry_after`` (a 429,
      Telegram's RetryAfter, Slack's ``ratelimited``). The core then pauses previews of
      that chat only; another chat and the final answer are never held up by it.
    - Any other failure raises :class:`bot.errors.ChannelError` (the core counts it and
      stops previewing the turn after a few; the final answer still arrives).
    - Text is plain (no platform formatting: a half-written ``**`` must not break a
      render), at most :meth:`preview_limit` characters; the adapter may trim it further.

    The final answer is NOT sent through these methods: it goes through the outbox to
    :meth:`Channel.send` with ``OutboundMessage.preview_id`` set (see :class:`Channel`).
    """

    def preview_limit(self, key: ChatKey) -> int:
        """The most characters (``len``) one message may hold in this chat: a longer
        preview is cut there and no longer edited; the final continues past it in new
        messages."""
        ...

    def preview_interval(self, key: ChatKey, configured: float) -> float:
        """The least seconds between two preview calls in ``key``'s chat. ``configured``
        is ``[streaming] private_interval_s`` or ``group_interval_s``; return it, or more
        where the platform needs it (a budget per workspace), or 0 for a local sink."""
        ...

    async def post_preview(self, key: ChatKey, text: str, reply_to: str | None) -> str:
        """Post a new message with ``text`` in the chat (and thread) of ``key``,
        replying to ``reply_to`` where the platform shows replies the way a final
        answer's first part does; return its platform message id (what ``edit_preview``,
        ``delete_preview`` and ``OutboundMessage.preview_id`` name). The core stores
        that id durably before its first edit."""
        ...

    async def edit_preview(self, key: ChatKey, message_id: str, text: str) -> None:
        """Replace the preview's text with ``text`` (the whole text, not a delta).
        "Message is not modified" (same text) is success."""
        ...

    async def delete_preview(self, key: ChatKey, message_id: str) -> None:
        """Remove a preview that will not become the answer (an orphan after a
        crash). Already deleted or not found is success."""
        ...


def can_preview(channel: object) -> TypeGuard[SupportsPreview]:
    """``isinstance(channel, SupportsPreview)``, decided once per adapter class."""
    return _class_has(type(channel), SupportsPreview)


@runtime_checkable
class SupportsReactions(Protocol):
    async def react(self, key: ChatKey, message_id: str, emoji: str) -> None: ...

    async def unreact(self, key: ChatKey, message_id: str, emoji: str) -> None: ...


@runtime_checkable
class SupportsDownload(Protocol):
    async def download(self, file_id: str) -> bytes:
        """The bytes of an inbound attachment (``Attachment.file_id``)."""
        ...


@runtime_checkable
class SupportsUpload(Protocol):
    async def upload(self, key: ChatKey, name: str, data: bytes, caption: str = "") -> Sent:
        """Post a file into the chat (and thread) of ``key``."""
        ...

    def upload_limit(self) -> int:
        """The largest file in bytes the platform takes (checked before an upload)."""
        ...


@runtime_checkable
class SupportsLookup(Protocol):
    async def in_doubt(self, msg: OutboundMessage, since: datetime) -> None:
        """``msg`` may already be in the chat: a process died between posting it (or
        some of its parts) and recording that, at ``since`` or later. Its next ``send``
        looks each part up by its delivery key first and posts only what is missing.
        Only platforms that can be asked implement this (a post carries its key, or its
        history shows it)."""
        ...


@dataclass(frozen=True, slots=True)
class ChannelHealth:
    """Whether a channel works now and, when it does not, why (for ``/healthz``, ``bot
    status`` and the metric). ``ok`` means its last exchange with the platform (a poll,
    a delivery check, the gateway) succeeded recently, not merely that it was started."""

    ok: bool
    reason: str = ""

    @property
    def state(self) -> str:
        """``ok``, or the reason (what ``/healthz`` shows for ``channel:<name>``)."""
        return "ok" if self.ok else self.reason or "not connected"


@runtime_checkable
class ReportsHealth(Protocol):
    def health(self) -> ChannelHealth:
        """The channel's state now; a channel that keeps failing says why."""
        ...


def channel_health(channel: Channel) -> ChannelHealth:
    """A channel's own report where it gives one, else ``connected`` with no reason."""
    if _reports_health(channel):
        return channel.health()
    return ChannelHealth(True) if channel.connected else ChannelHealth(False, "not connected")


def _reports_health(channel: object) -> TypeGuard[ReportsHealth]:
    return _class_has(type(channel), ReportsHealth)


def can_lookup(channel: object) -> TypeGuard[SupportsLookup]:
    """``isinstance(channel, SupportsLookup)``, decided once per adapter class."""
    return _class_has(type(channel), SupportsLookup)


def can_type(channel: object) -> TypeGuard[SupportsTyping]:
    """``isinstance(channel, SupportsTyping)``, decided once per adapter class: a runtime
    Protocol check walks its members each time, and every turn asks."""
    return _class_has(type(channel), SupportsTyping)


def can_upload(channel: object) -> TypeGuard[SupportsUpload]:
    """``isinstance(channel, SupportsUpload)``, decided once per adapter class (every
    delivery asks)."""
    return _class_has(type(channel), SupportsUpload)


_CAPABLE: dict[tuple[type[Any], type[Any]], bool] = {}


def _class_has(cls: type[Any], capability: type[Any]) -> bool:
    key = (cls, capability)
    found = _CAPABLE.get(key)
    if found is None:  # methods-only Protocols: the class decides
        found = _CAPABLE[key] = issubclass(cls, capability)
    return found


CAUGHT_UP = "caught_up"
"""``InboundMessage.extras`` key: True when the message was read from the platform's
history after a gap (a start, a lost gateway session), not pushed to us as it was said."""


@dataclass(frozen=True, slots=True)
class CatchUpWindow:
    """How far back a channel reads what was said while it was not listening.

    Per conversation the bot takes part in (the ``max_conversations`` most recently
    active), at most the latest ``max_messages`` after the last one it saw, none older
    than ``max_age``.
    """

    max_age: timedelta
    max_messages: int = 20
    max_conversations: int = 50


@runtime_checkable
class CatchesUp(Protocol):
    def catch_up_within(self, window: CatchUpWindow) -> None:
        """Called before ``start``: after each start and reconnect, read what was said
        within ``window`` while the channel was away and hand it to ``put_inbound`` in
        order (marked :data:`CAUGHT_UP`), before anything that arrives live. Ids are the
        platform's own, so what was journaled already is dropped by the inbox."""
        ...


# Told that a chat lives on under another id: its key before, and its new chat id.
ChatMovedHook = Callable[[ChatKey, str], Awaitable[object]]


@runtime_checkable
class ReportsChatMoves(Protocol):
    def on_chat_moved(self, moved: ChatMovedHook) -> None:
        """Called before ``start``: when the platform itself says a chat now has another
        id (a group upgraded), ``moved`` is awaited before that update is passed on, so
        what is kept for the chat (its reminders) follows it; a refused send says so too
        (ChatMoved), this only learns it sooner."""
        ...


WebHandler = Callable[["web.Request"], Awaitable["web.StreamResponse"]]


@dataclass(frozen=True, slots=True)
class Route:
    """One HTTP route a webhook-style channel mounts on the daemon's shared web app."""

    method: str
    path: str
    handler: WebHandler


@runtime_checkable
class ReceivesAlone(Protocol):
    """A platform that hands updates to one connection at a time (Telegram's
    getUpdates: a second poller gets 409 Conflict). Among replicas the one holding
    ``receive_lease`` receives; the others start able to send and stand by. None: this
    configuration receives from any replica (a webhook)."""

    @property
    def receive_lease(self) -> str | None: ...

    async def receive(self, on: bool) -> None: ...


@runtime_checkable
class ProvidesRoutes(Protocol):
    def routes(self) -> Sequence[Route]:
        """Routes to mount on the ``[web]`` app (known before ``start``)."""
        ...


# How long the state of a post in progress (parts already posted, a post whose outcome is
# unknown) outlives its last write if nothing finishes it: longer than any outbox retry.
IN_FLIGHT_KEEP = timedelta(days=30)


class StateStore(Protocol):
    """Small durable key-value state (polling offsets, resolved ids) that survives restarts."""

    async def get(self, key: str, default: str | None = None) -> str | None: ...

    async def set(self, key: str, value: str, *, keep_for: timedelta | None = None) -> None:
        """Store ``key``; with ``keep_for`` it is dropped that long after this write (state
        that grows with use: joined threads, notices given, posts in progress)."""
        ...

    async def delete(self, key: str) -> None:
        """Forget ``key`` (state that was only needed until something finished)."""
        ...


@dataclass(frozen=True, slots=True)
class ChannelContext:
    """What the composition root hands a channel factory besides its own settings.

    ``extras[<channel name>]`` holds keyword arguments for that adapter's constructor
    (its timers: reconnect pings, identify delays), empty in production.
    """

    state: StateStore
    data_dir: Path
    extras: dict[str, Any] = field(default_factory=dict)
    # Among replicas: a ReceivesAlone channel starts without receiving until told to.
    standby: bool = False
    # Among replicas: ``state`` is shared with them (what one keeps, another may read).
    shared: bool = False


S = TypeVar("S", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class SetupQuestion:
    """One question ``bot init`` asks at a terminal for a platform: the answer becomes
    ``key`` of its ``[channels.<name>]`` section or, with ``admin``, the user id that goes
    into ``admins`` as ``"<name>:<id>"``. An empty first answer skips the platform."""

    prompt: str
    key: str = ""
    secret: bool = False
    admin: bool = False


@dataclass(frozen=True, slots=True)
class ChannelSpec(Generic[S]):
    """Everything the daemon needs to know about one platform, exported by its package.

    ``settings`` is the model of ``[channels.<name>]``; ``enabled`` says whether that
    section turns the channel on (a token is set); ``factory`` builds the adapter and may
    import the platform SDK lazily (start-up and ``bot doctor`` only pay for what is on);
    ``secrets`` names the setting values that must never appear in a log or a report;
    ``doctor`` checks the credentials against the platform (``config_check`` what needs
    no network, offline too); ``example`` is the
    commented TOML section that ``bot init`` writes for it.
    """

    name: str
    settings: type[S]
    enabled: Callable[[S], bool]
    factory: Callable[[S, ChannelContext], Channel]
    secrets: Callable[[S], list[SecretStr]]
    doctor: Callable[[aiohttp.ClientSession, S], Awaitable[Check]] | None = None
    example: str = ""  # the commented ``[channels.<name>]`` block ``bot init`` writes
    setup: tuple[SetupQuestion, ...] = ()  # what ``bot init`` asks at a terminal
    # How the section receives through the shared web app ("a webhook"), or "" when it
    # does not: with [web] off such a channel would start and never hear a message.
    web_route: Callable[[S], str] = lambda _: ""
    # What the section lacks that no network is needed to see (a key its mode needs), as
    # a failed check, or None: `bot doctor --offline` runs it where it skips ``doctor``.
    config_check: Callable[[S], Check | None] = lambda _: None
