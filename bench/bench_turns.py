"""Turn overhead: messages through the whole path (channel -> bus -> dispatcher -> runner
-> real litellm -> fake model answering final_result at once -> delivery -> channel),
against the floor: a bare ``litellm.acompletion`` loop on the same fake server.

The fake model server runs in its own process (its CPU is reported apart); each
measurement runs in a fresh interpreter (bench/procs.py), so CPU per message is
``getrusage`` of the daemon's process alone (all its threads: the loop, the sqlite thread,
litellm's). Chats are closed loops: each of ``CHATS`` chats sends its next message when
the previous answer arrives, so latency is a turn's own, not queueing.

The machine's neighbours come and go during a run (the same floor has been seen at 4.4
and 7.0 ms within one run), so each scenario is measured between two bare floors and
compared with their mean, and its same-size floor runs right after it.
"""

from __future__ import annotations

import asyncio
import gc
import tempfile
import time
from collections.abc import Awaitable
from functools import partial
from pathlib import Path
from typing import Any

from bench.common import Row, median, percentile
from bench.harness import (
    BenchChannel,
    CpuMeter,
    bare_loop,
    profiled,
    seed_sessions,
    settings,
    tool_definitions,
    turn_history,
)
from bench.procs import FakeLLMProcess, FakeTelegramProcess, fake_stats, run_worker, served_between

CHATS = 50
MESSAGES = 2_000
LONG_SESSION = 1_000  # stored messages per chat before the measured turns
LONG_MESSAGES = 1_000
FLOOR_CALLS = 1_000
SINGLE = 100  # one chat, one message at a time: a turn's own latency, no queueing
WARMUP = 2  # turns per chat before measuring (litellm's first-call caches, tokenizer)


# --------------------------------------------------------------------------- workers


async def floor(
    url: str, stats_url: str, calls: int, inflight: int, history: int = 0
) -> dict[str, Any]:
    """Bare ``litellm.acompletion`` calls, configured as the daemon configures litellm
    (nothing of what the daemon adds: see bot.agent.llm.cost_map); ``history``: this
    many stored messages go before the user's (the same-size floor)."""
    from bot.agent.llm.client import litellm_module

    litellm = await litellm_module()
    tools = tool_definitions()
    before_user = turn_history(history)
    await bare_loop(litellm, url, tools, 100, inflight, history=before_user)  # warm-up
    gc.collect()
    before = await fake_stats(stats_url)
    with CpuMeter() as cpu, profiled(f"turns-floor-{inflight}-{history}"):
        wall = await bare_loop(litellm, url, tools, calls, inflight, history=before_user)
    after = await fake_stats(stats_url)
    return {
        "calls": calls,
        "history": history,
        "wall_s": wall,
        "cpu_s": cpu.used,
        **served_between(before, after),
    }


async def ours(
    url: str, stats_url: str, *, chats: int, per_chat: int, stored: int, label: str
) -> dict[str, Any]:
    """The daemon with ``chats`` closed-loop chats of ``per_chat`` messages each."""
    from bot.agent.llm.client import litellm_module
    from bot.app import build_daemon

    with tempfile.TemporaryDirectory() as tmp:
        channel = BenchChannel()
        daemon = build_daemon(settings(Path(tmp), url), [channel])
        await daemon.start()
        await litellm_module()
        keys = [channel.message(f"c{c}", "").key for c in range(chats)]
        seeded = await seed_sessions(daemon, keys, stored) if stored else 0
        for w in range(WARMUP):
            await asyncio.gather(*(channel.ask(f"c{c}", f"warm-up {w}") for c in range(chats)))
        latencies: list[float] = []
        failed: list[str] = []

        async def chat(c: int) -> None:
            for i in range(per_chat):
                reply, latency = await channel.ask(f"c{c}", f"message {i} in chat {c}")
                if reply.text != f"echo: message {i} in chat {c}":
                    failed.append(reply.text)  # counted and reported, not hidden
                latencies.append(latency)

        gc.collect()
        before = await fake_stats(stats_url)
        with CpuMeter() as cpu, profiled(f"turns-{label}"):
            started = time.perf_counter()
            await asyncio.gather(*(chat(c) for c in range(chats)))
            wall = time.perf_counter() - started
        after = await fake_stats(stats_url)
        rows = len(await daemon.sessions.history_rows(channel.message("c0", "").key))
        await daemon.stop()
    return {
        "chats": chats,
        "messages": chats * per_chat,
        "wall_s": wall,
        "cpu_s": cpu.used,
        "p50_ms": median(latencies) * 1000,
        "p99_ms": percentile(latencies, 99) * 1000,
        **served_between(before, after),
        "seeded": seeded,
        "failed": len(failed),
        "final_rows": rows,
    }


