"""The one short line a preview shows while tools run (the answer replaces it)."""

from __future__ import annotations

from collections.abc import Sequence

MAX_NAMES = 3


def status_line(names: Sequence[str]) -> str:
    """``get_weather`` -> "⏳ get weather…": what the bot is doing, in a few words."""
    shown = list(dict.fromkeys(n.replace("_", " ").strip() for n in names if n.strip()))
    if not shown:
        return "⏳ working…"
    more = len(shown) - MAX_NAMES
    words = ", ".join(shown[:MAX_NAMES]) + (f" and {more} more" if more > 0 else "")
    return f"⏳ {words}…"
