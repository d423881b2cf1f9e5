"""An ASGI app served by uvicorn in the test's own event loop on 127.0.0.1: the fake MCP
servers over HTTP (tests/fakes/mcp_http.py, mcp_refusing.py) share its start and stop."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Literal

import uvicorn


class AsgiServer:
    """:meth:`serve` on a free port (or on ``port`` again after :meth:`stop`)."""

    def __init__(self) -> None:
        self.port = 0
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None

    async def serve(self, app: Any, *, lifespan: Literal["auto", "on", "off"] = "auto") -> None:
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.port, log_level="warning", lifespan=lifespan
        )
        server = self._server = uvicorn.Server(config)
        task = self._task = asyncio.create_task(server.serve())
        while not server.started:  # uvicorn exposes a flag only
            if task.done():
                await task
                raise RuntimeError("uvicorn stopped before it started")
            await asyncio.sleep(0.01)
        self.port = server.servers[0].sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait_for(self._task, 10)
        self._server = self._task = None
