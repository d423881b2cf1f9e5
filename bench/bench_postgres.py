"""PostgreSQL and replicas (issue 44): what the shared store costs, and how replicas share
a burst and survive a kill. Skipped (one row saying so) when no server answers at
``BOT_BENCH_POSTGRES_URL`` (default: the local test server).

- CPU per message through Telegram (bench/platform_turns.py: the fake Bot API and the
  fake model in their own processes), one daemon on SQLite and one on PostgreSQL (one
  replica in a throwaway schema), alive together and taking turns segment by segment
  (the order flips every round), so the machine's load falls on both alike. PostgreSQL's
  side counts the daemon's process and the server's backends serving its connections
  (psutil; bench/pgserver.py); the server's shared writers are reported apart, since
  they serve every database on the server, other users' included.
- 1,000 one-second chats over two replicas (bench/replica.py, each its own process, the
  default [cluster] settings): half the messages arrive at each replica (as webhooks or
  Slack's connections spread them), so about half of each replica's are for chats the
  other runs (journaled, then read there: LISTEN/NOTIFY wakes it). Wall time from the
  first message to the last answer, against 1,000 concurrent bare litellm calls to the
  same one-second fake in one process (bench/bench_concurrency.py's floor), one run
  just before and one just after; every chat answered once.
- Failover: two replicas, one killed (SIGKILL) at a random moment of its renewal cycle;
  a message then arrives at the other for a chat the dead one ran; the time from the kill
  to its answer. ``KILLS`` times, a fresh replica replacing the dead one each time, at
  the default ``lease_ttl_s`` (10 s).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

from bench.common import Row, Target, median, percentile
from bench.pgserver import PG_URL, reachable, throwaway_schema
from bench.procs import (
    DAEMON_LOOP,
    FakeLLMProcess,
    FakeTelegramProcess,
    Segments,
    proc_cpu_s,
    run_worker,
)
from bench.replica import PARTITIONS, chats_in
from bot.config import Settings

CHATS = 50
MESSAGES = 2_000  # per backend, over the rounds
ROUNDS = 6  # segments per backend, alternating (SQLite first in even rounds)
WARMUP = 2
CPU_RATIO_LIMIT = 1.5  # PostgreSQL's CPU per message (daemon + backends) over SQLite's
BURST = 1_000  # one-second chats over two replicas
DELAY_S = 1.0
WALL_RATIO_LIMIT = 1.3  # the burst's wall time over the bare calls' in one process
DEADLINE_S = 180.0
KILLS = 5
TTL_S = Settings().cluster.lease_ttl_s
FAILOVER_LIMIT_S = TTL_S + 2  # the bound: a dead replica's chats taken over


def _sum(runs: list[dict[str, Any]], key: str) -> float:
    return float(sum(r[key] for r in runs))


async def _cpu_per_message(urls: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """``ROUNDS`` segments on each backend, taking turns."""
    async with FakeTelegramProcess() as tg_lite, FakeTelegramProcess() as tg_pg:

        def daemon(tg: FakeTelegramProcess, label: str, store: str) -> Segments:
            return Segments(
                "platform_turns:platform",
                loop=DAEMON_LOOP,
                control_url=tg.control_url,
                channel="telegram",
                section=tg.section(),
                chat_ids=tg.chat_ids(CHATS),
                stored=0,
                warmup=WARMUP,
                label=label,
                store=store,
                **urls,
            )

        async with (
            daemon(tg_lite, "sqlite", "") as lite,
            daemon(tg_pg, "postgres", PG_URL) as pg,
        ):
            runs: dict[str, list[dict[str, Any]]] = {"sqlite": [], "postgres": []}
            per_chat = MESSAGES // CHATS // ROUNDS
            for n in range(ROUNDS):
                order = [("sqlite", lite), ("postgres", pg)]
                for name, side in order if n % 2 == 0 else reversed(order):
                    runs[name].append(await side.run(per_chat=per_chat))
    return runs


def _cpu_rows(runs: dict[str, list[dict[str, Any]]]) -> list[Row]:
    lite, pg = runs["sqlite"], runs["postgres"]
    n_lite, n_pg = _sum(lite, "messages"), _sum(pg, "messages")
    lite_ms = _sum(lite, "cpu_s") / n_lite * 1000
    daemon_ms = _sum(pg, "cpu_s") / n_pg * 1000
    server_ms = _sum(pg, "server_cpu_s") / n_pg * 1000
    writers_ms = _sum(pg, "writers_cpu_s") / n_pg * 1000
    pg_ms = daemon_ms + server_ms
    each = [
        (p["cpu_s"] + p["server_cpu_s"]) / p["messages"] / (s["cpu_s"] / s["messages"])
        for s, p in zip(lite, pg, strict=True)
    ]
    failed = int(_sum(lite, "failed") + _sum(pg, "failed"))
    said = {name: _said(side) for name, side in (("SQLite", lite), ("PostgreSQL", pg))}
    scenario = f"PostgreSQL vs SQLite: turns via Telegram, {CHATS} chats, short session"
    return [
        Row(scenario, "CPU per message, SQLite", f"{lite_ms:.2f} ms", "the daemon's process"),
        Row(
            scenario,
            "CPU per message, PostgreSQL (daemon + its server backends)",
            f"{pg_ms:.2f} ms",
            f"{pg_ms / lite_ms:.2f}x SQLite's over {len(pg)} segments each, taking turns"
            f" (segment by segment {min(each):.2f}-{max(each):.2f}x); daemon {daemon_ms:.2f} ms"
            f" + backends {server_ms:.2f} ms; the server's shared writers (WAL writer,"
            f" checkpointer, background writer, serving every database) {writers_ms:.2f} ms"
            f" more; {failed} replies not the echo",
            Target(pg_ms / lite_ms, CPU_RATIO_LIMIT, "x"),
        ),
        Row(
            scenario,
            "latency p50; Bot API calls per message",
            "; ".join(f"{name} {text}" for name, text in said.items()),
            "a turn past 1 s is shown typing and streamed (sendChatAction, editMessageText)",
        ),
    ]


def _said(runs: list[dict[str, Any]]) -> str:
    """Latency p50 and the Bot API calls per message over a backend's segments."""
    n = _sum(runs, "messages")
    calls: Counter[str] = Counter()
    for r in runs:
        calls.update(r["bot_api_calls"])
    p50 = median([x for r in runs for x in r["latencies"]]) * 1000
    return f"{p50:.0f} ms, " + ", ".join(f"{k} {v / n:.2f}" for k, v in sorted(calls.items()))


