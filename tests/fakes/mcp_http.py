"""The fake MCP server (tests/fakes/mcp_server.py) over streamable HTTP on 127.0.0.1.

uvicorn serves the SDK's own Starlette app in the test's event loop; :meth:`restart`
brings up a fresh server (fresh session manager) on the same port, so the client's
old session id is unknown there, as after a real server restart or an idle expiry.
"""

from __future__ import annotations

import asyncio
from typing import Any, Self

from mcp.server.sse import SseServerTransport
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route

from tests.fakes.asgi_server import AsgiServer
from tests.fakes.mcp_server import build_server


def sse_app() -> Starlette:
    """The legacy SSE transport (GET /sse, POST /messages/), as the SDK's own sse_app."""
    server = build_server()
    sse = SseServerTransport("/messages/")

    async def handle(request: Request) -> Response:
        scope, receive, send = request.scope, request.receive, request._send
        async with sse.connect_sse(scope, receive, send) as (read, write):
            await server.run(read, write, server.create_initialization_options())
        return Response()

    routes = [Route("/sse", endpoint=handle), Mount("/messages/", app=sse.handle_post_message)]
    return Starlette(routes=routes)


class MCPHttpServer(AsgiServer):
    """Streamable HTTP at ``/mcp``; with ``sse=True`` the legacy SSE transport at ``/sse``."""

    def __init__(self, *, sse: bool = False, slow_posts_s: float = 0.0) -> None:
        super().__init__()
        self.sse = sse
        self.slow_posts_s = slow_posts_s  # each POST answered this much later (a busy server)
        self.headers_seen: list[dict[str, str]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/{'sse' if self.sse else 'mcp'}"

    async def start(self) -> Self:
        """Serve on a free port, or on the same port again after :meth:`stop`."""
        inner = sse_app() if self.sse else build_server().streamable_http_app()
        await self.serve(_Recorder(inner, self.headers_seen, self.slow_posts_s), lifespan="on")
        return self

    async def restart(self) -> None:
        await self.stop()
        await self.start()


class _Recorder:
    """ASGI middleware that records each request's headers (to see what the client sent),
    and holds each POST for ``slow_posts_s``."""

    def __init__(self, app: Any, seen: list[dict[str, str]], slow_posts_s: float = 0.0) -> None:
        self.app = app
        self.seen = seen
        self.slow_posts_s = slow_posts_s

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.seen.append({k.decode(): v.decode() for k, v in scope["headers"]})
            if scope["method"] == "POST" and self.slow_posts_s:
                await asyncio.sleep(self.slow_posts_s)
        await self.app(scope, receive, send)
