"""The daemon's one outbound HTTP session (weather, downloads), opened while it runs."""

from __future__ import annotations

import aiohttp


class SharedHttp:
    """Calling it gives the open session, or None before start / after stop.

    Services take this getter instead of a session because a session belongs to the
    event loop that runs the daemon, which does not exist yet when parts are built.
    """

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None

    def __call__(self) -> aiohttp.ClientSession | None:
        return self._session

    async def start(self) -> None:
        self._session = aiohttp.ClientSession()

    async def stop(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()
