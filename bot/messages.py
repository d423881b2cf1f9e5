"""Messages that travel on the bus.

Frozen, serializable dataclasses only: no SDK objects, no closures, so the in-process
bus can later be replaced by a networked one without touching channels or the agent.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any


def utcnow() -> datetime:
    return datetime.now(UTC)


def new_id() -> str:
    return uuid.uuid4().hex[:12]


@dataclass(frozen=True, slots=True)
class ChatKey:
    """Where a conversation lives: platform, chat and (optional) thread or topic."""

    channel: str
    chat_id: str
    thread_id: str | None = None

    def __str__(self) -> str:
        base = f"{self.channel}:{self.chat_id}"
        return f"{base}:{self.thread_id}" if self.thread_id else base


class MessageKind(StrEnum):
    USER = "user"
    SCHEDULED = "scheduled"
    COMMAND = "command"


# What a person sent on a platform. Everything else (a scheduled follow-up: text the model
# wrote earlier) is made by the bot and never runs a slash command with its owner's rights.
PERSON_KINDS = frozenset({MessageKind.USER, MessageKind.COMMAND})


# An ``InboundMessage.extras`` key: a bare /command in a group, which a platform may hand
# to every bot there; one this bot does not know is another bot's to answer.
TO_ANY_BOT = "to_any_bot"

# An ``InboundMessage.extras`` key: the message came with files and no words of its
# sender's own, so its text is only the channel's: a made-up line naming the files, maybe
# under a reply's quote, a forward's origin or a thread's earlier messages. That framing is
# nothing to answer by itself: only a file the model can take (seen, heard, read) is.
WORDLESS = "wordless"


class OutboundKind(StrEnum):
    REPLY = "reply"
    ERROR = "error"
    REMINDER = "reminder"
    NOTICE = "notice"


@dataclass(frozen=True, slots=True)
class Attachment:
    """Metadata of a file: one the user sent (``file_id`` is the platform's), or one the
    bot sends (``file_id`` is its path on disk, ``caption`` the line shown with it)."""

    kind: str
    file_id: str
    name: str = ""
    mime_type: str = ""
    size: int | None = None
    caption: str = ""


@dataclass(frozen=True, slots=True)
class InboundMessage:
    key: ChatKey
    user_id: str
    text: str
    kind: MessageKind = MessageKind.USER
    message_id: str = field(default_factory=new_id)
    user_name: str = ""
    attachments: tuple[Attachment, ...] = ()
    extras: Mapping[str, Any] = field(default_factory=dict)
    received_at: datetime = field(default_factory=utcnow)
    # A one-to-one chat with the bot (a DM), as the channel knows it; False in groups and
    # when unknown, so a stranger is only ever answered where nobody else reads along.
    direct: bool = False
    # Follow-up turns that led to this message: 0 for a person's, n for a follow-up set
    # during a turn of depth n - 1 (a self-re-arming follow-up is stopped by it).
    chain_depth: int = 0

    @property
    def sender(self) -> str:
        """The ``channel:user`` form used by ``admins`` and access lists."""
        return f"{self.key.channel}:{self.user_id}"

    @property
    def from_person(self) -> bool:
        """Typed by a person, not made by the bot: only such a message runs a command."""
        return self.kind in PERSON_KINDS


@dataclass(frozen=True, slots=True)
class OutboundMessage:
    key: ChatKey
    text: str
    kind: OutboundKind = OutboundKind.REPLY
    reply_to: str | None = None
    final: bool = True
    attachments: tuple[Attachment, ...] = ()
    extras: Mapping[str, Any] = field(default_factory=dict)
    message_id: str = field(default_factory=new_id)
    # Same key = same delivery: the outbox sends a key once, e.g. "reminder:12:<fire time>".
    idempotency_key: str | None = None
    # The streamed preview this answer replaces in place (its platform message id), set
    # only for channels that are SupportsPreview (channels.base); None: posted as new.
    preview_id: str | None = None

    @property
    def delivery_key(self) -> str:
        return self.idempotency_key or f"msg:{self.message_id}"

    @classmethod
    def reply(
        cls,
        to: InboundMessage,
        text: str,
        kind: OutboundKind = OutboundKind.REPLY,
        extras: Mapping[str, Any] | None = None,
        *,
        preview_id: str | None = None,
        attachments: tuple[Attachment, ...] = (),
    ) -> OutboundMessage:
        """The answer to ``to``: same chat and thread, replying to its message id.

        Its delivery key comes from ``to`` (and the kind), so a turn run again after a
        crash (its answer already queued, the message not yet marked done) queues a key
        the outbox already has: the answer goes out once."""
        return cls(
            key=to.key,
            text=text,
            kind=kind,
            reply_to=to.message_id,
            extras=extras or {},
            idempotency_key=f"{kind.value}:{to.key}:{to.message_id}",
            preview_id=preview_id,
            attachments=attachments,
        )


def to_json(msg: InboundMessage | OutboundMessage) -> str:
    """Serialize a bus message (for the inbox/outbox tables or a networked bus)."""
    data = _fields(msg)
    if isinstance(msg, InboundMessage):
        data["received_at"] = msg.received_at.isoformat()
    return json.dumps(data, ensure_ascii=False, default=str)


_FIELD_NAMES: dict[type[Any], tuple[str, ...]] = {}


def _fields(value: Any) -> Any:
    """``dataclasses.asdict`` without its deep copy of every leaf (each message is
    journaled on the way in and out: asdict was a tenth of a turn's own CPU)."""
    if value is None or isinstance(value, str | int | float):  # enums here are StrEnums
        return value
    names = _FIELD_NAMES.get(type(value))
    if names is None and dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = _FIELD_NAMES[type(value)] = tuple(f.name for f in dataclasses.fields(value))
    if names is not None:
        return {name: _fields(getattr(value, name)) for name in names}
    if isinstance(value, Mapping):
        return {k: _fields(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_fields(v) for v in value]
    return value


def inbound_from_json(raw: str) -> InboundMessage:
    data = json.loads(raw)
    return InboundMessage(
        key=ChatKey(**data["key"]),
        user_id=data["user_id"],
        text=data["text"],
        kind=MessageKind(data["kind"]),
        message_id=data["message_id"],
        user_name=data.get("user_name", ""),
        attachments=tuple(Attachment(**a) for a in data.get("attachments", ())),
        extras=data.get("extras") or {},
        received_at=datetime.fromisoformat(data["received_at"]),
        direct=bool(data.get("direct", False)),
        chain_depth=int(data.get("chain_depth", 0)),
    )


def outbound_from_json(raw: str) -> OutboundMessage:
    data = json.loads(raw)
    return OutboundMessage(
        key=ChatKey(**data["key"]),
        text=data["text"],
        kind=OutboundKind(data["kind"]),
        reply_to=data.get("reply_to"),
        final=bool(data.get("final", True)),
        attachments=tuple(Attachment(**a) for a in data.get("attachments", ())),
        extras=data.get("extras") or {},
        message_id=data["message_id"],
        idempotency_key=data.get("idempotency_key"),
        preview_id=data.get("preview_id"),
    )
