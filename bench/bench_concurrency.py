"""Concurrency: 1,000 chats sending one message each to a model that takes 1 s, against
1,000 concurrent bare ``litellm.acompletion`` calls to the same 1-second fake (the
floor); and 10 messages in one chat, answered in order.

Each measurement runs in a fresh interpreter (bench/procs.py), so peak RSS is that
process's own high-water mark (``VmHWM``: litellm loaded, plus the burst).
"""

from __future__ import annotations

import asyncio
import gc
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import Row, Target, median, percentile, rss_mb
from bench.harness import (
    MODEL,
    BenchChannel,
    CpuMeter,
    bare_call,
    bare_litellm,
    profiled,
    settings,
    tool_definitions,
)
from bench.procs import DAEMON_LOOP, FakeLLMProcess, fake_stats, proc_rss_mb, run_worker
from bot.agent.llm.client import LLMClient
from bot.config import Settings

CHATS = 1_000
LOWER_CAP = 256  # a lower cap on model calls in flight than the default, for contrast
DELAY_S = 1.0
IN_ORDER = 10
DEADLINE_S = 180.0  # a burst still unanswered then is reported, not waited for
WALL_RATIO_LIMIT = 1.3  # at default settings, over 1,000 concurrent bare calls' wall time


def _hwm() -> float:
    import os

    return proc_rss_mb(os.getpid(), "VmHWM")


# --------------------------------------------------------------------------- workers


async def floor(url: str, stats_url: str, calls: int) -> dict[str, Any]:
    litellm = await bare_litellm()  # as shipped, for a model in its cost map
    tools = tool_definitions()
    await asyncio.gather(*(bare_call(litellm, url, tools, "warm-up") for _ in range(4)))
    gc.collect()
    base = rss_mb()
    with CpuMeter() as cpu, profiled("concurrency-floor"):
        started = time.perf_counter()
        replies = await asyncio.gather(
            *(bare_call(litellm, url, tools, f"message {i}") for i in range(calls))
        )
        wall = time.perf_counter() - started
    assert all(r.choices[0].message.tool_calls for r in replies)
    return {"wall_s": wall, "cpu_s": cpu.used, "base_rss_mb": base, "peak_rss_mb": _hwm()}


async def ours(url: str, stats_url: str, chats: int, cap: int | None) -> dict[str, Any]:
    """The burst at default settings (``cap`` None) or with ``max_concurrent_calls=cap``.

    The messages arrive at once, as platforms deliver a burst: a Telegram getUpdates
    batch journals its chats concurrently, and webhook posts, Slack events and Discord
    events each run in their own task.
    """
    from bot.agent.llm.client import litellm_module
    from bot.app import build_daemon

    with tempfile.TemporaryDirectory() as tmp:
        channel = BenchChannel()
        daemon = build_daemon(settings(Path(tmp), url, max_concurrent_calls=cap), [channel])
        await daemon.start()
        await litellm_module()
        await asyncio.gather(*(channel.ask(f"w{c}", "warm-up") for c in range(4)))
        gc.collect()
        base = rss_mb()
        before = await fake_stats(stats_url)
        msgs = [channel.message(f"c{c}", f"hello from chat {c}") for c in range(chats)]
        waiters = [channel.expect(m) for m in msgs]
        with CpuMeter() as cpu, profiled(f"concurrency-ours-{cap or 'default'}"):
            started = time.perf_counter()
            await asyncio.gather(*(channel.put(m) for m in msgs))
            await asyncio.wait(waiters, timeout=DEADLINE_S)
            wall = time.perf_counter() - started
        after = await fake_stats(stats_url)
        done = {m.reply_to: t - started for t, m in channel.sent}
        answered = [done[m.message_id] for m, w in zip(msgs, waiters, strict=True) if w.done()]
        failed = sum(
            1
            for m, w in zip(msgs, waiters, strict=True)
            if w.done() and w.result().text != f"echo: {m.text}"
        )
        if len(answered) == len(msgs):
            wall = max(answered)
        await daemon.stop(timeout=2)
    return {
        "wall_s": wall,
        "cpu_s": cpu.used,
        "p50_s": median(answered),
        "p99_s": percentile(answered, 99),
        "answered": len(answered),
        "failed": failed,
        "base_rss_mb": base,
        "peak_rss_mb": _hwm(),
        "requests": after["requests"] - before["requests"],
    }


async def in_order(url: str, stats_url: str, count: int) -> dict[str, Any]:
    from bot.agent.llm.client import litellm_module
    from bot.app import build_daemon

    with tempfile.TemporaryDirectory() as tmp:
        channel = BenchChannel()
        daemon = build_daemon(settings(Path(tmp), url), [channel])
        await daemon.start()
        await litellm_module()
        await channel.ask("warm", "warm-up")
        msgs = [channel.message("one", f"message {i}") for i in range(count)]
        waiters = [channel.expect(m) for m in msgs]
        started = time.perf_counter()
        for m in msgs:
            await channel.put(m)
        await asyncio.wait_for(asyncio.gather(*waiters), 120)
        wall = time.perf_counter() - started
        got = [m.text for _, m in channel.sent if m.key.chat_id == "one"]
        await daemon.stop()
    expected = [f"echo: message {i}" for i in range(count)]
    assert got == expected, f"replies out of order: {got}"
    return {"wall_s": wall, "order": got == expected}


# --------------------------------------------------------------------------- rows


