"""Turn overhead: messages through the whole path (channel -> bus -> dispatcher -> runner
-> real litellm -> fake model answering final_result at once -> delivery -> channel),
against the floor: a bare ``litellm.acompletion`` loop on the same fake server.

The fake model server runs in its own process (its CPU is reported apart); each
measurement runs in a fresh interpreter (bench/procs.py), so CPU per message is
``getrusage`` of the daemon's process alone (all its threads: the loop, the sqlite thread,
litellm's). Chats are closed loops: each of ``CHATS`` chats sends its next message when
the previous answer arrives, so latency is a turn's own, not queueing.

The machine's neighbours come and go during a run (the same floor has been seen at 4.4
and 7.0 ms within one run, and at twice a quiet day's figure for a whole run), so a
scenario and its floor take turns: both processes stay up, and the scenario runs in
``ROUNDS`` segments, each followed by a same-size floor segment and a bare one (with a
bare one before the first). A load that comes and goes then falls on both sides of the
ratio alike; the per-segment ratios show how far it moved them.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

from bench.common import Row, Target, median, percentile
from bench.harness import (
    BenchChannel,
    CpuMeter,
    bare_litellm,
    bare_loop,
    profiled,
    seed_sessions,
    settings,
    tool_definitions,
    turn_history,
)
from bench.procs import (
    DAEMON_LOOP,
    FakeLLMProcess,
    FakeTelegramProcess,
    Segments,
    fake_stats,
    run_worker,
    served_between,
)
from bot.ops.loop import loop_factory

CHATS = 50
MESSAGES = 2_000
LONG_SESSION = 1_000  # stored messages per chat before the measured turns
LONG_MESSAGES = 1_000
ROUNDS = 5  # segments of each scenario, taking turns with its floor's
FLOOR_SEGMENT = 200  # bare calls per floor segment
SINGLE = 100  # one chat, one message at a time: a turn's own latency, no queueing
CPU_RATIO_LIMIT = 1.3  # a turn's CPU over the bare litellm call's, pooled over the segments
CALLS_LIMIT = 1.05  # model calls per message in a plain short chat (archive folds included)
WARMUP = 2  # turns per chat before measuring (litellm's first-call caches, tokenizer)

Segment = Callable[..., Awaitable[dict[str, Any]]]


# --------------------------------------------------------------------------- workers


@contextlib.asynccontextmanager
async def floor(
    url: str, stats_url: str, inflight: int, label: str, *, stream: bool = False, warmup: int = 100
) -> AsyncIterator[Segment]:
    """Bare ``litellm.acompletion`` calls (litellm as :func:`bench.harness.bare_litellm`
    sets it up: as shipped, for a model in its cost map); a segment's ``history``: this
    many stored messages go before the user's (the same-size floor); ``stream``: each
    call streamed and read to its end."""
    litellm = await bare_litellm()
    tools = tool_definitions()
    await bare_loop(litellm, url, tools, warmup, inflight, stream=stream)

    async def segment(calls: int, history: int = 0) -> dict[str, Any]:
        before_user = turn_history(history)
        gc.collect()
        before = await fake_stats(stats_url)
        with CpuMeter() as cpu, profiled(f"turns-floor-{label}-{'sized' if history else 'bare'}"):
            wall = await bare_loop(
                litellm, url, tools, calls, inflight, history=before_user, stream=stream
            )
        after = await fake_stats(stats_url)
        return {
            "calls": calls,
            "history": history,
            "wall_s": wall,
            "cpu_s": cpu.used,
            **served_between(before, after),
        }

    yield segment


@contextlib.asynccontextmanager
async def daemon_chats(
    url: str, stats_url: str, *, chats: int, stored: int, label: str
) -> AsyncIterator[Segment]:
    """The daemon with ``chats`` closed-loop chats; a segment sends ``per_chat`` messages
    in each (numbered on from the segment before, so every reply is checked)."""
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
        numbers = itertools.count()

        async def segment(per_chat: int) -> dict[str, Any]:
            first = next(numbers) * per_chat
            latencies: list[float] = []
            failed: list[str] = []

            async def chat(c: int) -> None:
                for i in range(first, first + per_chat):
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
            rows = len(await daemon.sessions.history_rows(keys[0]))
            return {
                "chats": chats,
                "messages": chats * per_chat,
                "wall_s": wall,
                "cpu_s": cpu.used,
                "latencies": latencies,
                **served_between(before, after),
                "seeded": seeded,
                "failed": len(failed),
                "final_rows": rows,
            }

        try:
            yield segment
        finally:
            await daemon.stop()


async def ours(
    url: str, stats_url: str, *, chats: int, per_chat: int, stored: int, label: str
) -> dict[str, Any]:
    """One segment of :func:`daemon_chats` in a worker of its own, with its latencies'
    p50 and p99 (the nanobot comparison and the one-chat latency use it)."""
    async with daemon_chats(url, stats_url, chats=chats, stored=stored, label=label) as segment:
        r = await segment(per_chat=per_chat)
    latencies = r.pop("latencies")
    return {**r, "p50_ms": median(latencies) * 1000, "p99_ms": percentile(latencies, 99) * 1000}


# --------------------------------------------------------------------------- rows


def _pooled(runs: list[dict[str, Any]], keys: tuple[str, ...]) -> dict[str, Any]:
    """Segments as one: the sums of ``keys``."""
    return {k: sum(r[k] for r in runs) for k in keys}


FLOOR_KEYS = ("calls", "wall_s", "cpu_s", "requests", "fake_cpu_s")
SCENARIO_KEYS = ("messages", "wall_s", "cpu_s", "requests", "sent_messages", "fake_cpu_s")


def history_of(r: dict[str, Any]) -> int:
    """The stored messages an average model call of run ``r`` carried (besides the
    system prompt and the user's message): the same-size floor sends as many."""
    sent: int = r["sent_messages"]
    calls: int = max(1, r["requests"])
    return max(0, round(sent / calls) - 2)


def _per_call(r: dict[str, Any], count: str = "calls") -> float:
    n: float = max(1, r[count])
    return float(r["cpu_s"]) / n


async def interleaved(
    floor: Segments,
    scenario: Segments,
    per_chat: int,
    *,
    rounds: int = ROUNDS,
    floor_calls: int = FLOOR_SEGMENT,
    same_size: bool = True,
) -> dict[str, Any]:
    """``rounds`` segments of ``scenario`` (``per_chat`` messages per chat in all), each
    followed by a same-size floor segment (unless not ``same_size``) and a bare one, with
    a bare one first; the scenario's segments pooled (and each in ``segments``), with its
    ``floor_segments``, ``sized`` pooled and ``ratios``: each segment's CPU per message
    over the mean of the bare segments on either side of it."""
    bare = [await floor.run(calls=floor_calls)]
    runs: list[dict[str, Any]] = []
    sized: list[dict[str, Any]] = []
    for _ in range(rounds):
        runs.append(await scenario.run(per_chat=max(1, per_chat // rounds)))
        if same_size:
            sized.append(await floor.run(calls=floor_calls, history=history_of(runs[-1])))
        bare.append(await floor.run(calls=floor_calls))
    pooled = _pooled(runs, SCENARIO_KEYS)
    latencies = [x for r in runs for x in r["latencies"]]
    methods: dict[str, int] = {}
    for r in runs:
        for name, n in r.get("bot_api_calls", {}).items():
            methods[name] = methods.get(name, 0) + n
    return {
        **pooled,
        "chats": runs[0]["chats"],
        "seeded": runs[0]["seeded"],
        "failed": sum(r["failed"] for r in runs),
        "p50_ms": median(latencies) * 1000,
        "p99_ms": percentile(latencies, 99) * 1000,
        "bot_api_calls": methods,
        "segments": runs,
        "floor_segments": bare,
        "sized": {
            **_pooled(sized, FLOOR_KEYS),
            "history": round(median([s["history"] for s in sized])),
        },
        "ratios": [
            _per_call(r, "messages") / ((_per_call(a) + _per_call(b)) / 2)
            for r, a, b in zip(runs, bare, bare[1:], strict=False)
        ],
    }


def streamed_floor_row(streamed: list[dict[str, Any]], plain_ms: float) -> Row:
    """What litellm's ``stream=True`` costs a bare call (from a run's streamed floor
    segments) against its plain call: the turns of a chat that previews pay it too."""
    each = [_per_call(f) * 1000 for f in streamed]
    per_call = _per_call(_pooled(streamed, FLOOR_KEYS)) * 1000
    return Row(
        "turns: floor streamed (bare litellm.acompletion, stream=True, read to the end)",
        "CPU per call",
        f"{per_call:.2f} ms",
        f"{per_call / plain_ms:.2f}x the plain bare call above, in the same run"
        f" ({len(streamed)} segments taking turns with the streamed scenarios:"
        f" {min(each):.2f}-{max(each):.2f} ms); litellm's own cost of a stream",
    )


def floor_cpu_ms(r: dict[str, Any]) -> float:
    """CPU per call of the bare segments that took turns with run ``r``, in ms."""
    return _per_call(_pooled(r["floor_segments"], FLOOR_KEYS)) * 1000


def turn_rows(scenario: str, r: dict[str, Any]) -> list[Row]:
    """A scenario's rows; its ratios are to the floor segments it took turns with."""
    n = r["messages"]
    cpu_ms = r["cpu_s"] / n * 1000
    per_call_ms = r["cpu_s"] / max(1, r["requests"]) * 1000
    floor_ms = floor_cpu_ms(r)
    spread = f"{min(r['ratios']):.2f}-{max(r['ratios']):.2f}x"
    sized = r["sized"]
    sized_ms = _per_call(sized) * 1000
    kind = "streamed litellm" if r.get("stream") else "litellm"
    return [
        Row(
            scenario,
            "messages/s",
            f"{n / r['wall_s']:.0f}",
            f"{n:,} messages, {r['chats']} chats; {r['failed']} answered with an error",
            Target(r["failed"], 0, name="replies that are errors"),
        ),
        Row(scenario, "latency p50", f"{r['p50_ms']:.1f} ms", "put_inbound -> channel.send"),
        Row(scenario, "latency p99", f"{r['p99_ms']:.1f} ms"),
        Row(
            scenario,
            "CPU per message",
            f"{cpu_ms:.2f} ms",
            f"{cpu_ms / floor_ms:.2f}x the bare {kind} call ({floor_ms:.2f} ms over the"
            f" {len(r['floor_segments'])} bare segments taking turns with its {ROUNDS};"
            f" segment by segment {spread})",
            Target(cpu_ms / floor_ms, CPU_RATIO_LIMIT, "x"),
        ),
        Row(
            scenario,
            "CPU per message vs a same-size call",
            f"{cpu_ms / sized_ms:.2f}x",
            f"a bare {kind} call with the {sized['history']} stored messages an average"
            f" call here carried, in segments right after each of its own: {sized_ms:.2f} ms",
        ),
        Row(
            scenario,
            "model calls per message",
            f"{r['requests'] / n:.2f}",
            f"{per_call_ms:.2f} ms CPU per model call = {per_call_ms / floor_ms:.2f}x floor"
            " (extra calls: archived-summary updates)",
            None if r["seeded"] else Target(r["requests"] / n, CALLS_LIMIT),
        ),
        Row(
            scenario,
            "fake server CPU per request",
            f"{r['fake_cpu_s'] / max(1, r['requests']) * 1000:.2f} ms",
            "separate process; not in the figures above",
        ),
    ]


async def take_turns(
    urls: dict[str, Any],
    target: str,
    label: str,
    per_chat: int,
    *,
    inflight: int = CHATS,
    stream: bool = False,
    **kwargs: Any,
) -> dict[str, Any]:
    """``target``'s segments taking turns with a floor worker of their own (``inflight``
    bare calls at once: as many as the scenario has chats). ``stream``: the scenario's
    model calls are streamed (a platform chat that previews, at the default
    ``streaming = true``), so the floor's are too: the bare call a bot makes for it."""
    async with (
        Segments(
            "bench_turns:floor", inflight=inflight, label=label, stream=stream, **urls
        ) as floor,
        Segments(target, label=label, loop=DAEMON_LOOP, **urls, **kwargs) as scenario,
    ):
        return {**await interleaved(floor, scenario, per_chat), "stream": stream}


async def _loop_floors(urls: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The bare floor on asyncio's loop and on uvloop, ``ROUNDS`` segments each taking
    turns: what the event loop alone saves a bare call. The daemon runs on uvloop where it
    is installed (bot/ops/loop.py); the floor above stays on asyncio's, as a bare call
    would."""
    async with (
        Segments("bench_turns:floor", inflight=CHATS, label="asyncio", **urls) as plain,
        Segments("bench_turns:floor", inflight=CHATS, label="uvloop", loop="uvloop", **urls) as uv,
    ):
        runs: dict[str, list[dict[str, Any]]] = {"asyncio": [], "uvloop": []}
        for _ in range(ROUNDS):
            runs["asyncio"].append(await plain.run(calls=FLOOR_SEGMENT))
            runs["uvloop"].append(await uv.run(calls=FLOOR_SEGMENT))
    return runs


def _loop_rows(runs: dict[str, list[dict[str, Any]]]) -> list[Row]:
    plain, uv = (_per_call(_pooled(runs[k], FLOOR_KEYS)) * 1000 for k in ("asyncio", "uvloop"))
    pairs = zip(runs["asyncio"], runs["uvloop"], strict=True)
    each = [_per_call(u) / _per_call(a) for a, u in pairs]
    return [
        Row(
            "turns: floor on uvloop (bare litellm.acompletion)",
            "CPU per call",
            f"{uv:.2f} ms",
            f"{uv / plain:.2f}x the same bare call on asyncio's loop ({plain:.2f} ms), {ROUNDS}"
            f" segments of {FLOOR_SEGMENT} each taking turns ({min(each):.2f}-{max(each):.2f}x);"
            " the daemon runs on uvloop where installed, the floor above on asyncio's",
        )
    ]


async def _bus_turns(
    urls: dict[str, Any],
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The scenarios through the bus-level channel, in this order: the short session
    taking turns with its floor, one chat's unloaded latency (a worker of its own), then
    the long session taking turns with its floor."""
    chats = "bench_turns:daemon_chats"
    short = await take_turns(urls, chats, "short", MESSAGES // CHATS, chats=CHATS, stored=0)
    single = await run_worker(
        "bench_turns:ours",
        chats=1,
        per_chat=SINGLE,
        stored=0,
        label="single",
        loop=DAEMON_LOOP,
        **urls,
    )
    long = await take_turns(
        urls, chats, "long", LONG_MESSAGES // CHATS, chats=CHATS, stored=LONG_SESSION
    )
    return short, single, long


async def _telegram_turns(urls: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The short and the long session through the fake Bot API (own process): private
    chats preview at the default ``streaming = true``, so their floor streams too."""
    async with FakeTelegramProcess() as tg:
        via_telegram = partial(
            take_turns,
            urls,
            "platform_turns:platform",
            control_url=tg.control_url,
            channel="telegram",
            section=tg.section(),
            chat_ids=tg.chat_ids(CHATS),
            warmup=WARMUP,
            stream=True,  # private chats preview at the default `streaming = true`
        )
        tg_short = await via_telegram("telegram-short", MESSAGES // CHATS, stored=0)
        tg_long = await via_telegram("telegram-long", LONG_MESSAGES // CHATS, stored=LONG_SESSION)
    return tg_short, tg_long


def _floor_rows(segments: list[dict[str, Any]]) -> tuple[list[Row], float]:
    """The bare floor's rows, pooled over its ``segments`` (those that took turns with
    the bus-level scenarios), and its CPU per call in ms, which the streamed floor's row
    is compared with."""
    bare = _pooled(segments, FLOOR_KEYS)
    floor_ms = _per_call(bare) * 1000
    each = [_per_call(f) * 1000 for f in segments]
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
            f"{len(segments)} segments of {FLOOR_SEGMENT} calls taking turns with the"
            f" scenarios below: {min(each):.2f}-{max(each):.2f} ms; fake server:"
            f" {bare['fake_cpu_s'] / bare['requests'] * 1000:.2f} ms per request (own process)",
        ),
    ]
    return rows, floor_ms


def _single_rows(single: dict[str, Any]) -> list[Row]:
    """One chat, one message at a time: a turn's latency without the queueing for the
    CPU that the many-chat latencies include."""
    return [
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


def _telegram_rows(r: dict[str, Any]) -> list[Row]:
    """A Telegram session's turn rows and the Bot API calls each message cost, as the
    fake counted them."""
    scenario = "turns via Telegram (fake Bot API, own process): " + (
        "short session" if not r["seeded"] else f"session of {r['seeded']:,} messages"
    )
    per_message = sorted(r["bot_api_calls"].items())
    calls = ", ".join(f"{k} {v / r['messages']:.2f}" for k, v in per_message)
    return [
        *turn_rows(scenario, r),
        Row(scenario, "Bot API calls per message", calls, "long polls included"),
    ]


def _growth_row(short: dict[str, Any], long: dict[str, Any]) -> Row:
    """What a long stored session adds to a turn's CPU over an empty one."""
    growth = (long["cpu_s"] / long["messages"]) / (short["cpu_s"] / short["messages"])
    return Row(
        "turns: long vs short session",
        "CPU per message ratio",
        f"{growth:.2f}x",
        f"sessions start at {long['seeded']:,} stored messages vs empty",
    )


async def run() -> list[Row]:
    async with FakeLLMProcess(delay=0.0) as fake:
        urls: dict[str, Any] = {"url": fake.url, "stats_url": fake.stats_url}
        short, single, long = await _bus_turns(urls)
        loops = await _loop_floors(urls) if loop_factory("auto") is not None else None
        tg_short, tg_long = await _telegram_turns(urls)
    rows, floor_ms = _floor_rows([f for r in (short, long) for f in r["floor_segments"]])
    rows += _loop_rows(loops) if loops is not None else []
    streamed = [f for r in (tg_short, tg_long) for f in r["floor_segments"]]
    rows.append(streamed_floor_row(streamed, floor_ms))
    rows += turn_rows("turns: short session", short)
    rows += _single_rows(single)
    rows += turn_rows(f"turns: session of {long['seeded']:,} messages", long)
    for r in (tg_short, tg_long):
        rows += _telegram_rows(r)
    rows.append(_growth_row(short, long))
    return rows
