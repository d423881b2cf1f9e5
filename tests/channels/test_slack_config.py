"""The Slack package: settings, its example, the spec's lazy factory, the doctor check."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import aiohttp
import pytest
from pydantic import SecretStr, ValidationError

from channels.base import (
    ChannelContext,
    ProvidesRoutes,
    SupportsEdit,
    SupportsReactions,
    SupportsTyping,
)
from channels.slack import SPEC, SlackSettings
from channels.slack.doctor import check_slack
from channels.slack.settings import EXAMPLE
from tests.fakes import slack_api
from tests.fakes.slack_api import FakeSlack, MemoryState

fake_slack = slack_api.fake_slack


def test_example_is_valid_and_http_port_is_still_accepted() -> None:
    section = tomllib.loads(EXAMPLE)["channels"]["slack"]
    settings = SlackSettings(**section)
    assert settings.group_policy == "mention" and not SPEC.enabled(settings)
    assert SlackSettings.model_validate({"http_port": 3000, "group_policy": "all"}).group_policy
    with pytest.raises(ValidationError):
        SlackSettings.model_validate({"group_policy": "everyone"})


def test_factory_builds_the_adapter_with_its_capabilities(tmp_path: Path) -> None:
    settings = SlackSettings.model_validate(
        {"bot_token": "xoxb-1", "signing_secret": "s", "http_path": "/s/ev"}
    )
    channel = SPEC.factory(settings, ChannelContext(state=MemoryState(), data_dir=tmp_path))
    assert "channels.slack.adapter" in sys.modules
    assert channel.name == "slack" and not channel.connected
    for capability in (ProvidesRoutes, SupportsTyping, SupportsEdit, SupportsReactions):
        assert isinstance(channel, capability)
    assert isinstance(channel, ProvidesRoutes)
    assert [(r.method, r.path) for r in channel.routes()] == [("POST", "/s/ev")]
    socket_only = SPEC.factory(
        SlackSettings.model_validate({"bot_token": "xoxb-1", "app_token": "xapp-1"}),
        ChannelContext(state=MemoryState(), data_dir=tmp_path),
    )
    assert isinstance(socket_only, ProvidesRoutes) and socket_only.routes() == []
    assert SPEC.secrets(settings)[0].get_secret_value() == "xoxb-1"


async def _check(fake: FakeSlack, **values: str):
    settings = SlackSettings.model_validate(
        {"bot_token": fake.bot_token, "api_url": fake.api_url, **values}
    )
    async with aiohttp.ClientSession() as http:
        return await check_slack(http, settings)


async def test_doctor_checks_the_app_token_in_socket_mode(fake_slack: FakeSlack) -> None:
    check = await _check(fake_slack, app_token=fake_slack.app_token)
    assert check.status == "ok" and "fakebot" in check.detail and "Socket Mode" in check.detail
    [opened] = fake_slack.calls_to("apps.connections.open")
    assert opened.token == fake_slack.app_token
    bad = await _check(fake_slack, app_token="xapp-wrong")
    assert bad.status == "failed" and "invalid_auth" in bad.detail and "xapp" in bad.fix


async def test_doctor_in_http_mode_and_with_a_bad_bot_token(fake_slack: FakeSlack) -> None:
    check = await _check(fake_slack, signing_secret="s")
    assert check.status == "ok" and not fake_slack.calls_to("apps.connections.open")
    settings = SlackSettings.model_validate(
        {"bot_token": "xoxb-no", "signing_secret": "s", "api_url": fake_slack.api_url}
    )
    async with aiohttp.ClientSession() as http:
        bad = await check_slack(http, settings)
    assert bad.status == "failed" and "invalid_auth" in bad.detail and "xoxb" in bad.fix


async def test_a_refused_token_fails_the_start(fake_slack: FakeSlack, tmp_path: Path) -> None:
    from bot.errors import ChannelError
    from channels.slack.adapter import SlackChannel

    async def put(msg: object) -> None:
        raise AssertionError("nothing arrives")

    for bot_token, app_token in (
        ("xoxb-wrong", fake_slack.app_token),
        (fake_slack.bot_token, "xapp-wrong"),
    ):
        settings = SlackSettings.model_validate(
            {"bot_token": bot_token, "app_token": app_token, "api_url": fake_slack.api_url}
        )
        channel = SlackChannel(settings)
        with pytest.raises(ChannelError, match="refused"):
            await channel.start(put)
        assert not channel.connected
        await channel.stop()


def _unchecked(fake: FakeSlack, **secrets: str) -> SlackSettings:
    """Settings that skipped load's checks: an app token with a line break still in it
    (aiohttp refuses such a header with its own ValueError)."""
    values = {"bot_token": fake.bot_token, "app_token": fake.app_token, **secrets}
    return SlackSettings.model_construct(
        api_url=fake.api_url, **{k: SecretStr(v) for k, v in values.items()}
    )


async def test_tokens_ending_in_a_line_break_are_the_tokens(fake_slack: FakeSlack) -> None:
    check = await _check(
        fake_slack, bot_token=fake_slack.bot_token + "\n", app_token=fake_slack.app_token + "\n"
    )
    assert check.status == "ok" and "Socket Mode" in check.detail, check
    [opened] = fake_slack.calls_to("apps.connections.open")
    assert opened.token == fake_slack.app_token


async def test_doctor_says_an_http_client_error_as_a_failed_row(fake_slack: FakeSlack) -> None:
    settings = _unchecked(fake_slack, app_token=fake_slack.app_token + "\n")
    async with aiohttp.ClientSession() as http:
        check = await check_slack(http, settings)
    assert check.status == "failed", check
    assert check.detail.startswith("apps.connections.open: ValueError: "), check.detail
    assert "app_token" in check.fix


async def test_a_socket_start_raising_anything_is_a_channel_error(
    fake_slack: FakeSlack,
) -> None:
    from bot.errors import ChannelError
    from channels.slack.adapter import SlackChannel

    async def put(msg: object) -> None:
        raise AssertionError("nothing arrives")

    channel = SlackChannel(_unchecked(fake_slack, app_token=fake_slack.app_token + "\n"))
    with pytest.raises(ChannelError, match="socket mode could not start: ValueError"):
        await channel.start(put)
    assert not channel.connected
    await channel.stop()
