"""The lease and replica tables, as SQL over one asyncpg connection.

Every time is the database server's clock (:data:`~bot.cluster.fence.NOW_MS`), so
replicas never compare their own clocks. A lease row is taken when it has no owner or
its ``expires_ms`` has passed; taking it adds one to ``token`` (the fencing token), so
a holder that was frozen past its TTL holds a token that is no longer current.
Renewing extends only leases still unexpired: a lease that lapsed is gone, even when
nobody took it meanwhile, and is taken again under a new token.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.cluster.fence import NOW_MS

if TYPE_CHECKING:
    import asyncpg


@dataclass(frozen=True, slots=True)
class Held:
    """A lease as the database reports it."""

    name: str
    owner: str
    token: int
    expires_in_ms: int


@dataclass(frozen=True, slots=True)
class Replica:
    """A replica's heartbeat row."""

    replica: str
    host: str
    pid: int
    started_at: str
    web: str
    seen_ago_ms: int
    live: bool


_TAKE = f"""
WITH wanted AS (
    SELECT n FROM unnest($2::text[]) WITH ORDINALITY AS w(n, i)
    WHERE NOT EXISTS (
        SELECT 1 FROM cluster_leases l
        WHERE l.name = w.n AND l.owner IS NOT NULL AND l.expires_ms > {NOW_MS})
    ORDER BY n
    LIMIT $3
)
INSERT INTO cluster_leases AS l (name, owner, token, expires_ms)
SELECT n, $1, 1, {NOW_MS} + $4 FROM wanted
ON CONFLICT (name) DO UPDATE
    SET owner = EXCLUDED.owner, token = l.token + 1, expires_ms = EXCLUDED.expires_ms
    WHERE l.owner IS NULL OR l.expires_ms <= {NOW_MS}
RETURNING name, token
"""

_RENEW = f"""
UPDATE cluster_leases SET expires_ms = {NOW_MS} + $2
WHERE owner = $1 AND expires_ms > {NOW_MS}
RETURNING name, token
"""

_BEAT = f"""
INSERT INTO cluster_replicas AS r
    (replica, host, pid, started_at, seen_ms, expires_ms, web, config)
VALUES ($1, $2, $3, $4, {NOW_MS}, {NOW_MS} + $5, $6, $7)
ON CONFLICT (replica) DO UPDATE
    SET seen_ms = EXCLUDED.seen_ms, expires_ms = EXCLUDED.expires_ms, web = EXCLUDED.web
"""


def replica_id(name: str = "") -> str:
    """This process's name among the replicas: the configured one, or host and pid."""
    return name or f"{socket.gethostname()}-{os.getpid()}"


class LeaseTable:
    """The SQL of leases and heartbeats (one round trip each)."""

    def __init__(self, conn: asyncpg.Connection, owner: str, ttl_ms: int) -> None:
        self._conn = conn
        self.owner = owner
        self.ttl_ms = ttl_ms

    async def take(self, names: Sequence[str], limit: int) -> dict[str, int]:
        """Take up to ``limit`` of ``names`` that are free or lapsed; name -> new token.

        Taken in name order, so two replicas taking overlapping sets lock rows in the
        same order and never deadlock."""
        if not names or limit <= 0:
            return {}
        rows = await self._conn.fetch(_TAKE, self.owner, list(names), limit, self.ttl_ms)
        return {str(r["name"]): int(r["token"]) for r in rows}

    async def renew(self) -> dict[str, int]:
        """Extend every unexpired lease this replica holds; name -> token of those kept."""
        rows = await self._conn.fetch(_RENEW, self.owner, self.ttl_ms)
        return {str(r["name"]): int(r["token"]) for r in rows}

    async def release(self, names: Sequence[str]) -> None:
        """Give leases up at once (a clean stop, a surplus partition), for others to take
        without waiting out the TTL."""
        await self._conn.execute(
            "UPDATE cluster_leases SET owner = NULL, expires_ms = 0"
            " WHERE owner = $1 AND name = ANY($2::text[])",
            self.owner,
            list(names),
        )

    async def beat(self, host: str, pid: int, started_at: str, web: str, config: str = "") -> None:
        await self._conn.execute(_BEAT, self.owner, host, pid, started_at, self.ttl_ms, web, config)

    async def peers(self) -> dict[str, str]:
        """The other live replicas, each with the configuration it published."""
        rows = await self._conn.fetch(
            f"SELECT replica, config FROM cluster_replicas WHERE expires_ms > {NOW_MS}"
            " AND replica <> $1",
            self.owner,
        )
        return {str(r["replica"]): str(r["config"]) for r in rows}

    async def survey(self) -> tuple[int, int | None, str]:
        """The live replicas, the ms until the first lease another replica holds lapses
        (None: it holds none): a replica that stops renewing is taken over then, not at
        the next regular tick; and the live replicas' names (one replaced by another
        between two ticks leaves the count as it was)."""
        row = await self._conn.fetchrow(
            "SELECT count(*) AS live, string_agg(replica, ' ' ORDER BY replica) AS names,"
            f" (SELECT min(expires_ms) - {NOW_MS} FROM cluster_leases WHERE owner <> $1"
            f" AND expires_ms > {NOW_MS}) AS lapse_ms"
            f" FROM cluster_replicas WHERE expires_ms > {NOW_MS}",
            self.owner,
        )
        lapse = row["lapse_ms"]
        return int(row["live"] or 0), int(lapse) if lapse is not None else None, row["names"] or ""

    async def forget_lapsed(self, after_ms: int) -> int:
        """Delete the heartbeat rows of replicas gone (killed, crashed: a clean stop
        deletes its own) for more than ``after_ms``; each restart after a crash names a
        new replica, so without this ``bot status`` would list every one of them forever."""
        status = await self._conn.execute(
            f"DELETE FROM cluster_replicas WHERE expires_ms < {NOW_MS} - $1", after_ms
        )
        return int(status.rsplit(" ", 1)[-1])

    async def live_count(self) -> int:
        value = await self._conn.fetchval(
            f"SELECT count(*) FROM cluster_replicas WHERE expires_ms > {NOW_MS}"
        )
        return int(value or 0)

    async def leave(self) -> None:
        """A clean stop: every lease released and the heartbeat row removed."""
        async with self._conn.transaction():
            await self._conn.execute(
                "UPDATE cluster_leases SET owner = NULL, expires_ms = 0 WHERE owner = $1",
                self.owner,
            )
            await self._conn.execute("DELETE FROM cluster_replicas WHERE replica = $1", self.owner)


async def leases(conn: asyncpg.Connection) -> list[Held]:
    """Every lease currently held (unexpired), for ``bot status``."""
    rows = await conn.fetch(
        f"SELECT name, owner, token, expires_ms - {NOW_MS} AS left_ms FROM cluster_leases"
        f" WHERE owner IS NOT NULL AND expires_ms > {NOW_MS} ORDER BY owner, name"
    )
    return [Held(r["name"], r["owner"], int(r["token"]), int(r["left_ms"])) for r in rows]


async def replicas(conn: asyncpg.Connection) -> list[Replica]:
    """Every replica row (live or not yet forgotten), for ``bot status``."""
    rows = await conn.fetch(
        f"SELECT replica, host, pid, started_at, web, {NOW_MS} - seen_ms AS ago,"
        f" expires_ms > {NOW_MS} AS live FROM cluster_replicas ORDER BY replica"
    )
    return [
        Replica(
            r["replica"],
            r["host"],
            int(r["pid"]),
            r["started_at"],
            r["web"],
            int(r["ago"]),
            bool(r["live"]),
        )
        for r in rows
    ]
