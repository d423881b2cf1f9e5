"""What a session row keeps of each attachment (a small dict under the row's ``media``
key), and the one line the model reads about it.

An entry holds the kind, name, size and type the platform declared, the kept file's
path (never its bytes), whether the model is shown the image (``see``), a short note
written by us ("transcribed", "not downloaded: ...") and the text made of it (a
transcript, a description, a document's text). Every part a user controls (the name,
the text) is defused on the way into the line, like any other imitation of what only
the system writes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from bot.agent.forgery import neutralize

MEDIA_KEY = "media"
Entry = dict[str, Any]


def size_text(size: int | None) -> str:
    if size is None:
        return "size unknown"
    if size < 1_000:
        return f"{size} bytes"
    if size < 1_000_000:
        return f"{size / 1_000:.0f} KB"
    return f"{size / 1_000_000:.1f} MB"


def attachment_line(entry: Mapping[str, Any]) -> str:
    """``[attachment: image "photo.jpg", 120 KB; note]``: one line whatever the name."""
    name = neutralize(" ".join(str(entry.get("name") or "").split()))
    kind = neutralize(" ".join(str(entry.get("kind") or "file").split()))
    note = entry.get("note")
    tail = f"; {note}" if note else ""
    shown = json.dumps(name, ensure_ascii=False) if name else "(no name)"
    return f"[attachment: {kind} {shown}, {size_text(entry.get('size'))}{tail}]"


def render(content: str, entries: Iterable[Mapping[str, Any]]) -> str:
    """The user's text, then per attachment its line and the text made of it; every
    user-controlled part defused."""
    parts = [neutralize(content)] if content.strip() else []
    for entry in entries:
        parts.append(attachment_line(entry))
        text = entry.get("text")
        if isinstance(text, str) and text:
            parts.append(neutralize(text))
    return "\n".join(parts)


def seen_images(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The entries of a message whose image the model is shown."""
    entries = message.get(MEDIA_KEY)
    if not isinstance(entries, list):
        return []
    return [e for e in entries if isinstance(e, dict) and e.get("see") and e.get("path")]


def described(entries: Iterable[Mapping[str, Any]]) -> str:
    """The attachments in plain words, for a transcript (a fold of older turns): no
    bracketed label, which the fold's own defusing would quote."""
    lines = []
    for entry in entries:
        name = " ".join(str(entry.get("name") or "").split())
        line = f"(attached {entry.get('kind') or 'file'} {json.dumps(name, ensure_ascii=False)}"
        line += f", {size_text(entry.get('size'))})"
        text = entry.get("text")
        lines.append(f"{line} {text}" if isinstance(text, str) and text else line)
    return "\n".join(lines)
