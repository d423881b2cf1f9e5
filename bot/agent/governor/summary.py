"""Older turns become an archived summary instead of silently falling off.

Every turn after the summary's cursor is sent whole while they fit; the governor cuts
the copy if one request would overflow. Folding is batched so a short chat pays no
extra model call at all: nothing is folded while the unsummarized history fits the
budget, and once about twice ``history_turns`` turns have piled up and it no longer
fits, everything but the newest ``history_turns`` turns is folded, with the previous
summary, by one model call (:mod:`bot.agent.memory.consolidate`, which extracts
durable facts in the same call). The summary is stored with the id of the last message
it covers and reused, unchanged, until the next batch is folded.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.agent.governor.offload import head_tail
from bot.media.entries import described

Message = dict[str, Any]
Row = tuple[int, Message]

MAX_SUMMARY_CHARS = 4_000
MAX_MESSAGE_CHARS = 600
MAX_TRANSCRIPT_CHARS = 24_000


@dataclass(frozen=True, slots=True)
class Window:
    """The rows to fold into the summary now (oldest first); none: nothing to do."""

    archive: list[Row]
    through_id: int  # id of the last archived message; 0 when nothing is to archive


def turns_of(rows: Sequence[Row]) -> list[list[Row]]:
    """Rows grouped into turns starting at user messages; leading non-user rows (a
    window cut mid-turn) are left out, so the tail sent is legal."""
    turns: list[list[Row]] = []
    for row in rows:
        if row[1].get("role") == "user":
            turns.append([])
        if turns:
            turns[-1].append(row)
    return turns


def unsummarized_rows(rows: Sequence[Row], summarized_through: int) -> list[Row]:
    """The rows of the turns after the summary's cursor: what :func:`turns_of` keeps
    of them, in one pass (it runs on every turn, over the whole unsummarized tail)."""
    out: list[Row] = []
    for row in rows:
        if is_unsummarized(row, summarized_through, bool(out)):
            out.append(row)
    return out


def is_unsummarized(row: Row, summarized_through: int, started: bool) -> bool:
    """Whether ``row`` is sent as history: after the summary's cursor, and from the first
    user message on (``started``: an earlier row was); the rule of
    :func:`unsummarized_rows`, for a caller that takes rows a few at a time."""
    return row[0] > summarized_through and (started or row[1].get("role") == "user")


def unsummarized(rows: Sequence[Row], summarized_through: int) -> list[Message]:
    """The turns after the summary's cursor, as the next prompt sends them."""
    return [m for _, m in unsummarized_rows(rows, summarized_through)]


def plan_window(
    rows: Sequence[Row], summarized_through: int, keep_turns: int, *, fits: bool = False
) -> Window:
    """Which turns to fold now: none while the history ``fits`` or fewer than twice
    ``keep_turns`` turns are unsummarized; else all but the newest ``keep_turns``, as
    many of the oldest as one transcript holds whole (the rest go in the next fold)."""
    turns = turns_of([r for r in rows if r[0] > summarized_through])
    if fits or len(turns) < 2 * keep_turns:
        return Window([], 0)
    chunk: list[list[Row]] = []
    size = 0
    for turn in turns[:-keep_turns]:
        size += len(transcript([m for _, m in turn])) + 1
        if chunk and size > MAX_TRANSCRIPT_CHARS:
            break
        chunk.append(turn)
    return Window([r for t in chunk for r in t], chunk[-1][-1][0])


def transcript(messages: Sequence[Message]) -> str:
    """The archived turns as plain text, each message and the whole bounded."""
    lines: list[str] = []
    for m in messages:
        role = str(m.get("role")).capitalize()
        if m.get("speaker"):
            role = f"{role} {m['speaker']}"
        content = m.get("content")
        text = content if isinstance(content, str) else json.dumps(content, default=str)
        if m.get("role") == "assistant" and isinstance(m.get("tool_calls"), list):
            names = [
                str((c.get("function") or {}).get("name"))
                for c in m["tool_calls"]
                if isinstance(c, dict)
            ]
            text = f"{text or ''} [called tools: {', '.join(names)}]".strip()
        media = m.get("media")  # a user message's attachments (bot/media)
        if isinstance(media, list) and media:
            text = "\n".join(t for t in (text, described(media)) if t and t != "null")
        if text and text != "null":
            lines.append(f"{role}: {head_tail(text, MAX_MESSAGE_CHARS)}")
    return head_tail("\n".join(lines), MAX_TRANSCRIPT_CHARS)
