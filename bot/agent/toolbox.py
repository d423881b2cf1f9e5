"""The contract between the agent and the tool system.

The agent runner only knows this protocol; ``tools.registry.ToolRegistry`` implements it
and the wiring module hands one to the runner. That keeps ``bot`` free of imports from
``tools`` (tools import ``bot``, never the reverse).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from bot.messages import ChatKey

ERROR_HINT = "[Analyse the error above and try a different approach.]"
FINAL_RESULT = "final_result"


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Everything a tool may touch. Tools reach the outside world only through this."""

    chat_key: ChatKey
    user_id: str
    timezone: str = "UTC"
    workspace: Path | None = None
    data_dir: Path | None = None
    services: Mapping[str, Any] = field(default_factory=dict)
    # The inbound message this turn answers, and a per-turn scratch pad: tools with side
    # effects derive idempotency keys from them, so a turn replayed after a crash does
    # not repeat what it already did.
    message_id: str = ""
    scratch: dict[str, Any] = field(default_factory=dict)

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

    def definitions(self) -> list[dict[str, Any]]:
        """OpenAI-style tool definitions, in a stable order."""
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
