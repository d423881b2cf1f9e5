"""Files removed by age (housekeeping): offloaded tool results, what the bot wrote for a
chat. Each file goes by its own modification time; a symbolic link is removed itself,
never what it points at, and a file gone meanwhile is skipped."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from pathlib import Path


def remove_written_before(paths: Iterable[Path], cutoff: datetime) -> int:
    """Those of ``paths`` last written before ``cutoff``; returns how many went."""
    limit, removed = cutoff.timestamp(), 0
    for path in paths:
        try:
            if path.lstat().st_mtime < limit:
                path.unlink()
                removed += 1
        except FileNotFoundError:
            continue
    return removed
