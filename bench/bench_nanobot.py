"""Side by side with nanobot-ai 0.3.5, on the same fake model server, in the same run.

nanobot is installed on demand into its OWN virtual environment under the user cache
(``$BENCH_CACHE``, default ``~/.cache/bot-bench``), never into the project's; without
a reachable registry every row says ``not run: <reason>``.

How nanobot is driven (bench/nanobot_driver.py, run by nanobot's interpreter): its
Telegram channel cannot be pointed at our fake Bot API (0.3.5 builds
``Application.builder().token(...)`` with no base-URL setting, and python-telegram-bot
is not even among its dependencies), so the driver does what its channels do: it
builds the gateway's core (``load_config`` of a config.json whose custom
OpenAI-compatible provider is the fake server, ``MessageBus``, ``AgentLoop.from_config``
running ``agent.run()``), puts each message on the bus with ``publish_inbound`` and
takes the answer from ``consume_outbound``. Ours runs the same way: a bus-level channel
(bench/harness.py), the whole daemon behind it. nanobot always calls its model with
``stream: true``, so the bench's fake server answers that too (same reply, as SSE).

Default settings: ``NANOBOT_MAX_CONCURRENT_REQUESTS`` unset (no gate) and its loopback
model client on httpx's default pool of 100 connections. Raised: the gate at 1,000 and
that pool widened to 1,000 (a patch in the driver: no setting exists).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.common import Row
from bench.procs import DAEMON_LOOP, ROOT, FakeLLMProcess, child_env, run_worker

VERSION = "0.3.5"
CHATS = 20
PER_CHAT = 10
BURST = 200
DELAY_S = 1.0


def _venv() -> Path:
    cache = os.environ.get("BENCH_CACHE") or str(Path.home() / ".cache" / "bot-bench")
    return Path(cache) / f"nanobot-{VERSION}-venv"


async def _sh(*cmd: str, timeout: float) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        *cmd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return -1, f"timed out after {timeout:.0f} s"
    return proc.returncode or 0, out.decode(errors="replace")


async def ensure_nanobot() -> tuple[Path | None, str]:
    """nanobot's interpreter, installing it first if needed; (None, reason) on failure."""
    venv = _venv()
    python = venv / "bin" / "python"
    probe = ("-c", "import importlib.metadata as m; print(m.version('nanobot-ai'))")
    if python.exists():
        code, out = await _sh(str(python), *probe, timeout=60)
        if code == 0 and out.strip().splitlines()[-1:] == [VERSION]:
            return python, f"cached in {venv}"
    print(f"  installing nanobot-ai=={VERSION} into {venv} ...", file=sys.stderr, flush=True)
    base = getattr(sys, "_base_executable", sys.executable)
    code, out = await _sh(base, "-m", "venv", "--clear", str(venv), timeout=120)
    if code != 0:
        return None, f"venv failed: {out.strip()[-200:]}"
    code, out = await _sh(
        str(python),
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "-q",
        f"nanobot-ai=={VERSION}",
        timeout=900,
    )
    if code != 0:
        lines = [line for line in out.splitlines() if line.strip() and "ignored" not in line]
        return None, "pip install failed: " + (lines[-1] if lines else out.strip()[-200:])
    return python, f"installed into {venv}"


async def nanobot(python: Path, timeout: float = 600, **args: Any) -> dict[str, Any]:
    env = child_env(**({"NANOBOT_MAX_CONCURRENT_REQUESTS": "1000"} if args.get("raise") else {}))
    env.pop("PYTHONPATH", None)
    with tempfile.TemporaryFile() as err:
        proc = await asyncio.create_subprocess_exec(
            str(python),
            str(ROOT / "bench" / "nanobot_driver.py"),
            json.dumps(args),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=err,
            env=env,
            cwd=tempfile.gettempdir(),
        )
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), timeout)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            out = b""
        err.seek(0)
        tail = err.read()[-2000:].decode(errors="replace")
    lines = out.decode().strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"nanobot driver failed (exit {proc.returncode}): {tail}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def _cpu_ms(r: dict[str, Any]) -> float:
    messages: int = r["messages"]
    return float(r["cpu_s"]) / messages * 1000


