"""A TCP relay on 127.0.0.1 in front of the real PostgreSQL that a test can cut: every
connection through it is closed and new ones are refused until it is mended (a replica
losing its database, without touching the server)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from urllib.parse import urlsplit, urlunsplit


class CuttableRelay:
    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self._target = (parts.hostname or "127.0.0.1", parts.port or 5432)
        self._url = parts
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.cut = False
        self.refused = 0  # connections refused while cut: how often a client tried
        # While set, the server's end of a connection is not passed on: a client whose
        # backend was terminated has read the FATAL but not yet the end of the stream,
        # as a busy event loop does in between.
        self.hold_eof = False

    @property
    def url(self) -> str:
        """The database URL through the relay."""
        assert self._server is not None
        port = self._server.sockets[0].getsockname()[1]
        user = f"{self._url.username}@" if self._url.username else ""
        netloc = f"{user}127.0.0.1:{port}"
        return urlunsplit(self._url._replace(netloc=netloc))

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", 0)

    async def stop(self) -> None:
        self.sever()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    def sever(self) -> None:
        """Close every relayed connection; refuse new ones until :meth:`mend`."""
        self.cut = True
        for writer in list(self._writers):
            writer.close()

    def mend(self) -> None:
        self.cut = False

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.cut:
            self.refused += 1
            writer.close()
            return
        up_reader, up_writer = await asyncio.open_connection(*self._target)
        self._writers |= {writer, up_writer}
        try:
            await asyncio.gather(
                self._pipe(reader, up_writer), self._pipe(up_reader, writer, self._held)
            )
        finally:
            for w in (writer, up_writer):
                self._writers.discard(w)
                w.close()

    def _held(self) -> bool:
        return self.hold_eof and not self.cut

    @staticmethod
    async def _pipe(
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        held: Callable[[], bool] = lambda: False,
    ) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        if not held():
            writer.close()
