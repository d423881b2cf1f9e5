"""The daemon's one outbound HTTP session (weather, downloads), opened while it runs."""

from __future__ import annotations

import aiohttp


class SharedHttp:
    """Calling it gives the open session, or None before start / after stop.

    Services take this getter instead of a session because a session belongs to the
    event loop that runs the daemon, which does not exist yet when parts are built.
    At most ``per_host`` connections per host are open at once; more requests wait.
    """

    def __init__(self, per_host: int = 8) -> None:
        self._session: aiohttp.ClientSession | None = None
        self._per_host = per_host

    def __call__(self) -> aiohttp.ClientSession | None:
        return self._session

    async def start(self) -> None:
        connector = aiohttp.TCPConnector(limit_per_host=self._per_host)
        self._session = aiohttp.ClientSession(connector=connector)

    async def stop(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()
