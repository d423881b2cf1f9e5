"""The terminal channel: `bot chat`, and `bot run` when stdin is a terminal.

It goes through the same bus, dispatcher and agent as every platform. Lines are sent
one at a time and each waits for its final answer, so a piped script gets answers in
order and the process can exit exactly when the last one is printed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
from typing import TextIO

from bot.messages import ChatKey, InboundMessage, OutboundMessage
from channels.base import PutInbound, Sent

log = logging.getLogger(__name__)

CLI_KEY = ChatKey("cli", "local")


class CLIChannel:
    name = "cli"
    trusted = True

    def __init__(
        self,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        *,
        interactive: bool | None = None,
        user_id: str = "local",
    ) -> None:
        self._in = stdin or sys.stdin
        self._out = stdout or sys.stdout
        self._interactive = self._in.isatty() if interactive is None else interactive
        self._user = user_id
        self._pending: dict[str, asyncio.Event] = {}
        self._task: asyncio.Task[None] | None = None
        self.finished = asyncio.Event()

    @property
    def connected(self) -> bool:
        return self._task is not None and not self._task.done()

    async def start(self, put_inbound: PutInbound) -> None:
        self._task = asyncio.create_task(self._read_loop(put_inbound), name="cli-reader")

    def _reader(self, loop: asyncio.AbstractEventLoop, lines: asyncio.Queue[str]) -> None:
        # A daemon thread: a blocked readline() must never keep the process alive.
        while True:
            try:
                line = self._in.readline()
            except (OSError, ValueError):
                line = ""
            with contextlib.suppress(RuntimeError):  # loop already closed
                loop.call_soon_threadsafe(lines.put_nowait, line)
            if not line:
                return

    async def _read_loop(self, put_inbound: PutInbound) -> None:
        lines: asyncio.Queue[str] = asyncio.Queue()
        loop = asyncio.get_running_loop()
        threading.Thread(target=self._reader, args=(loop, lines), daemon=True).start()
        try:
            while True:
                if self._interactive:
                    self._write("you> ", end="")
                line = await lines.get()
                if not line:
                    break
                text = line.rstrip("\r\n")
                if not text.strip():
                    continue
                msg = InboundMessage(
                    key=CLI_KEY, user_id=self._user, text=text, user_name="you", direct=True
                )
                done = asyncio.Event()
                self._pending[msg.message_id] = done
                await put_inbound(msg)
                await done.wait()
        finally:
            self.finished.set()

    async def send(self, msg: OutboundMessage) -> Sent:
        prefix = "bot> " if self._interactive else ""
        self._write(f"{prefix}{msg.text}")
        for attachment in msg.attachments:
            self._write(f"{prefix}[file not shown in the terminal: {attachment.name}]")
        if msg.final and msg.reply_to is not None:
            event = self._pending.pop(msg.reply_to, None)
            if event is not None:
                event.set()
        return Sent()

    def _write(self, text: str, end: str = "\n") -> None:
        self._out.write(text + end)
        self._out.flush()

    async def stop(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
