"""Child processes for benchmarks: the fake model server, and measured workers.

A worker is any ``async def`` in a bench module, run in a fresh interpreter with
``python -m bench.worker module:function '<json kwargs>'``; it returns a JSON-able dict
(printed as the last line of stdout). A fresh process per measurement keeps CPU time
and peak RSS (``ru_maxrss``) free of whatever ran before it in the same ``make bench``.
:class:`Segments` keeps such a worker alive and has it run one measured segment at a
time, so two workers (a scenario and its floor) can take turns.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from abc import ABC, abstractmethod
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import aiohttp

from bot.ops.loop import EventLoopChoice

ROOT = Path(__file__).resolve().parent.parent
# The event loop a daemon worker runs on: the one `bot run` picks at the default
# ``event_loop = "auto"`` (bot/ops/loop.py). Bare floors and nanobot stay on asyncio's.
DAEMON_LOOP: EventLoopChoice = "auto"


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BOT_", "OPENAI_"))}
    env.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra)
    return env


def proc_cpu_s(pid: int) -> float:
    """utime + stime of a live process, from /proc (Linux)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def proc_rss_mb(pid: int, key: str = "VmRSS") -> float:
    """VmRSS (or VmHWM, the peak) of a live process, in MB."""
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


async def finish(proc: asyncio.subprocess.Process, timeout: float) -> None:
    """Close a child's stdin (its signal to stop) and wait; killed after ``timeout``."""
    assert proc.stdin is not None
    proc.stdin.close()
    try:
        await asyncio.wait_for(proc.wait(), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()


class FakeProcess:
    """A fake server module run as ``python -m <module> <args>``: it prints ``PORT <n>``
    once it listens and serves until its stdin closes."""

    module = ""

    def __init__(self) -> None:
        self.proc: asyncio.subprocess.Process | None = None
        self.port = 0

    def args(self) -> list[str]:
        return []

    @property
    def stats_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/bench/stats"

    async def __aenter__(self) -> Self:
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            self.module,
            *self.args(),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=child_env(),
            cwd=ROOT,
        )
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), 60)
        if not line.startswith(b"PORT "):
            raise RuntimeError(f"{self.module} did not start: {line!r}")
        self.port = int(line.split()[1])
        self.started(line.decode().split())
        return self

    def started(self, words: list[str]) -> None:
        """The words of the ``PORT`` line, for subclasses that print more."""

    async def __aexit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.proc is not None:
            await finish(self.proc, 10)


class FakeLLMProcess(FakeProcess):
    """``async with FakeLLMProcess(delay=1.0) as fake: fake.url``; with ``script``
    (bench/fake_llm_server.py ``SCRIPTS``) it answers per that script and keeps every
    request (``fake.requests_url``); with ``stream_s`` it writes streamed answers over
    that long and keeps when each began (``fake.first_tokens_url``)."""

    module = "bench.fake_llm_server"

    def __init__(
        self, delay: float = 0.0, script: str | None = None, stream_s: float = 0.0
    ) -> None:
        super().__init__()
        self.delay = delay
        self.script = script
        self.stream_s = stream_s

    def args(self) -> list[str]:
        script = ["--script", self.script] if self.script else []
        return ["--delay", str(self.delay), "--stream-s", str(self.stream_s), *script]

    @property
    def first_tokens_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/bench/first_tokens"

    @property
    def requests_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/bench/requests"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


class DrivingFakeProcess(FakeProcess, ABC):
    """A fake platform driving closed-loop chats (bench/driving.py): ``control_url``
    runs them, ``section()`` configures the daemon's channel against it, ``chat_ids``
    are the chats a run of ``n`` uses."""

    token = ""

    def started(self, words: list[str]) -> None:
        self.token = words[3]

    @property
    def control_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/bench"

    @abstractmethod
    def section(self) -> dict[str, Any]:
        """The daemon's ``[channels.<name>]`` section against this fake."""

    def chat_ids(self, chats: int) -> list[str]:
        return [str(c) for c in range(1, chats + 1)]


class FakeTelegramProcess(DrivingFakeProcess):
    """The fake Bot API (bench/fake_telegram_server.py)."""

    module = "bench.fake_telegram_server"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/bot"

    def section(self) -> dict[str, Any]:
        """``[channels.telegram]`` against this fake."""
        return {"token": self.token, "base_url": self.base_url}