def _mean(*runs: dict[str, Any]) -> dict[str, Any]:
    """Floor runs as one: mean wall and CPU, the largest RSS, each run's wall kept."""
    return {
        **runs[-1],
        "wall_s": sum(r["wall_s"] for r in runs) / len(runs),
        "cpu_s": sum(r["cpu_s"] for r in runs) / len(runs),
        "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
        "each": [r["wall_s"] for r in runs],
    }


async def _floors_and_bursts(
    urls: dict[str, Any],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A floor, then each burst (the lowered cap, then the defaults) followed by a floor.

    Each burst sits between two floors and is compared with their mean: a neighbour's
    load that comes and goes during the run moves both sides of the ratio alike.
    """
    floors = [await run_worker("bench_concurrency:floor", calls=CHATS, **urls)]
    bursts = []
    for cap in (LOWER_CAP, None):
        burst = await run_worker(
            "bench_concurrency:ours", chats=CHATS, cap=cap, loop=DAEMON_LOOP, **urls
        )
        floors.append(await run_worker("bench_concurrency:floor", calls=CHATS, **urls))
        bursts.append({**burst, "floor": _mean(floors[-2], floors[-1])})
    return floors, bursts


def _floor_rows(bare: dict[str, Any], runs: int) -> list[Row]:
    """The floor's rows (``runs`` floor runs pooled): what the bursts are held to."""
    floor = "1,000 one-second chats: floor (bare litellm)"
    return [
        Row(
            floor,
            "wall time",
            f"{bare['wall_s']:.2f} s",
            f"1,000 concurrent acompletion calls; mean of {runs} runs, one before and"
            f" one after each burst: {', '.join(f'{s:.2f}' for s in bare['each'])} s",
        ),
        Row(
            floor,
            "peak RSS",
            f"{bare['peak_rss_mb']:.0f} MB",
            f"{bare['base_rss_mb']:.0f} MB before the burst",
        ),
        Row(
            floor,
            "CPU",
            f"{bare['cpu_s']:.1f} s",
            f"{bare['cpu_s'] / CHATS * 1000:.1f} ms per call",
        ),
    ]


def _at_default() -> str:
    """The caps a daemon at default settings runs with, the calls' cap as its client
    resolves it (by provider), so the row names what was measured."""
    defaults = Settings()
    calls = LLMClient(MODEL, max_concurrent_calls=defaults.llm.max_concurrent_calls)
    return (
        f"max_concurrent_chats={defaults.agent.max_concurrent_chats},"
        f" max_concurrent_calls={calls.max_concurrent_calls}"
    )


def _burst_rows(
    scenario: str, r: dict[str, Any], bare: dict[str, Any], *, default: bool
) -> list[Row]:
    """A burst's rows against its own floors; only the burst at ``default`` settings is
    held to the wall-time ratio (the lowered cap is there for contrast)."""
    return [
        Row(
            scenario,
            "wall time",
            f"{r['wall_s']:.2f} s",
            f"{r['wall_s'] / r['floor']['wall_s']:.2f}x the floor (the mean of the runs"
            f" just before and after: {' and '.join(f'{s:.2f}' for s in r['floor']['each'])}"
            f" s); reply p50 {r['p50_s']:.2f} s, p99 {r['p99_s']:.2f} s",
            Target(r["wall_s"] / r["floor"]["wall_s"], WALL_RATIO_LIMIT, "x") if default else None,
        ),
        Row(
            scenario,
            "answered / failed",
            f"{r['answered']:,} / {r['failed']:,}",
            "failed = an error reply instead of the echo"
            + (f"; unanswered after {DEADLINE_S:.0f} s" if r["answered"] < CHATS else ""),
            Target(r["answered"] - r["failed"], CHATS, " answered", at_least=True),
        ),
        Row(
            scenario,
            "peak RSS",
            f"{r['peak_rss_mb']:.0f} MB",
            f"{r['peak_rss_mb'] / bare['peak_rss_mb']:.2f}x the floor;"
            f" {r['base_rss_mb']:.0f} MB before the burst",
        ),
        Row(
            scenario,
            "CPU",
            f"{r['cpu_s']:.1f} s",
            f"{r['cpu_s'] / CHATS * 1000:.1f} ms per message,"
            f" {r['requests']:,} model calls; floors either side"
            f" {r['floor']['cpu_s'] / CHATS * 1000:.1f} ms per call",
        ),
    ]


async def run() -> list[Row]:
    async with FakeLLMProcess(delay=DELAY_S) as fake:
        urls: dict[str, Any] = {"url": fake.url, "stats_url": fake.stats_url}
        floors, (lowered, default) = await _floors_and_bursts(urls)
        order = await run_worker(
            "bench_concurrency:in_order", count=IN_ORDER, loop=DAEMON_LOOP, **urls
        )
    bare = _mean(*floors)
    rows = _floor_rows(bare, len(floors))
    at_default = _at_default()
    for r, label in ((lowered, f"max_concurrent_calls={LOWER_CAP}"), (default, "defaults")):
        scenario = f"1,000 one-second chats: ours, {label}"
        if r is default:
            scenario += f" ({at_default})"
        rows += _burst_rows(scenario, r, bare, default=r is default)
    rows.append(
        Row(
            f"{IN_ORDER} messages in one chat (1 s model)",
            "time",
            f"{order['wall_s']:.2f} s",
            "answered in order (asserted)",
        )
    )
    return rows
