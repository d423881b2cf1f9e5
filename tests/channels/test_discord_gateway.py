"""The gateway lifecycle, driven by the real discord.py against the fake gateway: login,
RESUME after a dropped socket, a fresh IDENTIFY after an invalid session, a refused
token, a refused Message Content intent, and the seams that point discord.py here."""

from __future__ import annotations

import asyncio
import logging

import discord.gateway
import discord.http
import pytest
from pydantic import SecretStr

from bot.errors import ChannelError
from channels.discord import seams
from channels.discord.adapter import DiscordChannel
from channels.discord.settings import DiscordSettings
from tests.fakes import discord_api
from tests.fakes.discord_api import FakeDiscord

fake_discord = discord_api.fake_discord
discord_channel = discord_api.discord_channel

IDENTIFY, RESUME = 2, 6
MESSAGE_CONTENT = 1 << 15


def test_discord_py_seams_still_exist():
    """A discord.py upgrade that renames these would send the tests to the real Discord."""
    assert isinstance(discord.http.Route.BASE, str)
    assert hasattr(discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY")
    assert callable(discord.Client.before_identify_hook)


async def test_login_identify_and_seams(discord_channel, fake_discord: FakeDiscord):
    channel, _ = await discord_channel()  # gateway_url empty: asked GET /gateway/bot
    assert seams.current() == (fake_discord.api_base, fake_discord.gateway_url)
    assert fake_discord.calls_to("GET /gateway/bot")
    [identify] = fake_discord.ops(IDENTIFY)
    assert identify["d"]["token"] == fake_discord.token
    intents = identify["d"]["intents"]
    want = discord.Intents(guilds=True, guild_messages=True, dm_messages=True)
    assert intents & want.value == want.value and intents & MESSAGE_CONTENT
    assert channel.connected


async def test_configured_gateway_url_is_used_as_is(discord_channel, fake_discord):
    await discord_channel(gateway_url=fake_discord.gateway_url)
    assert not fake_discord.calls_to("GET /gateway/bot")
    assert len(fake_discord.ops(IDENTIFY)) == 1


async def test_dropped_socket_resumes_and_replays(discord_channel, fake_discord):
    channel, inbox = await discord_channel()
    await fake_discord.drop()
    missed = fake_discord.user_message("sent while you were away")  # in the session backlog
    [resume] = await fake_discord.wait_op(RESUME)
    assert resume["d"]["session_id"] == fake_discord.session_id
    [msg] = await inbox.wait(1)
    assert msg.message_id == missed["id"]
    fake_discord.user_message("and after")
    await inbox.wait(2)
    assert len(fake_discord.ops(IDENTIFY)) == 1  # resumed, not identified again
    assert channel.connected


async def test_invalid_session_identifies_afresh(discord_channel, fake_discord):
    channel, inbox = await discord_channel()
    await fake_discord.invalidate()  # op 9 d=false
    await fake_discord.wait_op(IDENTIFY, 2)
    await fake_discord.wait_session()
    fake_discord.user_message("still there?")
    [msg] = await inbox.wait(1)
    assert msg.text == "still there?"
    assert fake_discord.ops(RESUME) == []
    await asyncio.wait_for(channel.wait_connected(), 10)


async def test_failed_resume_identifies_afresh(discord_channel, fake_discord):
    _, inbox = await discord_channel()
    fake_discord.session_id = None  # the session expired while the socket was down
    await fake_discord.drop()
    await fake_discord.wait_op(RESUME)  # answered with op 9
    await fake_discord.wait_op(IDENTIFY, 2)
    await fake_discord.wait_session()
    fake_discord.user_message("hello again")
    assert (await inbox.wait(1))[0].text == "hello again"


async def test_outage_flips_connected(discord_channel, fake_discord):
    channel, inbox = await discord_channel()
    await fake_discord.stop()
    await asyncio.wait_for(channel.wait_connected(False), 10)
    await fake_discord.start()  # same port: discord.py's reconnect loop finds it again
    await fake_discord.wait_session(timeout=20)
    await asyncio.wait_for(channel.wait_connected(), 20)
    fake_discord.user_message("back")
    await inbox.wait(1)


async def test_refused_token_fails_start(fake_discord):
    settings = DiscordSettings(token=SecretStr("wrong"), api_base=fake_discord.api_base)
    channel = DiscordChannel(settings, identify_delay_s=0.01, guild_ready_timeout=0.05)
    with pytest.raises(ChannelError, match="token refused"):
        await channel.start(discord_api.Inbox().put)
    await channel.stop()
    assert not channel.connected


async def test_refused_content_intent_falls_back_without_it(discord_channel, fake_discord, caplog):
    fake_discord.grant_content = False  # the portal switch is off: IDENTIFY -> close 4014
    channel, inbox = await discord_channel(ready=False)
    first, second = await fake_discord.wait_op(IDENTIFY, 2)
    assert first["d"]["intents"] & MESSAGE_CONTENT
    assert not second["d"]["intents"] & MESSAGE_CONTENT
    await asyncio.wait_for(channel.wait_connected(), 10)
    assert any("MESSAGE CONTENT INTENT" in r.getMessage() for r in caplog.records)
    fake_discord.user_message("DMs still carry their text")
    assert (await inbox.wait(1))[0].text == "DMs still carry their text"


async def _until(condition, timeout: float = 30.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():  # noqa: ASYNC110 (log records: no event to await)
            await asyncio.sleep(0.02)


async def test_an_outage_logs_once_when_degraded_and_once_when_recovered(
    discord_channel, fake_discord, caplog
):
    """discord.py's reconnect loop logs each attempt as an ERROR with a traceback: an
    outage is one degraded line (with the first reason) and one recovered line instead."""
    caplog.set_level(logging.INFO)
    caplog.set_level(logging.DEBUG, logger="discord.client")  # the demoted lines, counted
    channel, inbox = await discord_channel()
    caplog.clear()
    await fake_discord.stop()
    attempts = lambda: [r for r in caplog.records if r.msg.startswith("Attempting a reconnect")]  # noqa: E731
    await _until(lambda: len(attempts()) >= 2)
    await fake_discord.start()
    await fake_discord.wait_session(timeout=30)
    await asyncio.wait_for(channel.wait_connected(), 30)
    loud = [r for r in caplog.records if r.levelno >= logging.INFO]
    said = [r.getMessage() for r in loud]
    assert all(r.levelno == logging.DEBUG for r in attempts()), said
    assert not [r for r in loud if r.levelno >= logging.ERROR or r.exc_info], said
    [degraded] = [m for m in said if "degraded" in m]
    assert "gateway connection" in degraded and "Error" in degraded  # the first reason
    assert len([m for m in said if "recovered" in m]) == 1, said
    assert len(loud) <= 5, said  # disconnected, degraded, connected, recovered (+ login)
    fake_discord.user_message("back")
    await inbox.wait(1)
