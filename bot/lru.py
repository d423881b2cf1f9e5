"""A mapping that keeps only its ``maxsize`` most recently used entries.

What the daemon remembers per chat or per user (a session's id and summary, a chat's
workspace, a user's time zone, who was told once) is a cache in front of the store or a
courtesy: losing an old entry costs one read or one repeated notice, never a wrong
answer. An ``LRU`` keeps such a map flat however many chats a daemon has seen.

cachetools' ``LRUCache`` does the same; it is not a dependency (its typing is a separate
stub package for mypy strict), and these callers need get, set, pop and a size, which
an ``OrderedDict`` gives in C in a few lines.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Iterator
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRU(Generic[K, V]):
    """``maxsize`` entries at most; a read or a write makes an entry the most recent, the
    least recent goes first. ``in`` does not count as a use."""

    __slots__ = ("_data", "maxsize")

    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            raise ValueError("an LRU holds at least one entry")
        self.maxsize = maxsize
        self._data: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        """The value (now the most recent), or None when absent."""
        value = self._data.get(key)
        if value is not None or key in self._data:
            self._data.move_to_end(key)
        return value

    def __getitem__(self, key: K) -> V:
        value = self._data[key]
        self._data.move_to_end(key)
        return value

    def __setitem__(self, key: K, value: V) -> None:
        self._data[key] = value
        self._data.move_to_end(key)
        if len(self._data) > self.maxsize:
            self._data.popitem(last=False)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def __iter__(self) -> Iterator[K]:
        return iter(self._data)

    def pop(self, key: K) -> V | None:
        return self._data.pop(key, None)