# --------------------------------------------------------------------------- replicas


@contextlib.asynccontextmanager
async def _replica(urls: dict[str, Any], store_url: str) -> AsyncIterator[Segments]:
    async with Segments(
        "replica:replica", loop=DAEMON_LOOP, store_url=store_url, **urls
    ) as replica:
        yield replica


async def _balanced(replicas: list[Segments], timeout: float = 90) -> None:
    """Until each replica holds its fair share of the chat partitions."""
    share = PARTITIONS // len(replicas)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        held = [len((await r.run(op="held"))["partitions"]) for r in replicas]
        if all(h == share for h in held):
            return
        await asyncio.sleep(0.5)
    raise RuntimeError(f"replicas not balanced after {timeout:.0f} s: {held}")


async def _replies(replicas: list[Segments], want: int) -> list[tuple[str, float, str]]:
    """Every reply the replicas' channels sent, until ``want`` chats were answered (or
    the deadline), then once more a moment later (a second answer would show there)."""
    got: list[tuple[str, float, str]] = []
    deadline = time.monotonic() + DEADLINE_S
    while len({c for c, _, _ in got}) < want and time.monotonic() < deadline:
        await asyncio.sleep(0.25)
        for r in replicas:
            got += [tuple(x) for x in (await r.run(op="replies"))["replies"]]
    await asyncio.sleep(2)
    for r in replicas:
        got += [tuple(x) for x in (await r.run(op="replies"))["replies"]]
    return got


async def _burst(urls: dict[str, str]) -> dict[str, Any]:
    """``BURST`` chats, one message each, half arriving at each of two replicas."""
    async with (
        throwaway_schema() as store_url,
        _replica(urls, store_url) as a,
        _replica(urls, store_url) as b,
    ):
        await _balanced([a, b])
        for n, r in enumerate((a, b)):
            await r.run(op="warm", label=str(n))
        await _balanced([a, b])
        for r in (a, b):
            await r.run(op="replies")  # the warm-up's, not counted
        chats = [f"c{n}" for n in range(BURST)]
        pids = [r.proc.pid for r in (a, b) if r.proc is not None]
        cpu = sum(proc_cpu_s(p) for p in pids)
        started = time.perf_counter()
        await asyncio.gather(a.run(op="put", chats=chats[0::2]), b.run(op="put", chats=chats[1::2]))
        got = await _replies([a, b], BURST)
        cpu = sum(proc_cpu_s(p) for p in pids) - cpu
    echoes = {c for c, _, text in got if text == f"echo: hello from chat {c}"}
    times = [t - started for _, t, _ in got]
    return {
        "wall_s": max(times) if len(echoes) == BURST else DEADLINE_S,
        "p50_s": median(times),
        "p99_s": percentile(times, 99),
        "answered": len(echoes),
        "replies": len(got),
        "twice": sum(1 for n in Counter(c for c, _, _ in got).values() if n > 1),
        "cpu_s": cpu,
    }


