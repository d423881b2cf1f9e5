"""One replica among several on a shared PostgreSQL: its heartbeat and its leases.

A background task, every ``renew_s`` (a third of the TTL by default), on a connection of
its own (never queued behind turns): writes the heartbeat, renews what it holds, counts
the live replicas, takes its fair share of chat partitions (``ceil(partitions / live)``)
and any wanted single lease (a platform's poller) that is free, and gives surplus
partitions back when they are idle so a replica that joins gets work. It also ticks right
after the earliest lease another replica holds would lapse: a replica that stopped
renewing (killed, frozen, cut off) is taken over within the TTL of its last renewal, not
a renewal interval later. Live replicas renew every third of the TTL, so their leases
never lapse that soon: no extra tick.

What a replica holds is trusted locally only until a deadline on its monotonic clock:
the start of the last renewal that succeeded plus the TTL, less a margin. Monotonic time
runs on while a process is frozen (SIGSTOP), so a replica resumed past its TTL sees at
once that it holds nothing, before its renewal task even runs; the database fences its
writes anyway (:mod:`bot.cluster.fence`). A renewal that fails (connection lost) is
retried on the next tick; past the deadline the leases are dropped (``lost``).
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import secrets
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from bot.cluster.agreement import Agreement, Differences, compare
from bot.cluster.base import LeaseEvents
from bot.cluster.fence import Fence
from bot.cluster.leases import LeaseTable
from bot.cluster.partitions import lease_name, partition_in, partition_of
from bot.cluster.wake import Wakeups
from bot.errors import ConfigError, FencedOff
from bot.messages import ChatKey

if TYPE_CHECKING:
    import asyncpg

log = logging.getLogger(__name__)

MARGIN = 0.1  # of the TTL: a local deadline ends this much before the server's
# A replica gone this long (killed, crashed) is forgotten: its heartbeat row deleted.
FORGET_AFTER_MS = 3_600_000
# After another replica's lease lapses, the tick that takes it over comes this much later
# (the server's clock is read a round trip before ours), never sooner after the last tick.
LAPSE_WAIT_S = 0.1


@dataclass(frozen=True, slots=True)
class Timing:
    """``[cluster]`` in seconds."""

    ttl_s: float = 10.0
    renew_s: float = 0.0  # 0: a third of the TTL
    partitions: int = 64

    @property
    def every_s(self) -> float:
        return self.renew_s or self.ttl_s / 3


class PgCluster:
    """:class:`~bot.cluster.base.Cluster` over the lease table."""

    def __init__(
        self,
        url: str,
        *,
        timing: Timing,
        label: str = "",
        singles: Sequence[str] = (),
        web: Callable[[], str] = lambda: "",
        agreement: Agreement | None = None,
    ) -> None:
        self._url = url
        self.timing = timing
        # Unique per process even when two are given one label: a lease renewed by
        # name must never be renewed by a stranger under the same name.
        self.replica = f"{label or socket.gethostname()}-{os.getpid()}-{secrets.token_hex(2)}"
        self.singles: Sequence[str] = tuple(singles)
        self._web = web  # the web app's bound address ("" while none serves)
        self._started_at = datetime.now(UTC).isoformat()
        self._names = [lease_name(p) for p in range(timing.partitions)]
        self._held: dict[str, int] = {}  # name -> token
        self._deadline: dict[str, float] = {}  # name -> monotonic time it lapses locally
        self._conn: asyncpg.Connection | None = None
        self._events: LeaseEvents | None = None
        self._task: asyncio.Task[None] | None = None
        self._ticked = asyncio.Event()
        self._lapse_at: float | None = None  # monotonic: another's earliest lease lapses
        self.live = 0  # replicas alive at the last tick
        self._wakeups = Wakeups(url, self._heard, timeout_s=timing.ttl_s / 2)
        self._agreement = agreement
        self._config = agreement.text() if agreement is not None else ""
        self.differences = Differences((), ())  # from the live peers, at the last look
        self._looked_at: str | None = None  # the live replicas when last compared
        self.failing = ""  # why the last tick failed (the leases lapse): for /healthz

    # -- what the daemon asks ---------------------------------------------------------

    def holds(self, lease: str) -> bool:
        return lease in self._held and time.monotonic() < self._deadline[lease]

    def runs(self, key: ChatKey) -> bool:
        return self.holds(lease_name(partition_of(key, self.timing.partitions)))

    def fence(self, key: ChatKey) -> Fence:
        name = lease_name(partition_of(key, self.timing.partitions))
        if not self.holds(name):
            raise FencedOff(f"{key} is not run by this replica ({name} not held)")
        return Fence(name, self.replica, self._held[name])

    def announce(self, key: ChatKey) -> None:
        """NOTIFY the holder of ``key``'s partition, unless it is this replica (whose
        own poll was woken by the journal write)."""
        part = partition_of(key, self.timing.partitions)
        if not self.holds(lease_name(part)):
            self._wakeups.announce(part)

    def _heard(self, partition: int) -> None:
        name = lease_name(partition)
        if self._events is not None and self.holds(name):
            self._events.woken(name)

    def held(self) -> Mapping[str, int]:
        now = time.monotonic()
        return {n: t for n, t in sorted(self._held.items()) if now < self._deadline[n]}

    # -- lifecycle ------------------------------------------------------------------

    async def start(self, events: LeaseEvents) -> None:
        """Join: the first tick runs now (its leases are taken before this returns when
        the database answers); later ones in the background."""
        self._events = events
        await self._join()
        await self._tick_safely()
        self._wakeups.start(self.timing.every_s)
        self._task = asyncio.create_task(self._run(), name="cluster")

    async def stop(self) -> None:
        """Leave cleanly: every lease released at once, so others need not wait the TTL."""
        bound = self.timing.ttl_s / 2  # a stop never hangs on a server under strain
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait([self._task], timeout=bound)
        for name in list(self._held):
            await self._drop(name)
        await self._wakeups.close()
        if self._conn is not None:
            try:
                leaving = LeaseTable(self._conn, self.replica, self._ttl_ms).leave()
                await asyncio.wait_for(leaving, timeout=bound)
            except Exception as exc:  # the leases lapse after the TTL anyway
                log.warning("could not release the leases at stop: %s", exc)
            await self._close()

    async def wait_tick(self) -> None:
        """Until the next tick ends (tests, and start-up waiting for a fair share)."""
        self._ticked.clear()
        await self._ticked.wait()

    # -- the background task --------------------------------------------------------

    @property
    def _ttl_ms(self) -> int:
        return int(self.timing.ttl_s * 1000)

    async def _run(self) -> None:
        every = self.timing.every_s
        while True:
            started = time.monotonic()
            await self._tick_safely()
            wake = started + every
            if self._lapse_at is not None:  # another's lease lapses sooner: be there
                wake = min(wake, max(started + LAPSE_WAIT_S, self._lapse_at + LAPSE_WAIT_S))
            await asyncio.sleep(max(0.0, wake - time.monotonic()))

    async def _tick_safely(self) -> None:
        try:
            # Bounded well inside the TTL: a tick stuck on a dead connection is abandoned
            # (and the connection dropped) while the leases still hold.
            await asyncio.wait_for(self._tick(), timeout=self.timing.ttl_s / 2)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            # Once per outage at WARNING (each retry at DEBUG); and the lapse time read by
            # the last good tick is stale now: kept, every wake after it came 0.1 s apart
            # (ten connection attempts a second against a database coming back).
            level = logging.DEBUG if self.failing else logging.WARNING
            log.log(level, "cluster: lease renewal failed (%s: %s)", type(exc).__name__, exc)
            self.failing = f"lease renewal failing ({type(exc).__name__}: {exc})"
            self._lapse_at = None
            await self._close()
        else:
            if self.failing:
                log.info("cluster: lease renewal works again")
            self.failing = ""
        await self._lapse()
        self._ticked.set()

    async def _tick(self) -> None:
        began = time.monotonic()
        table = LeaseTable(await self._connection(), self.replica, self._ttl_ms)
        await table.beat(
            socket.gethostname(), os.getpid(), self._started_at, self._web(), self._config
        )
        kept = await table.renew()
        for name in list(self._held):
            if kept.get(name) != self._held[name]:
                log.warning("cluster: lease %s lapsed; no longer running it", name)
                await self._drop(name)
        stray = [n for n in kept if n not in self._held]
        if stray:  # taken by a tick that timed out before it could record them
            await table.release(stray)
        self._extend(self._held, began)
        live, lapse_ms, names = await table.survey()
        self.live = max(1, live)
        if names != self._looked_at:  # a replica came or went: compare again
            self._looked_at = names
            await self._compare(table)
        self._lapse_at = time.monotonic() + lapse_ms / 1000 if lapse_ms is not None else None
        await self._balance(table, began)
        wanted = [n for n in self.singles if n not in self._held]
        await self._gain(await table.take(wanted, len(wanted)), began)

    async def _join(self) -> None:
        """Refuse to join replicas whose configuration would make this one lose or
        double messages (ConfigError: `bot run` exits 2 with the difference named)."""
        if self._agreement is None:
            return
        try:
            table = LeaseTable(await self._connection(), self.replica, self._ttl_ms)
            peers = await asyncio.wait_for(table.peers(), timeout=self.timing.ttl_s / 2)
        except Exception as exc:  # the first tick reports an unreachable database
            log.debug("cluster: the peers' configuration could not be read: %s", exc)
            return
        found = self._differences(peers)
        if found.refused:
            raise ConfigError(
                "this replica's configuration differs from the running replicas': "
                + "; ".join(found.refused)
                + ". Every replica of one bot must share them: start it with the same"
                " config, or stop every replica to change it"
            )

    async def _compare(self, table: LeaseTable) -> None:
        """Log each new difference from the live peers once; keep them for /healthz.
        Replicas gone for long are forgotten here too (a replica came or went)."""
        forgotten = await table.forget_lapsed(FORGET_AFTER_MS)
        if forgotten:
            log.info("cluster: %d replicas gone for over an hour forgotten", forgotten)
        if self._agreement is None:
            return
        found = self._differences(await table.peers())
        for line in found.refused:
            if line not in self.differences.refused:
                log.error("cluster: replicas disagree, messages may be lost: %s", line)
        for line in found.noted:
            if line not in self.differences.noted:
                log.warning("cluster: replicas differ: %s", line)
        self.differences = found

    def _differences(self, peers: Mapping[str, str]) -> Differences:
        assert self._agreement is not None
        refused: list[str] = []
        noted: list[str] = []
        for peer, text in sorted(peers.items()):
            theirs = Agreement.parse(text)
            if theirs is not None:
                found = compare(self._agreement, theirs, peer)
                refused += found.refused
                noted += found.noted
        return Differences(tuple(refused), tuple(noted))

    async def _balance(self, table: LeaseTable, began: float) -> None:
        fair = math.ceil(self.timing.partitions / self.live)
        mine = [n for n in self._held if partition_in(n) is not None]
        if len(mine) < fair:
            free = [n for n in self._names if n not in self._held]
            await self._gain(await table.take(free, fair - len(mine)), began)
            return
        events = self._events
        surplus = [n for n in mine if events is None or events.idle(n)][: len(mine) - fair]
        if surplus:
            for name in surplus:
                await self._drop(name)
            await table.release(surplus)
            log.info("cluster: %d partitions handed back (%d replicas)", len(surplus), self.live)

    async def _gain(self, taken: Mapping[str, int], began: float) -> None:
        self._held.update(taken)
        self._extend(taken, began)
        for name in sorted(taken):
            log.info("cluster: %s taken (token %d)", name, taken[name])
            if self._events is not None:
                await self._events.gained(name)

    def _extend(self, names: Mapping[str, int] | Sequence[str], began: float) -> None:
        until = began + self.timing.ttl_s * (1 - MARGIN)
        for name in names:
            self._deadline[name] = until

    async def _lapse(self) -> None:
        """Drop what was not renewed in time (the database unreachable, a freeze)."""
        now = time.monotonic()
        for name in [n for n, d in self._deadline.items() if d <= now and n in self._held]:
            log.warning("cluster: lease %s not renewed in time; no longer running it", name)
            await self._drop(name)

    async def _drop(self, name: str) -> None:
        self._held.pop(name, None)
        self._deadline.pop(name, None)
        if self._events is not None:
            try:
                await self._events.lost(name)
            except Exception:
                log.exception("cluster: stopping the work of %s failed", name)

    async def _connection(self) -> asyncpg.Connection:
        if self._conn is None or self._conn.is_closed():
            import asyncpg

            self._conn = await asyncpg.connect(self._url, timeout=self.timing.ttl_s / 2)
        return self._conn

    async def _close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.terminate()  # never waits on a connection that may be dead
