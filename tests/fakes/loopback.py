"""The lifecycle every fake server shares: an aiohttp app on 127.0.0.1, port 0 on first
start (the same port again on a restart), ``shutdown_timeout=0.1`` so tests end fast."""

from __future__ import annotations

from abc import ABC, abstractmethod
from types import TracebackType
from typing import Self

from aiohttp import web


class LoopbackServer(ABC):
    _runner: web.AppRunner | None = None
    _port: int = 0

    @abstractmethod
    def add_routes(self, app: web.Application) -> None:
        """Each fake declares its routes."""

    @property
    def port(self) -> int:
        if self._runner is None:
            raise RuntimeError(f"{type(self).__name__} is not started")
        return self._port

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        app = web.Application()
        self.add_routes(app)
        self._runner = web.AppRunner(app, shutdown_timeout=0.1, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", self._port).start()
        self._port = int(self._runner.addresses[0][1])

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()
