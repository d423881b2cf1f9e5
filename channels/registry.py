"""Every platform the daemon knows: one line per channel package.

Adding a platform is a package under ``channels/`` exporting a :class:`ChannelSpec`
and one line here; ``bot/`` reads settings models, factories, doctor checks, secrets
and example config from these specs and names no platform itself.
"""

from __future__ import annotations

from typing import Any

from channels import discord, slack, telegram
from channels.base import ChannelSpec

SPECS: tuple[ChannelSpec[Any], ...] = (telegram.SPEC, slack.SPEC, discord.SPEC)
