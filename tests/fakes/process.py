"""A real `python -m bot run` subprocess for end-to-end tests: started, awaited until
its ": ready: " log line, its stderr collected line by line, stopped by a signal."""

from __future__ import annotations

import asyncio
import contextlib
import os
import platform
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tests.fakes.waiting import PROCESS_S

if TYPE_CHECKING:
    from tests.fakes.llm_server import FakeLLM
    from tests.fakes.telegram_api import FakeTelegram

LLM_KEY = "sk-test-secret-value"  # must never show up in a process's output
# Where pyproject.toml's environment marker installs uvloop, the default event loop.
UVLOOP_INSTALLED = sys.platform != "win32" and platform.python_implementation() == "CPython"
# The loop `bot run` reports at the default event_loop = "auto".
DEFAULT_LOOP = "uvloop" if UVLOOP_INSTALLED else "asyncio"


def bot_env(
    data_dir: Path,
    llm: FakeLLM | None = None,
    telegram: FakeTelegram | None = None,
    **extra: str,
) -> dict[str, str]:
    """The environment of a daemon subprocess: none of the caller's BOT_/OPENAI_ settings,
    its own data dir, no network for litellm's cost map, /metrics on a free port, and the
    fakes it should talk to."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BOT_", "OPENAI_"))}
    env.update(
        BOT_DATA_DIR=str(data_dir),
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        PYTHONUNBUFFERED="1",
        BOT_WEB__PORT="0",
    )
    if llm is not None:
        env.update(
            BOT_LLM__MODEL="openai/fake-model", BOT_LLM__API_BASE=llm.url, BOT_LLM__API_KEY=LLM_KEY
        )
    if telegram is not None:
        env.update(
            BOT_CHANNELS__TELEGRAM__TOKEN=telegram.token,
            BOT_CHANNELS__TELEGRAM__BASE_URL=telegram.base_url,
            BOT_CHANNELS__TELEGRAM__ALLOW_FROM='["*"]',
        )
    env.update(extra)
    return env


async def run_bot(env: dict[str, str], cwd: Path, *argv: str) -> tuple[int, str, str]:
    """A one-shot `python -m bot <argv>` run to its end: (exit code, stdout, stderr)."""
    proc = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "bot", *argv),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        cwd=cwd,
    )
    out, err = await asyncio.wait_for(proc.communicate(), PROCESS_S)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


class BotProcess:
    """`python -m bot run`, its stderr collected line by line as it comes."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.lines: list[str] = []
        self._changed = asyncio.Condition()
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def start(cls, env: dict[str, str], cwd: Path) -> BotProcess:
        proc = await asyncio.create_subprocess_exec(
            *(sys.executable, "-m", "bot", "run"),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            cwd=cwd,
        )
        bot = cls(proc)
        await bot.wait_line(": ready: ")
        return bot

    async def _read(self) -> None:
        assert self.proc.stderr is not None
        while line := (await self.proc.stderr.readline()).decode():
            async with self._changed:
                self.lines.append(line)
                self._changed.notify_all()
        async with self._changed:
            self._changed.notify_all()

    def index(self, needle: str) -> int | None:
        return next((i for i, line in enumerate(self.lines) if needle in line), None)

    async def wait_line(self, needle: str, timeout: float = PROCESS_S) -> str:
        def seen() -> bool:
            return self.index(needle) is not None or self._reader.done()

        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(seen), timeout)
        found = self.index(needle)
        assert found is not None, f"{needle!r} never logged:\n{self.log}"
        return self.lines[found]

    @property
    def log(self) -> str:
        return "".join(self.lines)

    async def stop(self, sig: int | None = signal.SIGTERM) -> int:
        """Send ``sig`` (None: none, a signal sent before is being acted on) and wait for
        the exit; its code."""
        if sig is not None and self.proc.returncode is None:
            self.proc.send_signal(sig)
        code = await asyncio.wait_for(self.proc.wait(), PROCESS_S)
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(self._reader, 5)
        return code
