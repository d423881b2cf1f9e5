"""The daemon under test, in-process: a recording channel, settings against a fake model
server, a bare-litellm floor, and an optional cProfile of the measured phase.

Used by worker functions (see bench/procs.py), so each runs in a fresh interpreter.
"""

from __future__ import annotations

import asyncio
import contextlib
import cProfile
import os
import time
from collections.abc import Iterator
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
        return InboundMessage(key=ChatKey(self.name, chat), user_id=f"u-{chat}", text=text)

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


def settings(data_dir: Path, llm_url: str, *, max_concurrent_chats: int = 64) -> Settings:
    return Settings(
        data_dir=data_dir,
        log_level="WARNING",
        llm={
            "model": MODEL,
            "api_base": llm_url,
            "api_key": API_KEY,
            "timeout_s": 120,
            "max_retries": 0,
        },
        agent={"max_concurrent_chats": max_concurrent_chats},
        web={"port": 0},  # any free port: /healthz and /metrics stay on, as deployed
    )


def tool_definitions() -> list[dict[str, Any]]:
    """The tools the daemon offers the model (the floor sends the same list)."""
    from tools.loader import build_registry

    return build_registry().definitions()


async def bare_call(litellm: Any, url: str, tools: list[dict[str, Any]], text: str) -> Any:
    """One ``litellm.acompletion`` with the daemon's arguments and a minimal prompt."""
    return await litellm.acompletion(
        model=MODEL,
        messages=[
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": text},
        ],
        tools=tools,
        api_base=url,
        api_key=API_KEY,
        timeout=120,
        num_retries=0,
    )


async def bare_loop(
    litellm: Any, url: str, tools: list[dict[str, Any]], calls: int, inflight: int
) -> float:
    """``calls`` bare calls with at most ``inflight`` at once; wall seconds."""
    queue = iter(range(calls))

    async def lane() -> None:
        for i in queue:
            resp = await bare_call(litellm, url, tools, f"message {i}")
            assert resp.choices[0].message.tool_calls, "the fake did not call final_result"

    started = time.perf_counter()
    await asyncio.gather(*(lane() for _ in range(min(inflight, calls))))
    return time.perf_counter() - started


@contextlib.contextmanager
def profiled(name: str) -> Iterator[None]:
    """cProfile the block when ``BENCH_PROFILE=<dir>`` is set (event-loop thread only)."""
    target = os.environ.get("BENCH_PROFILE")
    if not target:
        yield
        return
    profiler = cProfile.Profile()
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
