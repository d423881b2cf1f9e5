"""Drives nanobot-ai 0.3.5 the way its channels do; run by nanobot's OWN interpreter.

``<nanobot venv>/bin/python bench/nanobot_driver.py '<json>'`` (standard library and
nanobot only: this file never imports the bot or bench packages). It builds what
``nanobot gateway`` builds for a turn: ``load_config`` of a config.json (custom
OpenAI-compatible provider = the fake server; everything else default), a
``MessageBus`` and ``AgentLoop.from_config(config, bus, tool_registry=ToolRegistry())``
running ``agent.run()``. Each message goes in as a channel would put it,
``bus.publish_inbound(InboundMessage(channel="telegram", ...))``, and the answer is the
``OutboundMessage`` for that chat on ``bus.consume_outbound()``, which is where a
channel's ``send`` takes it. Logging is nanobot's gateway default (loguru, INFO, stderr).

Modes: ``turns`` (closed-loop chats, like bench_turns), ``burst`` (each chat sends
one message at once; the fake model takes ``delay`` seconds) and ``conversation`` (one
chat sends ``script``'s texts in turn and checks each answer: bench_tokens.py; with
``cron`` the agent gets the cron service ``nanobot gateway`` gives it, hence its cron
tool). Prints one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

SPAWNED = time.perf_counter()  # close to interpreter start: imports come next


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _rss_mb(key: str = "VmRSS") -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def _stats(url: str) -> dict[str, float]:
    with urllib.request.urlopen(url, timeout=30) as resp:
        data: dict[str, float] = json.loads(resp.read())
        return data


def _percentile(values: list[float], pct: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1))))]


def _raise_http_pool(size: int) -> None:
    """nanobot gives a loopback provider ``httpx.Limits(keepalive_expiry=0)``, i.e. httpx's
    default of 100 connections, with no setting to change it; widen that default."""
    import httpx

    original = httpx.Limits.__init__

    def limits(self: Any, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("max_connections", size)
        original(self, *args, **kwargs)

    httpx.Limits.__init__ = limits  # type: ignore[method-assign]


def _prepare(args: dict[str, Any]) -> Path:
    """A fresh HOME with a config.json naming the fake server; gateway-style logging."""
    home = Path(tempfile.mkdtemp(prefix="nanobot-bench-"))
    os.environ["HOME"] = str(home)  # ~/.nanobot (sessions, memory, cron) stays in here
    if args.get("raise_pool"):
        _raise_http_pool(int(args["raise_pool"]))
    config_path = home / ".nanobot" / "config.json"
    config_path.parent.mkdir(parents=True)
    config_path.write_text(
        json.dumps(
            {
                "agents": {
                    "defaults": {
                        "workspace": str(home / "workspace"),
                        "model": "fake-model",
                        "provider": "custom",
                    }
                },
                "providers": {"custom": {"apiKey": "sk-bench", "apiBase": args["url"]}},
            }
        )
    )
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="INFO")
    return config_path


class _Nanobot:
    """nanobot's gateway core on a bus, and ``ask``: one message in, its answer out."""

    def __init__(self, args: dict[str, Any]) -> None:
        config_path = _prepare(args)
        from nanobot.agent.loop import AgentLoop
        from nanobot.agent.tools.registry import ToolRegistry
        from nanobot.bus.queue import MessageBus
        from nanobot.config.loader import load_config

        config = load_config(config_path)
        extra: dict[str, Any] = {}
        if args.get("cron"):  # as ``nanobot gateway`` builds it: the cron tool offered
            from nanobot.cron.service import CronService

            extra["cron_service"] = CronService(config.workspace_path / "cron" / "jobs.json")
        self.bus = MessageBus()
        self.agent = AgentLoop.from_config(config, self.bus, tool_registry=ToolRegistry(), **extra)
        self.waiters: dict[str, asyncio.Future[Any]] = {}
        self.tasks = [asyncio.create_task(self.agent.run()), asyncio.create_task(self._route())]

    async def _route(self) -> None:
        while True:
            out = await self.bus.consume_outbound()
            if out.event is not None or not out.content:
                continue  # progress / lifecycle events, not the answer
            waiter = self.waiters.pop(out.chat_id, None)
            if waiter is not None and not waiter.done():
                waiter.set_result(out)

    async def ask(self, chat: str, text: str, expected: str | None = None) -> float:
        from nanobot.bus.events import InboundMessage

        waiter = asyncio.get_running_loop().create_future()
        self.waiters[chat] = waiter
        started = time.perf_counter()
        await self.bus.publish_inbound(
            InboundMessage(channel="telegram", sender_id=f"u-{chat}", chat_id=chat, content=text)
        )
        out = await asyncio.wait_for(waiter, 300)
        if out.content != (expected if expected is not None else f"echo: {text}"):
            raise RuntimeError(f"unexpected answer in {chat}: {out.content[:200]!r}")
        return time.perf_counter() - started

    def stop(self) -> None:
        self.agent.stop()
        for task in self.tasks:
            task.cancel()


async def _conversation(bot: _Nanobot, args: dict[str, Any]) -> dict[str, Any]:
    """One chat holding the scripted conversation: each text, then its expected answer."""
    for text, expected in args["script"]:
        await bot.ask("c0", text, expected)
    return {"messages": len(args["script"])}


async def _main(args: dict[str, Any]) -> dict[str, Any]:
    bot = _Nanobot(args)
    ready_s = time.perf_counter() - SPAWNED
    ready_rss = _rss_mb()
    if args["mode"] == "conversation":
        result = await _conversation(bot, args)
        bot.stop()
        return result
    chats = int(args["chats"])
    # warm-up: one turn per chat (first-call imports, session files, the HTTP client)
    await asyncio.gather(*(bot.ask(f"c{c}", "warm-up") for c in range(chats)))
    warm_rss = _rss_mb()
    latencies: list[float] = []
    before = await asyncio.to_thread(_stats, args["stats_url"])
    cpu = _cpu()
    started = time.perf_counter()
    if args["mode"] == "turns":

        async def chat(c: int) -> None:
            for i in range(int(args["per_chat"])):
                latencies.append(await bot.ask(f"c{c}", f"message {i} in chat {c}"))

        await asyncio.gather(*(chat(c) for c in range(chats)))
        messages = chats * int(args["per_chat"])
    else:
        latencies = list(
            await asyncio.gather(*(bot.ask(f"c{c}", f"burst in chat {c}") for c in range(chats)))
        )
        messages = chats
    wall = time.perf_counter() - started
    cpu = _cpu() - cpu
    after = await asyncio.to_thread(_stats, args["stats_url"])
    bot.stop()
    return {
        "messages": messages,
        "wall_s": wall,
        "cpu_s": cpu,
        "p50_ms": _percentile(latencies, 50) * 1000,
        "p99_ms": _percentile(latencies, 99) * 1000,
        "requests": after["requests"] - before["requests"],
        "fake_cpu_s": after["cpu_s"] - before["cpu_s"],
        "ready_s": ready_s,
        "ready_rss_mb": ready_rss,
        "warm_rss_mb": warm_rss,
        "peak_rss_mb": _rss_mb("VmHWM"),
    }


def main() -> None:
    result = asyncio.run(_main(json.loads(sys.argv[1])))
    print(json.dumps(result), flush=True)
    os._exit(0)  # skip nanobot's shutdown of background work; results are out


if __name__ == "__main__":
    main()
