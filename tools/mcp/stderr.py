"""A stdio MCP server's stderr, into the daemon's log instead of onto its terminal.

Left to the SDK, a child writes to the daemon's own stderr: in ``bot chat`` (whose log
goes to ``data/bot.log``) a chatty server garbles the prompt. Each child gets a pipe
instead, read by the event loop as fast as the child writes (a full pipe would stall
the server), and its lines go to the logger ``tools.mcp.stderr.<server>`` at INFO: at
most ``BURST`` lines at once and ``RATE`` a second after that, each cut at
``MAX_LINE`` characters. Lines over the rate are read and dropped, and counted in the
next line logged, so a server writing thousands of lines costs a few log lines.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections import deque
from collections.abc import AsyncIterator
from typing import TextIO

BURST = 100  # lines logged at once before the rate applies
RATE = 10.0  # lines a second after a burst
MAX_LINE = 2000  # characters of one line logged; the rest is dropped
TAIL = 3  # last lines kept, for a failure's detail (a child that exits at start)
MAX_TAIL = 300  # characters kept of each
EOF_WAIT_S = 2.0  # after the child ended: how long its last lines may take to arrive


class _StderrLines(asyncio.Protocol):
    """Splits what the child writes into lines and logs them, rate-limited."""

    def __init__(self, server: str) -> None:
        self._log = logging.getLogger(f"{__name__}.{server}")
        self._partial = b""
        self._skipping = False  # the rest of a line already cut at MAX_LINE
        self._tokens = float(BURST)
        self._refilled = time.monotonic()
        self._dropped = 0
        self.tail: deque[bytes] = deque(maxlen=TAIL)  # the last lines, logged or not
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        for line in lines:
            if self._skipping:
                self._skipping = False
            else:
                self._line(line)
        if len(self._partial) > MAX_LINE:  # a line with no end in sight: log its start
            if not self._skipping:
                self._line(self._partial)
            self._partial, self._skipping = b"", True

    def eof_received(self) -> bool | None:
        if self._partial and not self._skipping:
            self._line(self._partial)
        self._partial = b""
        if self._dropped:
            self._log.info("(%d more lines not logged)", self._dropped)
            self._dropped = 0
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)

    def _line(self, raw: bytes) -> None:
        if raw.strip():
            self.tail.append(raw[:MAX_TAIL])
        now = time.monotonic()
        self._tokens = min(BURST, self._tokens + (now - self._refilled) * RATE)
        self._refilled = now
        if self._tokens < 1:
            self._dropped += 1
            return
        self._tokens -= 1
        text = raw[:MAX_LINE].decode("utf-8", "replace").rstrip("\r")
        if self._dropped:
            text = f"{text} ({self._dropped} lines before it not logged)"
            self._dropped = 0
        self._log.info("%s", text)


class ServerStderr:
    """The pipe one child's stderr goes into; ``writer`` is what the child is given."""

    def __init__(
        self, server: str, writer: TextIO, reader: asyncio.ReadTransport, lines: _StderrLines
    ) -> None:
        self.server = server
        self.writer = writer
        self._reader = reader
        # Kept from the start: asyncio drops the transport's protocol once the pipe ends.
        self._lines = lines

    def tail(self) -> list[str]:
        """The child's last few stderr lines (each clipped), oldest first."""
        return [raw.decode("utf-8", "replace").strip() for raw in self._lines.tail]

    def spawned(self) -> None:
        """The child has its copy of the write end: drop ours, so its exit is our EOF."""
        self.writer.close()

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(TimeoutError):  # a grandchild may hold the pipe open
            await asyncio.wait_for(asyncio.shield(self._lines.closed), EOF_WAIT_S)
        self._reader.close()


@contextlib.asynccontextmanager
async def stderr_to_log(server: str) -> AsyncIterator[ServerStderr]:
    """A pipe whose lines reach ``server``'s logger while the context lasts."""
    read_fd, write_fd = os.pipe()
    writer, reading = os.fdopen(write_fd, "w"), os.fdopen(read_fd, "rb", buffering=0)
    try:
        loop = asyncio.get_running_loop()
        reader, lines = await loop.connect_read_pipe(lambda: _StderrLines(server), reading)
    except BaseException:
        writer.close()
        reading.close()
        raise
    pipe = ServerStderr(server, writer, reader, lines)
    try:
        yield pipe
    finally:
        await pipe.close()
