"""The daemon under test, in-process: a recording channel, settings against a fake model
server, a bare-litellm floor, and an optional cProfile of the measured phase.

Used by worker functions (see bench/procs.py), so each runs in a fresh interpreter.
"""

from __future__ import annotations

import asyncio
import contextlib
import cProfile
import json
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from bench.common import cpu_s
from bot.config import Settings
from bot.messages import ChatKey, InboundMessage, OutboundMessage
from channels.base import PutInbound, Sent

API_KEY = "sk-bench-not-a-secret"
MODEL = "openai/fake-model"


class BenchChannel:
    """Records each reply with its arrival time; ``ask`` waits for the reply to one message."""

    name = "bench"
    trusted = True

    def __init__(self) -> None:
        self.put_inbound: PutInbound | None = None
        self.sent: list[tuple[float, OutboundMessage]] = []
        self._waiters: dict[str, asyncio.Future[OutboundMessage]] = {}

    @property
    def connected(self) -> bool:
        return self.put_inbound is not None

    async def start(self, put_inbound: PutInbound) -> None:
        self.put_inbound = put_inbound

    async def stop(self) -> None:
        self.put_inbound = None

    async def send(self, msg: OutboundMessage) -> Sent:
        self.sent.append((time.perf_counter(), msg))
        waiter = self._waiters.pop(msg.reply_to or "", None)
        if waiter is not None and not waiter.done():
            waiter.set_result(msg)
        return Sent()

    def message(self, chat: str, text: str) -> InboundMessage:
        """A message in one person's private chat with the bot (each chat has its own
        user): ``direct``, as a platform adapter marks a DM."""
        key = ChatKey(self.name, chat)
        return InboundMessage(key=key, user_id=f"u-{chat}", text=text, direct=True)

    def expect(self, msg: InboundMessage) -> asyncio.Future[OutboundMessage]:
        waiter: asyncio.Future[OutboundMessage] = asyncio.get_running_loop().create_future()
        self._waiters[msg.message_id] = waiter
        return waiter

    async def put(self, msg: InboundMessage) -> None:
        assert self.put_inbound is not None, "channel not started"
        await self.put_inbound(msg)

    async def ask(
        self, chat: str, text: str, timeout: float = 120
    ) -> tuple[OutboundMessage, float]:
        """Send one message and wait for its reply; (reply, latency in seconds)."""
        msg = self.message(chat, text)
        waiter = self.expect(msg)
        started = time.perf_counter()
        await self.put(msg)
        reply = await asyncio.wait_for(waiter, timeout)
        return reply, time.perf_counter() - started


def settings(
    data_dir: Path,
    llm_url: str,
    *,
    max_concurrent_chats: int | None = None,
    max_concurrent_calls: int | None = None,
    channels: dict[str, Any] | None = None,
    store_url: str = "",
    cluster: dict[str, Any] | None = None,
) -> Settings:
    """The daemon's settings against the fake model; defaults unless a cap is given
    (``store_url``: ``[store] url``, "" for SQLite in ``data_dir``)."""
    agent = {} if max_concurrent_chats is None else {"max_concurrent_chats": max_concurrent_chats}
    calls = {} if max_concurrent_calls is None else {"max_concurrent_calls": max_concurrent_calls}
    # The sections as a TOML file would give them (raw values, validated by Settings).
    sections: dict[str, Any] = {
        "llm": {
            "model": MODEL,
            "api_base": llm_url,
            "api_key": API_KEY,
            "timeout_s": 120,
            "max_retries": 0,
            **calls,
        },
        "agent": agent,
        # Each bench chat is one user sending its messages back to back: the per-user
        # flood limit would answer most of them with "slow down" instead of a turn.
        "limits": {"user_refill_s": 0},
        "channels": channels or {},
        "store": {"url": store_url},
        "cluster": cluster or {},
        "web": {"port": 0},  # any free port: /healthz and /metrics stay on, as deployed
    }
    return Settings(data_dir=data_dir, log_level="WARNING", **sections)


def tool_definitions() -> list[dict[str, Any]]:
    """The tools the daemon offers the model (the floor sends the same list)."""
    from tools.loader import build_registry

    return build_registry().definitions()


def answered_turn(call_id: str, question: str, answer: str) -> list[dict[str, Any]]:
    """One stored turn as the daemon keeps it: the user's text, the final_result call
    with the answer, and that call's result."""
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": "final_result", "arguments": json.dumps({"answer": answer})},
    }
    return [
        {"role": "user", "content": question},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "name": "final_result", "content": "ok"},
    ]


