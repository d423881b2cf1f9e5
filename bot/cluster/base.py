"""The cluster seam: which chats and which platform connections this process runs.

Two implementations: :class:`SingleProcess` (SQLite, one process: it runs everything,
fences nothing and starts no task, so the default path costs nothing) and
:class:`bot.cluster.replica.PgCluster` (replicas sharing a PostgreSQL database: leases
with fencing tokens on the server's clock). The composition root picks one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from bot.cluster.agreement import Differences
from bot.cluster.fence import Fence
from bot.messages import ChatKey


class LeaseEvents(Protocol):
    """What the daemon does when a lease comes or goes (``chats:N``, ``<platform>:poll``)."""

    async def gained(self, lease: str) -> None: ...
    async def lost(self, lease: str) -> None: ...
    def idle(self, lease: str) -> bool:
        """Whether nothing runs under ``lease`` now, so it may be handed to another replica."""
        ...

    def woken(self, lease: str) -> None:
        """Another replica journaled a message under ``lease`` (a hint: read it now)."""
        ...


class Cluster(Protocol):
    replica: str
    singles: Sequence[str]  # leases one replica holds at a time (a platform's poller)
    differences: Differences  # how the live replicas' configurations differ from this one's
    failing: str  # why its leases cannot be renewed now ("": they can)

    async def start(self, events: LeaseEvents) -> None: ...
    async def stop(self) -> None: ...
    def runs(self, key: ChatKey) -> bool:
        """Whether this process runs ``key``'s turns and sends its replies now."""
        ...

    def fence(self, key: ChatKey) -> Fence | None:
        """The fence ``key``'s writes carry (None: nothing to check)."""
        ...

    def holds(self, lease: str) -> bool: ...
    def announce(self, key: ChatKey) -> None:
        """A message for ``key`` was journaled here: wake the replica running it (a
        hint; that replica's poll finds it anyway)."""
        ...

    def held(self) -> Mapping[str, int]:
        """Leases held now, name -> fencing token (``/healthz``)."""
        ...


class SingleProcess:
    """One process owns the database: every chat and connection is its own."""

    singles: Sequence[str] = ()
    differences = Differences((), ())
    failing = ""

    def __init__(self, replica: str = "single") -> None:
        self.replica = replica

    async def start(self, events: LeaseEvents) -> None:
        return None

    async def stop(self) -> None:
        return None

    def runs(self, key: ChatKey) -> bool:
        return True

    def fence(self, key: ChatKey) -> Fence | None:
        return None

    def holds(self, lease: str) -> bool:
        return True

    def announce(self, key: ChatKey) -> None:
        return None

    def held(self) -> Mapping[str, int]:
        return {}