async def _failovers(urls: dict[str, str]) -> list[float]:
    """Seconds from a replica's SIGKILL to the answer, by the other one, in a chat the
    dead one ran; ``KILLS`` times, each at a random moment of the renewal cycle."""
    chance = random.Random(44)
    took: list[float] = []
    async with throwaway_schema() as store_url, contextlib.AsyncExitStack() as stack:
        replicas = [await stack.enter_async_context(_replica(urls, store_url)) for _ in "ab"]
        await _balanced(replicas)
        for kill in range(KILLS):
            victim, survivor = replicas[kill % 2], replicas[1 - kill % 2]
            held = set((await victim.run(op="held"))["partitions"])
            (chat,) = chats_in(held, f"failover-{kill}-", 1)
            await asyncio.sleep(chance.uniform(0, TTL_S / 3))  # anywhere in the cycle
            assert victim.proc is not None
            victim.proc.kill()
            killed = time.perf_counter()
            answer = await survivor.run(op="ask", chat=chat, text=f"after kill {kill}", timeout=60)
            assert answer["text"] == f"echo: after kill {kill}", answer
            took.append(answer["at"] - killed)
            replicas[kill % 2] = await stack.enter_async_context(_replica(urls, store_url))
            await _balanced(replicas)
    return took


def _burst_rows(r: dict[str, Any], floors: list[dict[str, Any]]) -> list[Row]:
    floor = sum(f["wall_s"] for f in floors) / len(floors)
    each = " and ".join(f"{f['wall_s']:.2f}" for f in floors)
    scenario = f"{BURST:,} one-second chats over two replicas on PostgreSQL (defaults)"
    return [
        Row(
            scenario,
            "wall time",
            f"{r['wall_s']:.2f} s",
            f"{r['wall_s'] / floor:.2f}x the floor ({BURST:,} concurrent bare litellm calls in"
            f" one process, just before and after: {each}"
            f" s); reply p50 {r['p50_s']:.2f} s, p99 {r['p99_s']:.2f} s; both replicas"
            f" {r['cpu_s']:.1f} s of CPU",
            Target(r["wall_s"] / floor, WALL_RATIO_LIMIT, "x"),
        ),
        Row(
            scenario,
            "answered / answered twice",
            f"{r['answered']:,} / {r['twice']:,}",
            f"{r['replies']:,} replies in all",
            Target(r["answered"] - r["twice"], BURST, " answered once", at_least=True),
        ),
    ]


def _failover_rows(took: list[float]) -> list[Row]:
    scenario = f"failover: two replicas, one SIGKILLed ({len(took)} times), lease_ttl_s {TTL_S:g}"
    return [
        Row(
            scenario,
            "kill to the first answer in a chat it ran, p50 / max",
            f"{median(took):.1f} s / {max(took):.1f} s",
            "each: " + ", ".join(f"{t:.1f}" for t in took) + " s",
            Target(max(took), FAILOVER_LIMIT_S, " s", name="kill to the first answer, max"),
        )
    ]


async def run() -> list[Row]:
    if not await reachable():
        return [Row("PostgreSQL and replicas", "all rows", "skipped", f"no server at {PG_URL}")]
    async with FakeLLMProcess(delay=0.0) as fake:
        urls: dict[str, Any] = {"url": fake.url, "stats_url": fake.stats_url}
        cpu = await _cpu_per_message(urls)
        took = await _failovers(urls)
    async with FakeLLMProcess(delay=DELAY_S) as slow:
        urls = {"url": slow.url, "stats_url": slow.stats_url}
        floors = [await run_worker("bench_concurrency:floor", calls=BURST, **urls)]
        burst = await _burst(urls)
        floors.append(await run_worker("bench_concurrency:floor", calls=BURST, **urls))
    return _cpu_rows(cpu) + _burst_rows(burst, floors) + _failover_rows(took)
