"""Read a live daemon's /healthz and /metrics as a monitor would."""

from __future__ import annotations

from typing import Any

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from bot.daemon import Daemon

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


async def get(daemon: Daemon, path: str) -> tuple[int, Any]:
    """(status, JSON or text) of ``GET path`` on the daemon's web app."""
    assert daemon.web is not None
    async with (
        aiohttp.ClientSession() as http,
        http.get(daemon.web.url + path, timeout=aiohttp.ClientTimeout(total=5)) as resp,
    ):
        if resp.content_type == "application/json":
            return resp.status, await resp.json()
        return resp.status, await resp.text()


async def metrics(daemon: Daemon) -> Samples:
    status, text = await get(daemon, "/metrics")
    assert status == 200
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


async def channel_state(daemon: Daemon, name: str) -> tuple[int, list[str], str, float]:
    """(/healthz status, its failing parts, what it says of channel ``name``, and
    ``bot_channel_connected`` for it): how a monitor sees one channel."""
    status, body = await get(daemon, "/healthz")
    connected = value(await metrics(daemon), "bot_channel_connected", channel=name)
    return status, body["failing"], body[f"channel:{name}"], connected
