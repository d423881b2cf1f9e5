"""A real `python -m bot run` subprocess for end-to-end tests: started, awaited until
its ": ready: " log line, its stderr collected line by line, stopped by a signal."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from pathlib import Path


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

    async def wait_line(self, needle: str, timeout: float = 30) -> str:
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

    async def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.proc.returncode is None:
            self.proc.send_signal(sig)
        code = await asyncio.wait_for(self.proc.wait(), 30)
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(self._reader, 5)
        return code
