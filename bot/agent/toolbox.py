"""The contract between the agent and the tool system.

The agent runner only knows :class:`ToolBox`; ``tools.registry.ToolRegistry``
implements it and the composition root hands one to the runner. Tools see the world
only through :class:`ToolContext`: the turn's chat, user, zone and workspace, and a
:class:`ToolServices` of narrow, typed interfaces, never the Settings or a secret. That
keeps ``bot`` free of imports from ``tools`` (tools import ``bot``, never the reverse).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from bot.messages import Attachment, ChatKey

if TYPE_CHECKING:
    from bot.store.reminders import Reminder, ReminderKind

ERROR_HINT = "[Analyse the error above and try a different approach.]"
FINAL_RESULT = "final_result"
# What the model reads back for a final_result call (stored, and the whole of its sent
# form): the call-result pairing needs a result, and every turn of the history as sent
# carries one, so it says no more than that the answer went out.
FINAL_RESULT_ACK = "delivered"


class ReminderAccess(Protocol):
    """What the reminder tools may do (``bot.reminders.service.ReminderService`` fits)."""

    async def create(
        self,
        key: ChatKey,
        user_id: str,
        content: str,
        when: str,
        *,
        recurrence: str | None = None,
        kind: ReminderKind = ...,
        source: str | None = None,
        workspace: str = ...,
        chain_depth: int = 0,
        group: bool = False,
    ) -> Reminder: ...

    async def list(
        self,
        channel: str,
        user_id: str,
        workspace: str | None = None,
        *,
        chat: ChatKey | None = None,
    ) -> list[Reminder]: ...

    async def cancel(
        self,
        channel: str,
        user_id: str,
        reminder_id: int,
        workspace: str | None = None,
        *,
        chat: ChatKey | None = None,
    ) -> Reminder: ...

    async def set_timezone(self, channel: str, user_id: str, tz_name: str) -> str: ...


class WeatherAccess(Protocol):
    async def forecast(self, city: str, date: str | None, tz: str) -> str:
        """One summary line; raises ToolError with a user-readable reason."""
        ...


class WebAccess(Protocol):
    """``web_search`` and ``web_fetch``: framed external content, or a ToolError."""

    async def search(self, query: str, count: int | None = None) -> str: ...

    async def fetch(self, url: str, max_chars: int | None = None, start: int = 0) -> str: ...


class FileAccess(Protocol):
    async def download(self, channel: str, file_id: str) -> bytes:
        """An inbound attachment's bytes from the channel it came from."""
        ...


class SkillAccess(Protocol):
    def read(self, workspace: str, name: str) -> str:
        """A usable skill's instructions; raises ToolError for unknown or disabled ones."""
        ...


class MemoryAccess(Protocol):
    async def remember(
        self,
        workspace: str,
        key: ChatKey,
        user_id: str,
        fact: str,
        scope: str = "user",
        *,
        private: bool = False,
    ) -> str:
        """Store a fact about the user or the chat now; raises ToolError on bad input.
        ``private``: told in the user's one-to-one chat (a user fact then follows them)."""
        ...


@dataclass(frozen=True, slots=True)
class ToolServices:
    """The named services tools may use; ``None`` where this daemon has none."""

    reminders: ReminderAccess | None = None
    weather: WeatherAccess | None = None
    files: FileAccess | None = None
    skills: SkillAccess | None = None
    memory: MemoryAccess | None = None
    web: WebAccess | None = None


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Everything a tool may touch. Tools reach the outside world only through this."""

    chat_key: ChatKey
    user_id: str
    timezone: str = "UTC"
    workspace: Path | None = None
    workspace_name: str = "default"
    services: ToolServices = field(default_factory=ToolServices)
    # The inbound message this turn answers, and a per-turn scratch pad: tools with side
    # effects derive idempotency keys from them, so a turn replayed after a crash does
    # not repeat what it already did.
    message_id: str = ""
    scratch: dict[str, Any] = field(default_factory=dict)
    # A one-to-one chat: listings may show the user's reminders from everywhere; in a
    # group (or when unknown) only what belongs to this chat.
    direct: bool = False
    # The turn's message's chain depth (InboundMessage.chain_depth): a follow-up set now
    # is one deeper.
    chain_depth: int = 0
    # Files that go to the user with the turn's answer (send_file, MCP tools' images):
    # they travel in the answer's outbox row, so they are sent exactly when it is.
    outgoing: list[Attachment] = field(default_factory=list)

    def next_effect_id(self, kind: str) -> str:
        """``<message id>#<kind><n>`` for the n-th side effect of a kind in this turn."""
        n = int(self.scratch.get(kind, 0)) + 1
        self.scratch[kind] = n
        return f"{self.message_id}#{kind}{n}"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call as the model sent it: name may be missing, arguments may be junk."""

    id: str
    name: str | None
    arguments: Any


@dataclass(frozen=True, slots=True)
class ToolResult:
    call_id: str
    name: str
    content: str
    is_error: bool = False
    arguments: Mapping[str, Any] = field(default_factory=dict)


class ToolBox(Protocol):
    """What the runner needs from a tool registry."""

    def definitions(self, workspace: str = "default") -> list[dict[str, Any]]:
        """OpenAI-style definitions of the tools this workspace may use, in a stable order."""
        ...

    def concurrency_safe(self, name: str | None) -> bool:
        """True when the named tool may run alongside other safe calls."""
        ...

    def offload_exempt(self, name: str | None) -> bool:
        """True when the named tool's results must reach the model whole, never offloaded."""
        ...

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        """Prepare, validate and run one call; never raises, failures are Error results."""
        ...
