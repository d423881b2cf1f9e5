"""The one place that points discord.py at a REST root and a gateway other than Discord's.

discord.py reads both from class attributes (``discord.http.Route.BASE`` for every REST
call, ``DiscordWebSocket.DEFAULT_GATEWAY`` for IDENTIFY and after an invalidated
session), so they are process-wide: one Discord bot per daemon. A test guards that
both attributes still exist, because a discord.py upgrade that renames them would
otherwise silently send a test suite (or a proxy setup) to the real Discord.
"""

from __future__ import annotations

import logging

import yarl
from discord.gateway import DiscordWebSocket
from discord.http import Route

log = logging.getLogger(__name__)

DEFAULT_GATEWAY = DiscordWebSocket.DEFAULT_GATEWAY  # Discord's own, as discord.py ships it


def point_rest_at(api_base: str) -> None:
    """Every REST call (``Route.BASE + path``) goes to ``api_base``."""
    Route.BASE = api_base.rstrip("/")


def point_gateway_at(gateway_url: str) -> None:
    """IDENTIFY (first connect, and after the gateway invalidated the session) goes here."""
    DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url)
    log.debug("discord gateway: %s", gateway_url)


def current() -> tuple[str, str]:
    """(REST root, gateway URL) discord.py will use now."""
    return Route.BASE, str(DiscordWebSocket.DEFAULT_GATEWAY)
