"""One replica of the bot on a shared PostgreSQL store, as a measured worker
(``python -m bench.worker --segments bench.replica:replica``): the daemon with a
recording channel (:class:`bench.harness.BenchChannel`), which any replica may receive
on, as webhooks and Slack's Socket Mode are. A message put here is journaled in the
shared inbox and answered by the replica running its chat (this one or another), whose
channel records the reply. Reply times are ``time.perf_counter()``, CLOCK_MONOTONIC on
Linux: one clock for every process on the machine, so the parent compares them with its
own (a kill, a burst's start).

Each segment is one operation, named by ``op``: ``held`` (the chat partitions held),
``warm`` (a few turns in chats this replica runs), ``put`` (journal messages for these
chats, at once), ``replies`` (what this replica's channel sent since the last call),
``ask`` (one message, waiting for its answer from this replica: after a take-over).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from bench.harness import BenchChannel, CpuMeter, settings
from bot.cluster.partitions import partition_in, partition_of
from bot.messages import ChatKey

CHANNEL = "bench"
PARTITIONS = 64  # [cluster] partitions at its default


def chats_in(partitions: set[int], prefix: str, count: int) -> list[str]:
    """``count`` chat ids in these partitions (``partitions`` of :data:`PARTITIONS`)."""
    found = (
        f"{prefix}{n}"
        for n in itertools.count()
        if partition_of(ChatKey(CHANNEL, f"{prefix}{n}"), PARTITIONS) in partitions
    )
    return list(itertools.islice(found, count))


@contextlib.asynccontextmanager
async def replica(
    url: str, stats_url: str, store_url: str, cluster: dict[str, Any] | None = None
) -> AsyncIterator[Callable[..., Awaitable[dict[str, Any]]]]:
    from bot.agent.llm.client import litellm_module
    from bot.app import build_daemon

    with tempfile.TemporaryDirectory() as tmp:
        channel = BenchChannel()
        daemon = build_daemon(
            settings(Path(tmp), url, store_url=store_url, cluster=cluster), [channel]
        )
        await daemon.start()
        await litellm_module()
        seen = 0  # replies reported so far

        def held() -> set[int]:
            parts = (partition_in(name) for name in daemon.cluster.held())
            return {p for p in parts if p is not None}

        async def segment(op: str, **kw: Any) -> dict[str, Any]:
            nonlocal seen
            if op == "held":
                return {"partitions": sorted(held()), "live": getattr(daemon.cluster, "live", 1)}
            if op == "warm":
                chats = chats_in(held(), f"warm-{kw['label']}-", 4)
                await asyncio.gather(*(channel.ask(c, "warm-up") for c in chats))
                gc.collect()
                return {"chats": chats}
            if op == "put":
                with CpuMeter() as cpu:
                    msgs = [channel.message(c, f"hello from chat {c}") for c in kw["chats"]]
                    await asyncio.gather(*(channel.put(m) for m in msgs))
                return {"put_s": time.perf_counter(), "cpu_s": cpu.used}
            if op == "replies":
                sent = channel.sent[seen:]
                seen += len(sent)
                return {"replies": [(m.key.chat_id, t, m.text) for t, m in sent]}
            if op == "ask":
                reply, _ = await channel.ask(kw["chat"], kw["text"], timeout=kw["timeout"])
                return {"at": time.perf_counter(), "text": reply.text}
            raise ValueError(f"unknown op {op!r}")

        try:
            yield segment
        finally:
            await daemon.stop(timeout=2)
