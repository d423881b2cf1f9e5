"""What the user pays for: prompt tokens per answered message and the share of each
request a provider's prompt cache can reuse, ours against nanobot-ai 0.3.5, over the
same scripted 40-turn conversation with tools (bench/conversation.py).

Each bot holds the conversation in one chat against its own fake model server
(``FakeLLMProcess(script="conversation")``), which keeps every request body. Ours is the
whole daemon behind the bench's bus-level channel (bench/harness.py); nanobot is driven
by bench/nanobot_driver.py as ``nanobot gateway`` builds its agent (with the cron service,
so its reminder tool is offered as ours is). Then both request logs are counted the same
way (:func:`account`, in a worker of its own):

- prompt tokens: ``litellm.token_counter(model="gpt-4o", messages=..., tools=...)`` of
  every request the bot made (tool steps and memory folds included), summed and divided
  by the answered messages;
- prefix share: of each request of the chat, the bytes that repeat the previous request
  of the chat byte for byte from the start, over its own bytes (tools, then messages,
  serialized alike: bench/conversation.py ``serialized``). That prefix is what provider
  prompt caching bills cheaply; it falls right after a fold (the summary in the system
  prompt changes, the history sent shrinks). A request without tools (a fold) is counted
  in the tokens, not in the chain.
"""

from __future__ import annotations

import itertools
import statistics
import tempfile
from pathlib import Path
from typing import Any

from bench import conversation
from bench.bench_nanobot import ensure_nanobot, nanobot
from bench.common import Row, Target
from bench.harness import BenchChannel, settings
from bench.procs import DAEMON_LOOP, FakeLLMProcess, run_worker

TOKENS_RATIO_LIMIT = 0.5  # ours over nanobot's prompt tokens per answered message
PREFIX_SHARE_LIMIT = 95.0  # percent of each request that repeats the previous one
COUNTER_MODEL = "gpt-4o"  # whose tokenizer litellm's counter uses, for both bots


def script() -> list[tuple[str, str]]:
    """The conversation: (user text, expected answer) per turn."""
    return [(text, conversation.answer_to(text)) for text in conversation.user_texts()]


async def ours(url: str) -> dict[str, Any]:
    """The daemon holding the conversation in one chat; every answer checked."""
    from bot.app import build_daemon

    with tempfile.TemporaryDirectory() as tmp:
        channel = BenchChannel()
        daemon = build_daemon(settings(Path(tmp), url), [channel])
        await daemon.start()
        try:
            for text, expected in script():
                reply, _ = await channel.ask("c0", text)
                if reply.text != expected:
                    raise RuntimeError(f"unexpected answer: {reply.text[:200]!r}")
        finally:
            await daemon.stop()
    return {"messages": len(script())}


def prefix_shares(bodies: list[dict[str, Any]]) -> list[float]:
    """Per request of the chain after the first (requests with tools, in order): the
    share of its serialized bytes that repeat the previous one's from the start, in %."""
    chain = [conversation.serialized(b) for b in bodies if b.get("tools")]
    return [
        100.0 * conversation.common_prefix(prev, this) / max(1, len(this))
        for prev, this in itertools.pairwise(chain)
    ]


def prompt_tokens(litellm: Any, body: dict[str, Any]) -> int:
    count: int = litellm.token_counter(
        model=COUNTER_MODEL, messages=body.get("messages") or [], tools=body.get("tools") or None
    )
    return count


async def account(requests_url: str) -> dict[str, Any]:
    """Every request a fake model server kept, counted (a worker: litellm's import and
    its tokenizer stay out of the bench's own process)."""
    import aiohttp

    from bot.agent.llm.client import litellm_module

    litellm = await litellm_module()
    async with aiohttp.ClientSession() as http, http.get(requests_url) as resp:
        bodies: list[dict[str, Any]] = await resp.json()
    shares = prefix_shares(bodies)
    lowest = min(range(len(shares)), key=shares.__getitem__) if shares else -1
    return {
        "requests": len(bodies),
        "folds": sum(1 for b in bodies if not b.get("tools")),
        "tokens": sum(prompt_tokens(litellm, b) for b in bodies),
        "prefix_mean": statistics.fmean(shares) if shares else 0.0,
        "prefix_min": shares[lowest] if shares else 0.0,
        "prefix_min_at": lowest + 2,  # the chain's request number (1-based)
        "prefix_under": sum(1 for s in shares if s < PREFIX_SHARE_LIMIT),
    }


async def _measure(python: Path | None) -> tuple[dict[str, Any], dict[str, Any] | None]:
    async with FakeLLMProcess(script="conversation") as fake:
        await run_worker("bench_tokens:ours", loop=DAEMON_LOOP, url=fake.url)
        ours_counted = await run_worker("bench_tokens:account", requests_url=fake.requests_url)
    if python is None:
        return ours_counted, None
    async with FakeLLMProcess(script="conversation") as fake:
        await nanobot(python, mode="conversation", url=fake.url, script=script(), cron=True)
        theirs = await run_worker("bench_tokens:account", requests_url=fake.requests_url)
    return ours_counted, theirs


def _per_message(r: dict[str, Any]) -> float:
    return float(r["tokens"]) / conversation.TURNS


def _prefix_note(r: dict[str, Any]) -> str:
    return (
        f"min {r['prefix_min']:.1f}% (request {r['prefix_min_at']} of the chat);"
        f" {r['prefix_under']} under {PREFIX_SHARE_LIMIT:.0f}%;"
        f" {r['requests']} requests, {r['folds']} of them folds"
    )


def rows(ours_r: dict[str, Any], theirs: dict[str, Any] | None, how: str) -> list[Row]:
    """The table's rows from both bots' :func:`account` (``theirs`` None: nanobot could
    not be installed, ``how`` says why), each promised figure with its Target."""
    scenario = (
        f"tokens: scripted {conversation.TURNS}-turn chat, a tool every {conversation.TOOL_EVERY}th"
    )
    out = [
        Row(
            scenario,
            "ours: prompt tokens per answered message",
            f"{_per_message(ours_r):,.0f}",
            f"litellm.token_counter({COUNTER_MODEL!r}) of every request",
        ),
        Row(
            scenario,
            "ours: request bytes repeating the previous request, mean",
            f"{ours_r['prefix_mean']:.1f}%",
            _prefix_note(ours_r),
            Target(ours_r["prefix_mean"], PREFIX_SHARE_LIMIT, "%", at_least=True),
        ),
    ]
    if theirs is None:
        return [*out, Row(scenario, "nanobot-ai 0.3.5", "not run", how[:300])]
    ratio = _per_message(ours_r) / _per_message(theirs)
    return [
        *out,
        Row(
            scenario,
            "nanobot 0.3.5: prompt tokens per answered message",
            f"{_per_message(theirs):,.0f}",
            f"prefix mean {theirs['prefix_mean']:.1f}%, {_prefix_note(theirs)}",
        ),
        Row(
            scenario,
            "ours vs nanobot: prompt tokens per answered message",
            f"{ratio:.3f}x",
            f"{_per_message(ours_r):,.0f} vs {_per_message(theirs):,.0f}",
            Target(ratio, TOKENS_RATIO_LIMIT, "x"),
        ),
    ]


async def run() -> list[Row]:
    python, how = await ensure_nanobot()
    ours_r, theirs = await _measure(python)
    return rows(ours_r, theirs, how)
