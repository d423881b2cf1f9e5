"""Turns through a platform adapter, as users run it: the daemon talks to a fake
platform in its own process (bench/fake_telegram_server.py, fake_slack_server.py,
fake_discord_server.py) through the platform's real client library, and each answer
is posted back to it. The fake drives the closed-loop chats (bench/driving.py), so
this process (the one measured) runs only the daemon. Each segment's messages carry
the segment's number, so every answer is checked against its own question.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp

from bench.harness import CpuMeter, profiled, seed_sessions, settings
from bench.pgserver import ServerCpu, throwaway_schema
from bench.procs import fake_stats, served_between
from bot.messages import ChatKey

if TYPE_CHECKING:
    from bot.ops.web import WebServer

Segment = Callable[[int], Awaitable[dict[str, Any]]]


async def _drive(control_url: str, spec: dict[str, Any]) -> dict[str, Any]:
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{control_url}/run", json=spec) as resp:
            resp.raise_for_status()
        async with http.get(f"{control_url}/wait", timeout=aiohttp.ClientTimeout(600)) as resp:
            result: dict[str, Any] = await resp.json()
            return result


def _spec(
    web: WebServer | None,
    section: dict[str, Any],
    chats: int,
    deliver: str,
    drive: dict[str, Any] | None,
) -> dict[str, Any]:
    """What every run asks of the fake (bench/driving.py) besides its size and prefix;
    with ``deliver="http"`` the daemon's Slack Events route it posts each message to."""
    spec: dict[str, Any] = {**(drive or {}), "chats": chats, "deliver": deliver}
    if deliver == "http":
        assert web is not None, "the HTTP Events API needs the web app"
        spec["events_url"] = web.url + section.get("http_path", "/slack/events")
    return spec


def _segments(
    control_url: str,
    stats_url: str,
    spec: dict[str, Any],
    *,
    chats: int,
    seeded: int,
    store_url: str,
    label: str,
) -> Segment:
    """The measured segment: the fake drives ``per_chat`` messages in each chat (the
    prefix numbered on, so every answer is checked against its own question) while this
    process's CPU, the fake model's requests and, on PostgreSQL, the server's CPU are
    counted around it."""
    numbers = itertools.count()

    async def segment(per_chat: int) -> dict[str, Any]:
        gc.collect()
        before = await fake_stats(stats_url)
        asked = {**spec, "per_chat": per_chat, "prefix": f"message {next(numbers)}"}
        server = ServerCpu(store_url) if store_url else None
        if server is not None:
            await server.start()
        with CpuMeter() as cpu, profiled(f"turns-{label}"):
            run = await _drive(control_url, asked)
        backends, writers = await server.stop() if server is not None else (0.0, 0.0)
        after = await fake_stats(stats_url)
        return {
            "server_cpu_s": backends,
            "writers_cpu_s": writers,
            "chats": chats,
            "messages": chats * per_chat,
            "wall_s": run["wall_s"],
            "cpu_s": cpu.used,
            "latencies": run["latencies"],
            **served_between(before, after),
            "seeded": seeded,
            "failed": run["failed"],
            "bot_api_calls": run["methods"],
            "shown": run["shown"],
            "writes": run["writes"],
        }

    return segment


@contextlib.asynccontextmanager
async def platform(
    url: str,
    stats_url: str,
    control_url: str,
    *,
    channel: str,
    section: dict[str, Any],
    chat_ids: list[str],
    stored: int,
    warmup: int,
    label: str,
    deliver: str = "",
    drive: dict[str, Any] | None = None,
    store: str = "",
) -> AsyncIterator[Callable[..., Awaitable[dict[str, Any]]]]:
    """The daemon with the one platform ``channel`` configured by ``section``; a segment
    runs ``len(chat_ids)`` closed loops of ``per_chat`` messages (bench/bench_turns.py
    takes turns with its floor). ``deliver="http"``: the fake posts each message to the
    daemon's Slack HTTP Events route instead of its socket; ``drive``: more of the run's
    spec (bench/driving.py), passed to the fake as it is. ``store``: a PostgreSQL
    server's URL; the daemon keeps its state in a throwaway schema there (one replica: it
    holds every lease), and a segment reports the CPU of the server's backends serving it
    (``server_cpu_s``) and of the server's shared writers (``writers_cpu_s``)."""
    from bot.agent.llm.client import litellm_module
    from bot.app import build_daemon

    async with contextlib.AsyncExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory())
        store_url = await stack.enter_async_context(throwaway_schema(store)) if store else ""
        section = {"allow_from": ["*"], **section}
        daemon = build_daemon(
            settings(Path(tmp), url, channels={channel: section}, store_url=store_url)
        )
        await daemon.start()
        await litellm_module()
        keys = [ChatKey(channel, c) for c in chat_ids]
        seeded = await seed_sessions(daemon, keys, stored) if stored else 0
        chats = len(chat_ids)
        spec = _spec(daemon.web, section, chats, deliver, drive)
        for w in range(warmup):
            await _drive(control_url, {**spec, "per_chat": 1, "prefix": f"warm-up {w}"})
        segment = _segments(
            control_url,
            stats_url,
            spec,
            chats=chats,
            seeded=seeded,
            store_url=store_url,
            label=label,
        )
        try:
            yield segment
        finally:
            await daemon.stop()
