"""python-telegram-bot's HTTP transport on aiohttp instead of httpx.

PTB sends every Bot API call through a ``BaseRequest``; its default (``HTTPXRequest``)
costs about as much CPU per call as a model call through litellm, and a turn makes at
least one (the reply). aiohttp is already the daemon's HTTP stack, and this is PTB's own
extension point: PTB still builds the requests, parses the answers and maps the errors;
only the bytes travel differently. Errors are mapped as ``HTTPXRequest`` maps them:
timeouts to ``TimedOut``, every other transport failure to ``NetworkError``.

A call without files goes as one ``application/json`` body (the Bot API takes JSON for
every method but uploads), not as the form ``HTTPXRequest`` sends: encoding a form
(each value JSON-dumped, then the whole form percent-encoded) was the largest part of a
sendMessage's CPU on our side. Uploads stay ``multipart/form-data``.
"""

from __future__ import annotations

import json
import urllib.request
from urllib.parse import urlsplit

import aiohttp
from telegram._utils.defaultvalue import DefaultValue
from telegram._utils.types import ODVInput
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData


class AiohttpRequest(BaseRequest):
    """One aiohttp session per instance (PTB uses one for getUpdates, one for the rest)."""

    def __init__(
        self,
        *,
        connection_pool_size: int = 1,
        read_timeout: float | None = 5.0,
        write_timeout: float | None = 5.0,
        connect_timeout: float | None = 5.0,
        media_write_timeout: float | None = 20.0,
    ) -> None:
        self._pool_size = connection_pool_size
        self._read_timeout = read_timeout
        self._write_timeout = write_timeout
        self._connect_timeout = connect_timeout
        self._media_write_timeout = media_write_timeout
        self._session: aiohttp.ClientSession | None = None
        self._proxies: dict[tuple[str, str], str | None] = {}

    @property
    def read_timeout(self) -> float | None:
        return self._read_timeout

    async def initialize(self) -> None:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=self._pool_size)
            # HTTP(S)_PROXY and NO_PROXY are honoured, as httpx (PTB's default) honours
            # them, but read once per host (see _proxy): aiohttp's trust_env reads the
            # environment and ~/.netrc again on a worker thread for every request.
            self._session = aiohttp.ClientSession(connector=connector, trust_env=False)

    def _proxy(self, url: str) -> str | None:
        """The proxy the environment names for ``url``'s host, looked up once."""
        parts = urlsplit(url)
        key = (parts.scheme, parts.hostname or "")
        if key not in self._proxies:
            proxy = urllib.request.getproxies().get(parts.scheme)
            if proxy and urllib.request.proxy_bypass(parts.netloc):
                proxy = None
            self._proxies[key] = proxy or None
        return self._proxies[key]

    async def shutdown(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None

    async def do_request(  # noqa: PLR0917 (PTB's signature)
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        write_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        connect_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        pool_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        if self._session is None or self._session.closed:
            raise RuntimeError("This AiohttpRequest is not initialized!")
        files = request_data.multipart_data if request_data else None
        read = self._read_timeout if isinstance(read_timeout, DefaultValue) else read_timeout
        connect = (
            self._connect_timeout if isinstance(connect_timeout, DefaultValue) else connect_timeout
        )
        write = self._media_write_timeout if files else self._write_timeout
        if not isinstance(write_timeout, DefaultValue):
            write = write_timeout
        # aiohttp has no separate write timeout: the slower of read and write bounds a read.
        longest = max((t for t in (read, write) if t is not None), default=None)
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=connect, sock_read=longest)
        headers = {"User-Agent": self.USER_AGENT}
        body: aiohttp.FormData | bytes | None = None
        if files:
            assert request_data is not None
            body = aiohttp.FormData(request_data.json_parameters)
            for name, (filename, content, mime) in files.items():
                body.add_field(name, content, filename=filename, content_type=mime)
        elif request_data is not None:
            body = json.dumps(request_data.parameters).encode()
            headers["Content-Type"] = "application/json"
        try:
            async with self._session.request(
                method,
                url,
                data=body,
                headers=headers,
                timeout=timeout,
                proxy=self._proxy(url),
            ) as resp:
                return resp.status, await resp.read()
        except TimeoutError as err:
            raise TimedOut from err
        except aiohttp.ClientError as err:
            raise NetworkError(f"aiohttp.{err.__class__.__name__}: {err}") from err
