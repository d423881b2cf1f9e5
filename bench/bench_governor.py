"""The context governor on a 5,000-message session with large tool results.

Measures one ``prepare_for_model`` call (repair + budget + snip) with litellm's real
tokenizer: cold (nothing counted yet), warm (the same messages again, as on the later
steps of a turn) and fresh (the history reloaded from the store: new string objects,
as on the next turn), plus the tracemalloc peak of one call.
"""

from __future__ import annotations

import json
import time
import tracemalloc
from typing import Any

from bench.common import Row, median, percentile
from bot.agent.governor.pipeline import ContextGovernor
from bot.config import ContextSettings

TURNS = 1_000  # x 5 messages = 5,000 messages
WARM_RUNS = 50
FRESH_RUNS = 5


def _session(seed: int = 0) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "You are Pip. " * 40}]
    for t in range(TURNS):
        a, b = f"call_{seed}_{t}_a", f"call_{seed}_{t}_b"
        msgs += [
            {"role": "user", "content": f"question {t}: " + "what about the weather? " * 8},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": a,
                        "type": "function",
                        "function": {"name": "read_file", "arguments": '{"path": "a.log"}'},
                    },
                    {
                        "id": b,
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'},
                    },
                ],
            },
            {
                "role": "tool",
                "tool_call_id": a,
                "content": f"log {t} " + "line of a big log file\n" * 1_500,
            },
            {"role": "tool", "tool_call_id": b, "content": "Oslo: 12°C, light rain. " * 80},
            {"role": "assistant", "content": f"Answer {t}: bring an umbrella."},
        ]
    msgs.append({"role": "user", "content": "and tomorrow?"})
    return msgs


async def _measure(model: str, label: str) -> list[Row]:
    gov = ContextGovernor(ContextSettings(), model)
    await gov.ready()
    assert gov.budget is not None
    session = _session()
    chars = sum(len(json.dumps(m)) for m in session)

    started = time.perf_counter()
    governed = gov.prepare_for_model(session)
    cold = time.perf_counter() - started

    warm: list[float] = []
    for _ in range(WARM_RUNS):
        started = time.perf_counter()
        gov.prepare_for_model(session)
        warm.append(time.perf_counter() - started)

    reloaded = [json.loads(json.dumps(session)) for _ in range(FRESH_RUNS)]
    fresh: list[float] = []
    for copy in reloaded:
        started = time.perf_counter()
        gov.prepare_for_model(copy)
        fresh.append(time.perf_counter() - started)

    tracemalloc.start()
    gov.prepare_for_model(json.loads(json.dumps(session)))
    tracemalloc.reset_peak()
    before, _ = tracemalloc.get_traced_memory()
    gov.prepare_for_model(session)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    scenario = f"governor {label}: {len(session)} msgs, {chars / 1e6:.1f} MB"
    note = f"window {gov.budget.window} ({gov.budget.source}), sent {len(governed.messages)} msgs"
    return [
        Row(scenario, "cold call", f"{cold * 1000:.1f} ms", "first count of the tail"),
        Row(scenario, "warm median", f"{median(warm) * 1000:.2f} ms", f"{WARM_RUNS} calls"),
        Row(scenario, "warm p99", f"{percentile(warm, 99) * 1000:.2f} ms", note),
        Row(scenario, "reloaded median", f"{median(fresh) * 1000:.1f} ms", "new str objects"),
        Row(scenario, "reloaded p99", f"{percentile(fresh, 99) * 1000:.1f} ms", ""),
        Row(scenario, "tracemalloc peak", f"{(peak - before) / 1e6:.2f} MB", "one warm call"),
        Row(scenario, "tokens sent", f"{governed.tokens}", f"limit {governed.limit}"),
    ]


async def run() -> list[Row]:
    rows = await _measure("openai/gpt-4o-mini", "gpt-4o-mini")
    rows += await _measure("openai/self-hosted", "unknown model")
    return rows
