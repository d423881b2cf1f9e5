"""What a turn's tools changed outside it, kept for a turn that ends without an answer.

A reminder created, then the model down, a refusal or a /stop: told only "try again"
(or "set aside"), a person asks once more and it happens twice, and a stopped turn's
history, forgotten whole, leaves the model no trace of it either. So each call of a tool
that is not read-only (its ToolBox says it cannot run alongside others) and succeeded is
noted here as it returns; a file it only queued for the answer is no lasting effect.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.agent.forgery import neutralize
from bot.agent.toolbox import ToolResult
from bot.messages import ChatKey
from bot.text import valid_unicode

SAID_CHARS = 200  # of a result's first line: enough for "Created #1 reminder at ...: ..."


@dataclass(frozen=True, slots=True)
class Effect:
    """One call that acted: its tool and the first line of what it answered."""

    tool: str
    said: str

    @classmethod
    def of(cls, result: ToolResult) -> Effect:
        first = (result.content.strip().splitlines() or [""])[0]
        if len(first) > SAID_CHARS:
            first = first[: SAID_CHARS - 1] + "…"
        return cls(valid_unicode(result.name), neutralize(valid_unicode(first)))

    @property
    def line(self) -> str:
        return f"- {self.tool}: {self.said}"


@dataclass(slots=True)
class Acted:
    """One turn's record, filled by the runner as it goes and read by its caller when
    the turn ends without an answer: the effects, and where the turn is stored."""

    effects: list[Effect] = field(default_factory=list)
    session: ChatKey | None = None  # the session (chat and workspace) holding the turn
    user: dict[str, Any] | None = None  # its user message, as stored

    def lines(self) -> tuple[str, ...]:
        return tuple(e.line for e in self.effects)


def done_before(what: str, lines: Sequence[str]) -> str:
    """The words "Before <what> I had already:", then one line per effect; empty
    without any."""
    if not lines:
        return ""
    return f"Before {what} I had already:\n" + "\n".join(lines)


def stopped_note(lines: Sequence[str]) -> str:
    """The assistant's stored word for a stopped turn whose tools acted: the next turn's
    model reads what was done, and that it gave no answer."""
    done = "; ".join(line.removeprefix("- ") for line in lines)
    return f"[Stopped by the user before I answered. Already done, and it stays done: {done}]"