# --------------------------------------------------------------------------- rows


def _pooled(*runs: dict[str, Any]) -> dict[str, Any]:
    """Floor runs as one (their sums), with each run's CPU per call kept."""
    keys = ("calls", "wall_s", "cpu_s", "requests", "fake_cpu_s")
    pooled: dict[str, Any] = {k: sum(r[k] for r in runs) for k in keys}
    pooled["each_ms"] = [r["cpu_s"] / r["calls"] * 1000 for r in runs]
    return pooled


def history_of(r: dict[str, Any]) -> int:
    """The stored messages an average model call of run ``r`` carried (besides the
    system prompt and the user's message): the same-size floor sends as many."""
    return max(0, round(r["sent_messages"] / max(1, r["requests"])) - 2)


def _turn_rows(scenario: str, r: dict[str, Any]) -> list[Row]:
    """A scenario's rows; its ratios are to the floors measured either side of it."""
    n = r["messages"]
    cpu_ms = r["cpu_s"] / n * 1000
    per_call_ms = r["cpu_s"] / max(1, r["requests"]) * 1000
    floor_ms = r["floor"]["cpu_s"] / r["floor"]["calls"] * 1000
    either_side = " and ".join(f"{ms:.2f}" for ms in r["floor"]["each_ms"])
    sized = r["sized"]
    sized_ms = sized["cpu_s"] / sized["calls"] * 1000
    return [
        Row(
            scenario,
            "messages/s",
            f"{n / r['wall_s']:.0f}",
            f"{n:,} messages, {r['chats']} chats; {r['failed']} answered with an error",
        ),
        Row(scenario, "latency p50", f"{r['p50_ms']:.1f} ms", "put_inbound -> channel.send"),
        Row(scenario, "latency p99", f"{r['p99_ms']:.1f} ms"),
        Row(
            scenario,
            "CPU per message",
            f"{cpu_ms:.2f} ms",
            f"{cpu_ms / floor_ms:.2f}x the bare litellm call ({floor_ms:.2f} ms, the mean of"
            f" the floors just before and after: {either_side})",
        ),
        Row(
            scenario,
            "CPU per message vs a same-size call",
            f"{cpu_ms / sized_ms:.2f}x",
            f"a bare call with the {sized['history']} stored messages an average call here"
            f" carried, measured right after: {sized_ms:.2f} ms",
        ),
        Row(
            scenario,
            "model calls per message",
            f"{r['requests'] / n:.2f}",
            f"{per_call_ms:.2f} ms CPU per model call = {per_call_ms / floor_ms:.2f}x floor"
            " (extra calls: archived-summary updates)",
        ),
        Row(
            scenario,
            "fake server CPU per request",
            f"{r['fake_cpu_s'] / max(1, r['requests']) * 1000:.2f} ms",
            "separate process; not in the figures above",
        ),
    ]


async def _bare(urls: dict[str, str], history: int = 0) -> dict[str, Any]:
    return await run_worker(
        "bench_turns:floor", calls=FLOOR_CALLS, inflight=CHATS, history=history, **urls
    )


