"""Turns through the Telegram adapter, as users run it: the daemon long-polls the fake
Bot API (bench/fake_telegram_server.py, its own process) through python-telegram-bot,
and each reply is a ``sendMessage`` back to it. The fake drives the closed-loop chats,
so this process (the one measured) runs only the daemon. Each segment's messages carry
the segment's number, so every reply is checked against its own question.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp

from bench.harness import CpuMeter, profiled, seed_sessions, settings
from bench.procs import fake_stats, served_between
from bot.messages import ChatKey


async def _drive(control_url: str, chats: int, per_chat: int, prefix: str) -> dict[str, Any]:
    async with aiohttp.ClientSession() as http:
        spec = {"chats": chats, "per_chat": per_chat, "prefix": prefix}
        async with http.post(f"{control_url}/run", json=spec) as resp:
            resp.raise_for_status()
        async with http.get(f"{control_url}/wait", timeout=aiohttp.ClientTimeout(600)) as resp:
            result: dict[str, Any] = await resp.json()
            return result


@contextlib.asynccontextmanager
async def telegram(
    url: str,
    stats_url: str,
    tg_base_url: str,
    tg_token: str,
    tg_control_url: str,
    *,
    chats: int,
    stored: int,
    warmup: int,
    label: str,
) -> AsyncIterator[Callable[..., Awaitable[dict[str, Any]]]]:
    """The daemon with its Telegram channel; a segment runs ``chats`` closed loops of
    ``per_chat`` messages (bench/bench_turns.py takes turns with its floor)."""
    from bot.agent.llm.client import litellm_module
    from bot.app import build_daemon

    with tempfile.TemporaryDirectory() as tmp:
        telegram = {"token": tg_token, "base_url": tg_base_url, "allow_from": ["*"]}
        daemon = build_daemon(settings(Path(tmp), url, channels={"telegram": telegram}))
        await daemon.start()
        await litellm_module()
        keys = [ChatKey("telegram", str(c)) for c in range(1, chats + 1)]
        seeded = await seed_sessions(daemon, keys, stored) if stored else 0
        for w in range(warmup):
            await _drive(tg_control_url, chats, 1, f"warm-up {w}")
        numbers = itertools.count()

        async def segment(per_chat: int) -> dict[str, Any]:
            gc.collect()
            before = await fake_stats(stats_url)
            with CpuMeter() as cpu, profiled(f"turns-{label}"):
                run = await _drive(tg_control_url, chats, per_chat, f"message {next(numbers)}")
            after = await fake_stats(stats_url)
            return {
                "chats": chats,
                "messages": chats * per_chat,
                "wall_s": run["wall_s"],
                "cpu_s": cpu.used,
                "latencies": run["latencies"],
                **served_between(before, after),
                "seeded": seeded,
                "failed": run["failed"],
                "bot_api_calls": run["methods"],
            }

        try:
            yield segment
        finally:
            await daemon.stop()
