"""Many chats on one machine: 10,000 chats of 20 stored messages each, then 2,000 of them
active in one burst, answered by ``bot run`` (a real process) through its Telegram
channel on the fake Bot API, the model on the fake LLM server (each in its own process).

The store is seeded first through the storage Protocols (``Sessions.append``), before
the daemon starts, so the daemon knows none of the chats: each turn of the burst loads
its chat's history from the database into the session store's tail cache, which holds
at most ``MAX_ROWS`` rows and evicts the least recently used sessions (2,000 chats of
22 rows pass that bound). The figure is the daemon's peak RSS (``VmHWM``, its whole
life), with its RSS sampled through the burst (psutil).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import psutil

from bench.common import Row, Target
from bench.procs import FakeLLMProcess, FakeTelegramProcess, child_env, proc_rss_mb
from bot.agent.history import MAX_SESSIONS
from bot.messages import ChatKey
from bot.store.reminders import CACHED_USERS
from bot.store.sessions import CACHED_SESSIONS
from bot.store.tails import MAX_ROWS
from bot.workspaces.routing import CACHED_CHATS

CHATS = 10_000
STORED = 20  # messages per chat: ten exchanges
ACTIVE = 2_000  # chats sending one message each, at once
RSS_LIMIT_MB = 400
DEADLINE_S = 600.0
READY = ": ready: "


def _exchange(chat: int, turn: int) -> list[dict[str, Any]]:
    question = f"question {turn} in chat {chat}: " + "what about this and that? " * 3
    answer = f"Answer {turn}: " + "here is what I found about that. " * 4
    return [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]


async def _seed(data_dir: Path) -> float:
    """CHATS chats of STORED messages, written through the storage Protocols; seconds."""
    from bot.store.sqlite import sqlite_storage

    started = time.perf_counter()
    storage = sqlite_storage(data_dir / "bot.db")
    await storage.backend.open()
    try:
        for first in range(1, CHATS + 1, 500):  # 500 chats' appends share commits
            await asyncio.gather(
                *(
                    storage.sessions.append(
                        ChatKey("telegram", str(c)),
                        [m for t in range(STORED // 2) for m in _exchange(c, t)],
                    )
                    for c in range(first, min(first + 500, CHATS + 1))
                )
            )
    finally:
        await storage.backend.close()
    return time.perf_counter() - started


async def _ready(proc: asyncio.subprocess.Process, lines: list[str]) -> None:
    assert proc.stderr is not None
    while line := (await proc.stderr.readline()).decode(errors="replace"):
        lines.append(line)
        if READY in line:
            return
    raise RuntimeError("bot run exited before ready:\n" + "".join(lines)[-2000:])


async def _drain(proc: asyncio.subprocess.Process, lines: list[str]) -> None:
    assert proc.stderr is not None
    while line := (await proc.stderr.readline()).decode(errors="replace"):
        lines.append(line)
        del lines[:-200]


async def _sample(pid: int, peak: list[float], stop: asyncio.Event) -> None:
    process = psutil.Process(pid)
    while not stop.is_set():
        with contextlib.suppress(psutil.Error):
            peak[0] = max(peak[0], process.memory_info().rss / 2**20)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.05)


async def _burst(tg: FakeTelegramProcess) -> dict[str, Any]:
    """One message in each of chats 1..ACTIVE at once; done when every chat shows its
    answer (a streamed one is posted as a preview first, then edited), or at the deadline."""
    spec = {"chats": ACTIVE, "per_chat": 1, "prefix": "burst"}
    deadline = time.perf_counter() + DEADLINE_S
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{tg.control_url}/run", json=spec) as resp:
            resp.raise_for_status()
        result: dict[str, Any] = {"methods": {}, "answered": 0}
        with contextlib.suppress(TimeoutError):  # unanswered: the target row says so
            wait = aiohttp.ClientTimeout(DEADLINE_S)
            async with http.get(f"{tg.control_url}/wait", timeout=wait) as resp:
                result.update(await resp.json())
        query = {"chats": str(ACTIVE), "prefix": "burst"}
        while time.perf_counter() < deadline:
            async with http.get(f"{tg.control_url}/answered", params=query) as resp:
                result["answered"] = (await resp.json())["answered"]
            if result["answered"] >= ACTIVE:
                break
            await asyncio.sleep(0.2)
        return result


async def _daemon(data_dir: Path, llm_url: str, tg: FakeTelegramProcess) -> dict[str, Any]:
    env = child_env(
        BOT_DATA_DIR=str(data_dir),
        BOT_LLM__MODEL="openai/fake-model",
        BOT_LLM__API_BASE=llm_url,
        BOT_LLM__API_KEY="sk-bench-not-a-secret",
        BOT_LLM__TIMEOUT_S="120",
        BOT_WEB__PORT="0",
        BOT_CHANNELS__TELEGRAM__TOKEN=tg.token,
        BOT_CHANNELS__TELEGRAM__BASE_URL=tg.base_url,
        BOT_CHANNELS__TELEGRAM__ALLOW_FROM='["*"]',
        PYTHONUNBUFFERED="1",
    )
    proc = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "bot", "run"),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        cwd=data_dir.parent,
    )
    lines: list[str] = []
    stop, peak = asyncio.Event(), [0.0]
    try:
        await asyncio.wait_for(_ready(proc, lines), 120)
        reader = asyncio.create_task(_drain(proc, lines))
        ready_rss = proc_rss_mb(proc.pid)
        sampler = asyncio.create_task(_sample(proc.pid, peak, stop))
        started = time.perf_counter()
        run = await _burst(tg)
        wall = time.perf_counter() - started
        await asyncio.sleep(1.0)  # replies sent; what the daemon keeps afterwards
        after_rss = proc_rss_mb(proc.pid)
        hwm = proc_rss_mb(proc.pid, "VmHWM")
        stop.set()
        await sampler
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), 60)
        except TimeoutError:
            proc.kill()
            await proc.wait()
    reader.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await reader
    return {
        "ready_rss": ready_rss,
        "hwm": hwm,
        "sampled": peak[0],
        "after_rss": after_rss,
        "wall_s": wall,
        "answered": run["answered"],
        "methods": run["methods"],
        "log": "".join(lines)[-1500:],
    }


async def run() -> list[Row]:
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "data"
        data_dir.mkdir()
        seeded_s = await _seed(data_dir)
        db_mb = (data_dir / "bot.db").stat().st_size / 2**20
        async with FakeLLMProcess() as llm, FakeTelegramProcess() as tg:
            r = await _daemon(data_dir, llm.url, tg)
    if r["answered"] < ACTIVE:
        print(f"bench_many_chats: daemon log tail:\n{r['log']}", file=sys.stderr)
    scenario = (
        f"{CHATS:,} stored chats x {STORED} messages, {ACTIVE:,} active at once"
        " (bot run, Telegram on the fake Bot API)"
    )
    caches = (
        f"caches: history tails {MAX_ROWS:,} rows, the history as sent {MAX_ROWS:,} rows"
        f" over at most {MAX_SESSIONS:,} chats, session ids and summaries"
        f" {CACHED_SESSIONS:,} chats, workspaces {CACHED_CHATS:,} chats, time zones"
        f" {CACHED_USERS:,} users"
    )
    return [
        Row(
            scenario,
            "peak RSS (VmHWM)",
            f"{r['hwm']:.0f} MB",
            f"sampled peak {r['sampled']:.0f} MB; {r['ready_rss']:.0f} MB at ready,"
            f" {r['after_rss']:.0f} MB after the burst; {caches}; store {db_mb:.0f} MB,"
            f" seeded in {seeded_s:.1f} s through Sessions.append",
            Target(r["hwm"], RSS_LIMIT_MB, " MB"),
        ),
        Row(
            scenario,
            "answered",
            f"{r['answered']:,}",
            f"each chat showing its echo; the burst answered in {r['wall_s']:.1f} s;"
            f" Bot API calls {json.dumps(r['methods'], sort_keys=True)} (streaming at"
            " defaults: a turn slower than the 1 s interval shows a preview first)",
            Target(r["answered"], ACTIVE, " answered", at_least=True),
        ),
    ]