class FakeSlackProcess(DrivingFakeProcess):
    """The fake Slack (Web API, Socket Mode, HTTP events) driving closed-loop chats
    (bench/fake_slack_server.py)."""

    module = "bench.fake_slack_server"
    words: dict[str, str] = {}  # noqa: RUF012 (replaced per instance in started)
    socket = True  # False: the daemon is configured for the HTTP Events API instead

    def started(self, words: list[str]) -> None:
        self.words = dict(zip(words[2::2], words[3::2], strict=True))

    def section(self) -> dict[str, Any]:
        """Socket Mode (``app_token``), else the HTTP Events API (``signing_secret``)."""
        api = {"bot_token": self.words["BOT"], "api_url": f"http://127.0.0.1:{self.port}/api/"}
        if self.socket:
            return {**api, "app_token": self.words["APP"]}
        return {**api, "signing_secret": self.words["SECRET"]}

    def chat_ids(self, chats: int) -> list[str]:
        return [f"D{c:04d}" for c in range(1, chats + 1)]


class FakeDiscordProcess(DrivingFakeProcess):
    """The fake Discord (REST + gateway) driving closed-loop chats
    (bench/fake_discord_server.py)."""

    module = "bench.fake_discord_server"
    first_chat = 900_000  # bench/fake_discord_server.py FIRST_CHAT

    def section(self) -> dict[str, Any]:
        return {"token": self.token, "api_base": f"http://127.0.0.1:{self.port}/api/v10"}

    def chat_ids(self, chats: int) -> list[str]:
        return [str(self.first_chat + c) for c in range(1, chats + 1)]


async def fake_stats(stats_url: str) -> dict[str, float]:
    """Requests served and CPU seconds used so far by a fake server process."""
    async with aiohttp.ClientSession() as http, http.get(stats_url) as resp:
        data: dict[str, float] = await resp.json()
        return data


def served_between(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    """What the fake model server did between two :func:`fake_stats` readings."""
    return {
        "requests": after["requests"] - before["requests"],
        "sent_messages": after["messages"] - before["messages"],
        "fake_cpu_s": after["cpu_s"] - before["cpu_s"],
    }


def worker_argv(
    target: str, kwargs: dict[str, Any], loop: EventLoopChoice, *flags: str
) -> list[str]:
    """The command line of a ``bench.worker`` child (see bench/worker.py)."""
    return [
        sys.executable,
        "-m",
        "bench.worker",
        *flags,
        "--loop",
        loop,
        target,
        json.dumps(kwargs),
    ]


async def run_worker(
    target: str, timeout: float = 600, loop: EventLoopChoice = "asyncio", **kwargs: Any
) -> dict[str, Any]:
    """Run ``bench.<module>:<function>(**kwargs)`` in a fresh interpreter on the event
    ``loop`` named (bench/worker.py); its dict."""
    with tempfile.TemporaryFile() as err:
        proc = await asyncio.create_subprocess_exec(
            *worker_argv(target, kwargs, loop),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=err,
            env=child_env(),
            cwd=ROOT,
        )
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), timeout)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            out = b""
        err.seek(0)
        tail = err.read()[-3000:].decode(errors="replace")
    lines = out.decode().strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"worker {target} failed (exit {proc.returncode}): {tail}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


class Segments:
    """A ``python -m bench.worker --segments`` child: ``await seg.run(**params)`` has it
    run one measured segment and returns that segment's dict. Only one side of a pair
    runs at a time; the other waits idle, so each segment's CPU is its own."""

    def __init__(
        self, target: str, timeout: float = 600, loop: EventLoopChoice = "asyncio", **kwargs: Any
    ) -> None:
        self.target = target
        self.timeout = timeout
        self.loop = loop
        self.kwargs = kwargs
        self.proc: asyncio.subprocess.Process | None = None
        self._err = tempfile.TemporaryFile()  # noqa: SIM115 (closed in __aexit__)

    async def __aenter__(self) -> Self:
        self.proc = await asyncio.create_subprocess_exec(
            *worker_argv(self.target, self.kwargs, self.loop, "--segments"),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=self._err,
            env=child_env(),
            cwd=ROOT,
        )
        if await self._line() != "READY":
            raise RuntimeError(f"worker {self.target} did not start: {self._tail()}")
        return self

    async def run(self, **params: Any) -> dict[str, Any]:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(params).encode() + b"\n")
        await self.proc.stdin.drain()
        line = await self._line()
        if not line:
            raise RuntimeError(f"worker {self.target} failed: {self._tail()}")
        result: dict[str, Any] = json.loads(line)
        return result

    async def _line(self) -> str:
        assert self.proc is not None and self.proc.stdout is not None
        try:
            line = await asyncio.wait_for(self.proc.stdout.readline(), self.timeout)
        except TimeoutError:
            return ""
        return line.decode().strip()

    def _tail(self) -> str:
        self._err.seek(0)
        return self._err.read()[-3000:].decode(errors="replace")

    async def __aexit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.proc is not None:
            await finish(self.proc, 30)
        self._err.close()
