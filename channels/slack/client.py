"""The one AsyncWebClient of the channel, with retries that cannot double a post.

slack_sdk's default handler retries a request whose connection broke, which re-sends a
``chat.postMessage`` that Slack may already have accepted: the user would read the
answer twice. Here connection errors are retried only for calls that are safe to
repeat; a broken post is looked up by the sender instead (see send.py), and rate limits
are handled there too, with a bound on the wait.
"""

from __future__ import annotations

from typing import Any

import aiohttp
from slack_sdk.http_retry.builtin_async_handlers import AsyncConnectionErrorRetryHandler
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.web.async_client import AsyncWebClient

# Calls that create or add something: repeating one after a lost response would
# duplicate it (a stream appended twice shows its text twice).
NOT_IDEMPOTENT = (
    "chat.postMessage", "chat.postEphemeral", "files.upload", "files.completeUpload",
    "chat.startStream", "chat.appendStream", "chat.stopStream",
)  # fmt: skip


class SafeConnectionRetry(AsyncConnectionErrorRetryHandler):
    """Retry a broken connection once, except for calls that create something."""

    async def _can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        path = request.url.split("?", 1)[0]
        if path.endswith(NOT_IDEMPOTENT):
            return False
        return await super()._can_retry_async(
            state=state, request=request, response=response, error=error
        )


def api_root(api_url: str) -> str:
    """slack_sdk joins method names onto base_url as is: it needs the trailing slash."""
    return api_url if api_url.endswith("/") else api_url + "/"


def make_client(token: str | None, api_url: str, **kw: Any) -> AsyncWebClient:
    return AsyncWebClient(
        token=token, base_url=api_root(api_url), retry_handlers=[SafeConnectionRetry()], **kw
    )


def keep_alive(*clients: AsyncWebClient) -> aiohttp.ClientSession:
    """One aiohttp session for ``clients``, so their calls reuse connections: without
    one, slack_sdk makes a session, a TCP connection (and against Slack a TLS handshake)
    for every call and closes it after, a third of the channel's CPU per answer. Made
    on the running loop (at start); the caller closes it at stop."""
    timeout = aiohttp.ClientTimeout(total=clients[0].timeout)
    session = aiohttp.ClientSession(timeout=timeout)
    for client in clients:
        client.session = session
    return session


def header(headers: Any, name: str) -> str | None:
    """A response header, whatever mapping type (and case) slack_sdk kept."""
    if not headers:
        return None
    for key, value in dict(headers).items():
        if str(key).lower() == name.lower():
            return str(value[0] if isinstance(value, list) else value)
    return None
