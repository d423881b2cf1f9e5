"""What the repositories read a result row through, whichever backend's it is.

``sqlite3.Row`` and asyncpg's ``Record`` both index by column name, so the functions that
turn a row into a frozen dataclass (a reminder, a fact, a persona version) serve both
backends instead of being written twice.
"""

from __future__ import annotations

from typing import Any, Protocol


class Row(Protocol):
    def __getitem__(self, key: str, /) -> Any: ...
