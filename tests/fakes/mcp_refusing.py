"""An HTTP endpoint on 127.0.0.1 that refuses every MCP request with the status its
path names (``/401``, ``/403``, ``/500``...), as a proxy or a server with the wrong
token does. uvicorn serves it in the test's event loop.
"""

from __future__ import annotations

from typing import Any, Self

from tests.fakes.asgi_server import AsgiServer


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


class RefusingServer(AsgiServer):
    """``url(401)`` answers every request with 401."""

    def url(self, status: int) -> str:
        return f"http://127.0.0.1:{self.port}/{status}"

    async def start(self) -> Self:
        await self.serve(_refuse)
        return self
