"""Turn overhead: messages through the whole path (channel -> bus -> dispatcher -> runner
-> real litellm -> fake model answering final_result at once -> delivery -> channel),
against the floor: a bare ``litellm.acompletion`` loop on the same fake server.

The fake model server runs in its own process (its CPU is reported apart); each
measurement runs in a fresh interpreter (bench/procs.py), so CPU per message is
``getrusage`` of the daemon's process alone (all its threads: the loop, the sqlite thread,
litellm's). Chats are closed loops: each of ``CHATS`` chats sends its next message when
the previous answer arrives, so latency is a turn's own, not queueing.
"""

from __future__ import annotations

import asyncio
import gc
import tempfile
import time
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


def _pooled(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """Two floor runs as one (their sums), with each run's CPU per call kept."""
    pooled = {k: first[k] + second[k] for k in ("calls", "wall_s", "cpu_s", "requests")}
    pooled["fake_cpu_s"] = first["fake_cpu_s"] + second["fake_cpu_s"]
    pooled["each_ms"] = [r["cpu_s"] / r["calls"] * 1000 for r in (first, second)]
    return pooled


def history_of(r: dict[str, Any]) -> int:
    """The stored messages an average model call of run ``r`` carried (besides the
    system prompt and the user's message): the same-size floor sends as many."""
    return max(0, round(r["sent_messages"] / max(1, r["requests"])) - 2)


def _turn_rows(
    scenario: str, r: dict[str, Any], floor_ms: float, sized: dict[str, Any]
) -> list[Row]:
    n = r["messages"]
    cpu_ms = r["cpu_s"] / n * 1000
    per_call_ms = r["cpu_s"] / max(1, r["requests"]) * 1000
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
            f"{cpu_ms / floor_ms:.2f}x the bare litellm call ({floor_ms:.2f} ms)",
        ),
        Row(
            scenario,
            "CPU per message vs a same-size call",
            f"{cpu_ms / sized_ms:.2f}x",
            f"a bare call with the {sized['history']} stored messages an average call here"
            f" carried: {sized_ms:.2f} ms",
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


async def run() -> list[Row]:
    async with FakeLLMProcess(delay=0.0) as fake:
        urls = {"url": fake.url, "stats_url": fake.stats_url}
        bare = await run_worker("bench_turns:floor", calls=FLOOR_CALLS, inflight=CHATS, **urls)
        short = await run_worker(
            "bench_turns:ours",
            chats=CHATS,
            per_chat=MESSAGES // CHATS,
            stored=0,
            label="short",
            **urls,
        )
        single = await run_worker(
            "bench_turns:ours", chats=1, per_chat=SINGLE, stored=0, label="single", **urls
        )
        long = await run_worker(
            "bench_turns:ours",
            chats=CHATS,
            per_chat=LONG_MESSAGES // CHATS,
            stored=LONG_SESSION,
            label="long",
            **urls,
        )
        async with FakeTelegramProcess() as tg:
            tg_args = {
                "tg_base_url": tg.base_url,
                "tg_token": tg.token,
                "tg_control_url": tg.control_url,
                "warmup": WARMUP,
                **urls,
            }
            tg_short = await run_worker(
                "telegram_turns:telegram",
                chats=CHATS,
                per_chat=MESSAGES // CHATS,
                stored=0,
                label="short",
                **tg_args,
            )
            tg_long = await run_worker(
                "telegram_turns:telegram",
                chats=CHATS,
                per_chat=LONG_MESSAGES // CHATS,
                stored=LONG_SESSION,
                label="long",
                **tg_args,
            )
        sized: dict[int, dict[str, Any]] = {}
        for history in sorted({history_of(r) for r in (short, long, tg_short, tg_long)}):
            sized[history] = await run_worker(
                "bench_turns:floor",
                calls=FLOOR_CALLS,
                inflight=CHATS,
                history=history,
                **urls,
            )
        # The bare floor again at the end: a neighbour's load during the run shows as
        # the two disagreeing, and the ratios use their mean.
        bare = _pooled(
            bare,
            await run_worker("bench_turns:floor", calls=FLOOR_CALLS, inflight=CHATS, **urls),
        )
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
            f"mean of a run before and after the rest: {bare['each_ms'][0]:.2f} and"
            f" {bare['each_ms'][1]:.2f} ms; fake server:"
            f" {bare['fake_cpu_s'] / bare['requests'] * 1000:.2f} ms per request (own process)",
        ),
    ]
    rows += _turn_rows("turns: short session", short, floor_ms, sized[history_of(short)])
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
    rows += _turn_rows(
        f"turns: session of {long['seeded']:,} messages", long, floor_ms, sized[history_of(long)]
    )
    for r in (tg_short, tg_long):
        scenario = "turns via Telegram (fake Bot API, own process): " + (
            "short session" if not r["seeded"] else f"session of {r['seeded']:,} messages"
        )
        rows += _turn_rows(scenario, r, floor_ms, sized[history_of(r)])
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