async def _turns(python: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """nanobot's closed-loop chats, then ours the same size, on one 0-latency fake."""
    async with FakeLLMProcess(delay=0.0) as fake:
        urls: dict[str, Any] = {"url": fake.url, "stats_url": fake.stats_url}
        theirs = await nanobot(python, mode="turns", chats=CHATS, per_chat=PER_CHAT, **urls)
        ours = await run_worker(
            "bench_turns:ours",
            chats=CHATS,
            per_chat=PER_CHAT,
            stored=0,
            label="vs-nanobot",
            loop=DAEMON_LOOP,
            **urls,
        )
    return theirs, ours


def _turn_rows(theirs: dict[str, Any], ours: dict[str, Any], how: str) -> list[Row]:
    """Each side's throughput and CPU per message, ours over theirs, and nanobot's own
    start-up (``how`` it was installed, for the note)."""
    scenario = f"vs nanobot: {CHATS * PER_CHAT} turns, {CHATS} chats, 0-latency model"
    rows: list[Row] = []
    for name, r in (("nanobot", theirs), ("ours", ours)):
        rows += [
            Row(
                scenario,
                f"{name}: messages/s",
                f"{r['messages'] / r['wall_s']:.0f}",
                f"p50 {r['p50_ms']:.0f} ms, p99 {r['p99_ms']:.0f} ms;"
                f" {r['requests'] / r['messages']:.2f} model calls per message",
            ),
            Row(scenario, f"{name}: CPU per message", f"{_cpu_ms(r):.1f} ms"),
        ]
    rows += [
        Row(
            scenario,
            "ours vs nanobot",
            f"{(ours['messages'] / ours['wall_s']) / (theirs['messages'] / theirs['wall_s']):.2f}x"
            " throughput",
            f"{_cpu_ms(ours) / _cpu_ms(theirs):.2f}x the CPU per message",
        ),
        Row(
            "nanobot: core ready (no channel)",
            "spawn to agent loop running",
            f"{theirs['ready_s'] * 1000:.0f} ms",
            f"RSS {theirs['ready_rss_mb']:.0f} MB then, {theirs['warm_rss_mb']:.0f} MB after a"
            f" turn per chat; installed: {how}",
        ),
    ]
    return rows


async def _bursts(python: Path) -> dict[str, dict[str, Any]]:
    """``BURST`` chats at once on the 1-second fake: nanobot at its defaults and
    raised, then ours at its defaults and raised, each keyed by the row's name."""
    async with FakeLLMProcess(delay=DELAY_S) as fake:
        urls: dict[str, Any] = {"url": fake.url, "stats_url": fake.stats_url}
        runs = {
            "nanobot, default": await nanobot(python, mode="burst", chats=BURST, **urls),
            "nanobot, raised": await nanobot(
                python, mode="burst", chats=BURST, raise_pool=1000, **{"raise": True}, **urls
            ),
        }
        for cap, label in ((None, "defaults"), (1000, "raised (max_concurrent_chats=1000)")):
            r = await run_worker(
                "bench_concurrency:ours", chats=BURST, cap=cap, loop=DAEMON_LOOP, **urls
            )
            r["messages"] = BURST
            runs[f"ours, {label}"] = r
    return runs


def _burst_rows(runs: dict[str, dict[str, Any]]) -> list[Row]:
    """Each burst's wall time, then the best of ours against the best of nanobot's."""
    scenario = f"vs nanobot: {BURST} chats at once, 1-second model"
    rows: list[Row] = []
    for name, r in runs.items():
        rss = r.get("peak_rss_mb", 0.0)
        rows.append(
            Row(
                scenario,
                f"{name}: wall time",
                f"{r['wall_s']:.2f} s",
                f"{r['messages'] / r['wall_s']:.0f} messages/s, {_cpu_ms(r):.0f} ms CPU per"
                f" message, peak RSS {rss:.0f} MB",
            )
        )
    best_ours = min(v["wall_s"] for k, v in runs.items() if k.startswith("ours"))
    best_theirs = min(v["wall_s"] for k, v in runs.items() if k.startswith("nanobot"))
    rows.append(
        Row(
            scenario,
            "ours vs nanobot (best of each)",
            f"{best_theirs / best_ours:.2f}x faster" if best_ours < best_theirs else "slower",
            f"{best_ours:.2f} s vs {best_theirs:.2f} s",
        )
    )
    return rows


async def run() -> list[Row]:
    python, how = await ensure_nanobot()
    if python is None:
        return [Row("nanobot-ai 0.3.5 side by side", "not run", how[:300])]
    theirs, ours = await _turns(python)
    rows = _turn_rows(theirs, ours, how)
    rows += _burst_rows(await _bursts(python))
    return rows
