"""The PostgreSQL server a bench runs against, and the CPU it spends for the bench.

``BOT_BENCH_POSTGRES_URL`` names it (default: the local test server, trust auth). Each
use gets a schema of its own, dropped afterwards, and a URL whose connections carry a
unique ``application_name``: the server's backend processes serving exactly those
connections are then found in ``pg_stat_activity`` and their CPU read with psutil (the
server runs on this machine). The server's shared writers (WAL writer, checkpointer,
background writer) serve every database on it, other users' too, so they are read apart.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import AsyncIterator
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import asyncpg
import psutil

PG_URL = os.environ.get("BOT_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
_WRITERS = ("walwriter", "checkpointer", "background writer")


def with_params(url: str, **params: str) -> str:
    """``url`` with these query parameters (asyncpg passes unknown ones on to the server
    as settings: ``search_path``, ``application_name``)."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k not in params]
    return urlunsplit(parts._replace(query=urlencode([*query, *params.items()])))


async def reachable(url: str = PG_URL) -> bool:
    try:
        conn = await asyncpg.connect(url, timeout=3)
    except (OSError, TimeoutError, asyncpg.PostgresError, ValueError):
        return False
    await conn.close()
    return True


@contextlib.asynccontextmanager
async def throwaway_schema(url: str = PG_URL) -> AsyncIterator[str]:
    """A URL whose tables live in a new schema (dropped afterwards) and whose connections
    are named after it (``application_name``: see :class:`ServerCpu`)."""
    name = f"bench_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(url, timeout=10)
    try:
        await admin.execute(f'CREATE SCHEMA "{name}"')
        try:
            yield with_params(url, search_path=name, application_name=name)
        finally:
            await admin.execute(f'DROP SCHEMA "{name}" CASCADE')
    finally:
        await admin.close()


def app_name(url: str) -> str:
    return dict(parse_qsl(urlsplit(url).query)).get("application_name", "")


def _cpu(pid: int) -> float | None:
    try:
        times = psutil.Process(pid).cpu_times()
    except psutil.Error:  # the backend ended (a connection closed)
        return None
    return float(times.user + times.system)


def cpu_of(pids: list[int]) -> float:
    """CPU seconds the live ones of these processes used so far."""
    return sum(cpu for pid in pids if (cpu := _cpu(pid)) is not None)


def writer_pids() -> list[int]:
    """The server's WAL writer, checkpointer and background writer."""
    pids = []
    for proc in psutil.process_iter(["cmdline"]):
        if any(w in " ".join(proc.info["cmdline"] or ()) for w in _WRITERS):
            pids.append(proc.pid)
    return pids


class ServerCpu:
    """CPU seconds of the server's backends serving the connections of ``url`` (by its
    ``application_name``), and of its shared writers, read before and after a block::

        meter = ServerCpu(url); await meter.start(); ...; backends, writers = await meter.stop()

    A backend that starts inside the block counts whole; one that ends inside it loses
    what it used since the start (the pool keeps its connections, so this is rare).
    """

    def __init__(self, url: str) -> None:
        self._url = url
        self._name = app_name(url)
        self._backends: dict[int, float] = {}
        self._writers: dict[int, float] = {}

    async def _pids(self) -> list[int]:
        conn = await asyncpg.connect(with_params(self._url, application_name="bench-meter"))
        try:
            rows = await conn.fetch(
                "SELECT pid FROM pg_stat_activity WHERE application_name = $1", self._name
            )
        finally:
            await conn.close()
        return [int(r["pid"]) for r in rows]

    @staticmethod
    def _read(pids: list[int]) -> dict[int, float]:
        return {pid: cpu for pid in pids if (cpu := _cpu(pid)) is not None}

    async def start(self) -> None:
        self._backends = self._read(await self._pids())
        self._writers = self._read(writer_pids())

    async def stop(self) -> tuple[float, float]:
        """(backends, writers) CPU seconds since :meth:`start`."""
        now = self._read(await self._pids())
        backends = sum(cpu - self._backends.get(pid, 0.0) for pid, cpu in now.items())
        writers = sum(
            cpu - self._writers[pid] for pid, cpu in self._read(list(self._writers)).items()
        )
        return backends, writers