def turn_history(messages: int) -> list[dict[str, Any]]:
    """About ``messages`` stored messages shaped like the bench's turns (the user's text
    with its runtime block, the final_result call, its result), oldest first, as the
    daemon sends them (a tool result without its tool's name)."""
    out: list[dict[str, Any]] = []
    for t in range(max(0, messages) // 3):
        question = f"message {t} in chat 7\n\n[Runtime Context]\nChat: 7"
        out += answered_turn(f"call_history_{t}", question, f"echo: message {t} in chat 7")
    return [{k: v for k, v in m.items() if k != "name"} for m in out]


async def bare_litellm() -> Any:
    """litellm for the floor: as shipped (none of the daemon's economies), for a model in
    its cost map. The bench's model name is not in the map, and after every call litellm
    prices the answer; for an unmapped model that lookup walks every provider's variants
    (twice for a stream). The daemon registers such a model once (bot.agent.llm.cost_map),
    which only saves anything for self-hosted or brand-new models; most users run a model
    the map knows, whose bare call never pays the walk. So the floor registers it too: the
    floor is the bare call of the common case, not one slowed by a walk the daemon skips."""
    from bot.agent.llm.client import litellm_module
    from bot.agent.llm.cost_map import is_mapped, map_unknown_model

    litellm = await litellm_module()
    map_unknown_model(litellm, MODEL)
    assert is_mapped(litellm, MODEL), "the floor's model must be in litellm's cost map"
    return litellm


async def bare_call(
    litellm: Any,
    url: str,
    tools: list[dict[str, Any]],
    text: str,
    history: Sequence[dict[str, Any]] = (),
    *,
    stream: bool = False,
) -> Any:
    """One ``litellm.acompletion`` with the daemon's arguments and a minimal prompt
    (after ``history``, when given); ``stream``: streamed, as the daemon streams a turn
    that previews (``stream=True`` and nothing more), read to its end."""
    resp = await litellm.acompletion(
        model=MODEL,
        messages=[
            {"role": "system", "content": "You are a helpful assistant."},
            *history,
            {"role": "user", "content": text},
        ],
        tools=tools,
        api_base=url,
        api_key=API_KEY,
        timeout=120,
        num_retries=0,
        **({"stream": True} if stream else {}),
    )
    if stream:
        return [chunk async for chunk in resp]
    return resp


def called_tools(resp: Any) -> bool:
    """Whether a :func:`bare_call`'s answer (a response, or a stream's chunks) calls a tool."""
    if isinstance(resp, list):
        return any(c.choices and c.choices[0].delta.tool_calls for c in resp)
    return bool(resp.choices[0].message.tool_calls)


async def bare_loop(
    litellm: Any,
    url: str,
    tools: list[dict[str, Any]],
    calls: int,
    inflight: int,
    *,
    history: Sequence[dict[str, Any]] = (),
    stream: bool = False,
) -> float:
    """``calls`` bare calls with at most ``inflight`` at once; wall seconds."""
    queue = iter(range(calls))

    async def lane() -> None:
        for i in queue:
            resp = await bare_call(litellm, url, tools, f"message {i}", history, stream=stream)
            assert called_tools(resp), "the fake did not call final_result"

    started = time.perf_counter()
    await asyncio.gather(*(lane() for _ in range(min(inflight, calls))))
    return time.perf_counter() - started


async def seed_sessions(daemon: Any, keys: Sequence[ChatKey], stored: int) -> int:
    """``stored`` messages per chat shaped like real turns (user, final_result call, its
    result), with an archived summary covering all but the last six turns (the state a
    long chat settles in). Returns the messages stored per chat."""
    turns = stored // 3
    for c, key in enumerate(keys):
        messages: list[dict[str, Any]] = []
        for t in range(turns):
            answer = f"Answer {t}: " + "here is what I found about that. " * 5
            question = f"question {t}: " + "what about this and that? " * 4
            messages += answered_turn(f"call_seed_{c}_{t}", question, answer)
        await daemon.sessions.append(key, messages)
        rows = await daemon.sessions.history_rows(key, 6 * 3 + 1)
        await daemon.sessions.save_summary(
            key, "The user asks many questions about this and that. " * 8, rows[0][0] - 1
        )
    return turns * 3


_PROFILES: dict[str, cProfile.Profile] = {}


@contextlib.contextmanager
def profiled(name: str) -> Iterator[None]:
    """cProfile the block when ``BENCH_PROFILE=<dir>`` is set (event-loop thread only);
    blocks of one name (a worker's segments) add up in one ``<name>.pstats``."""
    target = os.environ.get("BENCH_PROFILE")
    if not target:
        yield
        return
    profiler = _PROFILES.setdefault(name, cProfile.Profile())
    profiler.enable()
    try:
        yield
    finally:
        profiler.disable()
        os.makedirs(target, exist_ok=True)
        profiler.dump_stats(os.path.join(target, f"{name}.pstats"))


class CpuMeter:
    """CPU seconds of this process (all threads) over a block."""

    def __init__(self) -> None:
        self.start = 0.0
        self.used = 0.0

    def __enter__(self) -> CpuMeter:
        self.start = cpu_s()
        return self

    def __exit__(self, *exc: object) -> None:
        self.used = cpu_s() - self.start