async def _bracketed(
    urls: dict[str, str], floors: list[dict[str, Any]], scenario: Awaitable[dict[str, Any]]
) -> dict[str, Any]:
    """Run ``scenario``, then its same-size floor and the next bare floor: each figure is
    compared with floors measured right before and after it, so a neighbour's load that
    comes and goes during the run moves both sides of a ratio alike."""
    r = await scenario
    r["sized"] = await _bare(urls, history_of(r))
    floors.append(await _bare(urls))
    r["floor"] = _pooled(floors[-2], floors[-1])
    return r


async def run() -> list[Row]:
    async with FakeLLMProcess(delay=0.0) as fake:
        urls = {"url": fake.url, "stats_url": fake.stats_url}
        ours = partial(run_worker, "bench_turns:ours", chats=CHATS, **urls)
        floors = [await _bare(urls)]
        short = await _bracketed(
            urls, floors, ours(per_chat=MESSAGES // CHATS, stored=0, label="short")
        )
        single = await ours(chats=1, per_chat=SINGLE, stored=0, label="single")
        long = await _bracketed(
            urls,
            floors,
            ours(per_chat=LONG_MESSAGES // CHATS, stored=LONG_SESSION, label="long"),
        )
        async with FakeTelegramProcess() as tg:
            via_telegram = partial(
                run_worker,
                "telegram_turns:telegram",
                tg_base_url=tg.base_url,
                tg_token=tg.token,
                tg_control_url=tg.control_url,
                warmup=WARMUP,
                chats=CHATS,
                **urls,
            )
            tg_short = await _bracketed(
                urls, floors, via_telegram(per_chat=MESSAGES // CHATS, stored=0, label="short")
            )
            tg_long = await _bracketed(
                urls,
                floors,
                via_telegram(per_chat=LONG_MESSAGES // CHATS, stored=LONG_SESSION, label="long"),
            )
    bare = _pooled(*floors)
    floor_ms = bare["cpu_s"] / bare["calls"] * 1000
    rows = [
        Row(
            "turns: floor (bare litellm.acompletion)",
            "calls/s",
            f"{bare['calls'] / bare['wall_s']:.0f}",
            f"{bare['calls']:,} calls, {CHATS} in flight, same tools offered",
        ),
        Row(
            "turns: floor (bare litellm.acompletion)",
            "CPU per call",
            f"{floor_ms:.2f} ms",
            f"mean of {len(floors)} runs, one before the first scenario and one after each:"
            f" {', '.join(f'{ms:.2f}' for ms in bare['each_ms'])} ms; fake server:"
            f" {bare['fake_cpu_s'] / bare['requests'] * 1000:.2f} ms per request (own process)",
        ),
    ]
    rows += _turn_rows("turns: short session", short)
    rows += [
        Row(
            "turns: one chat, one message at a time",
            "latency p50",
            f"{single['p50_ms']:.1f} ms",
            f"{SINGLE} messages; unloaded (the {CHATS}-chat latencies above include queueing"
            " for the CPU)",
        ),
        Row("turns: one chat, one message at a time", "latency p99", f"{single['p99_ms']:.1f} ms"),
        Row(
            "turns: one chat, one message at a time",
            "CPU per message",
            f"{single['cpu_s'] / single['messages'] * 1000:.2f} ms",
            f"{single['requests'] / single['messages']:.2f} model calls per message",
        ),
    ]
    rows += _turn_rows(f"turns: session of {long['seeded']:,} messages", long)
    for r in (tg_short, tg_long):
        scenario = "turns via Telegram (fake Bot API, own process): " + (
            "short session" if not r["seeded"] else f"session of {r['seeded']:,} messages"
        )
        rows += _turn_rows(scenario, r)
        per_message = sorted(r["bot_api_calls"].items())
        calls = ", ".join(f"{k} {v / r['messages']:.2f}" for k, v in per_message)
        rows.append(Row(scenario, "Bot API calls per message", calls, "long polls included"))
    growth = (long["cpu_s"] / long["messages"]) / (short["cpu_s"] / short["messages"])
    rows.append(
        Row(
            "turns: long vs short session",
            "CPU per message ratio",
            f"{growth:.2f}x",
            f"sessions start at {long['seeded']:,} stored messages vs empty",
        )
    )
    return rows
