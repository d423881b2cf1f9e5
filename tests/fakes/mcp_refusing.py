"""An HTTP endpoint on 127.0.0.1 that refuses every MCP request with the status its
path names (``/401``, ``/403``, ``/500``...), as a proxy or a server with the wrong
token does. uvicorn serves it in the test's event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, Self

import uvicorn


async def _refuse(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    while (await receive()).get("more_body"):
        pass
    status = int(scope["path"].strip("/") or 404)
    headers = [(b"content-type", b"application/json")]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="mcp"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b'{"error":"no"}'})


class RefusingServer:
    """``url(401)`` answers every request with 401."""

    def __init__(self) -> None:
        self.port = 0
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None

    def url(self, status: int) -> str:
        return f"http://127.0.0.1:{self.port}/{status}"

    async def start(self) -> Self:
        config = uvicorn.Config(_refuse, host="127.0.0.1", port=0, log_level="warning")
        server = self._server = uvicorn.Server(config)
        task = self._task = asyncio.create_task(server.serve())
        while not server.started:  # uvicorn exposes a flag only
            if task.done():
                await task
                raise RuntimeError("uvicorn stopped before it started")
            await asyncio.sleep(0.01)
        self.port = server.servers[0].sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait_for(self._task, 10)
