"""The [channels.telegram] keys: defaults, file, environment, errors, wiring."""

from __future__ import annotations

import tomllib

import pytest

from bot.app import build_daemon, example_config, platform_channels
from bot.config import Settings, load_settings
from bot.config.example import defaults_shown
from bot.errors import ConfigError
from bot.store.kv import KeyValueStore
from channels.telegram.adapter import TelegramChannel, file_base_url
from tests.fakes import telegram_api

fake_telegram = telegram_api.fake_telegram


def test_defaults(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tg = load_settings().channels.telegram
    assert tg.base_url == "https://api.telegram.org/bot"
    assert (tg.mode, tg.webhook_url, tg.webhook_port, tg.group_policy) == (
        "polling",
        "",
        8443,
        "mention",
    )
    assert tg.webhook_secret.get_secret_value() == "" and tg.allow_from == []


def test_file_and_environment(tmp_path, monkeypatch):
    config = tmp_path / "bot.toml"
    config.write_text(
        '[channels.telegram]\ntoken = "1:abc"\nmode = "webhook"\nwebhook_url = "https://x/y"\n'
        'webhook_secret = "hush"\ngroup_policy = "all"\nallow_from = ["@ann", "42"]\n'
    )
    monkeypatch.setenv("BOT_CHANNELS__TELEGRAM__WEBHOOK_PORT", "9000")
    tg = load_settings(config).channels.telegram
    assert (tg.mode, tg.webhook_url, tg.webhook_port, tg.group_policy) == (
        "webhook",
        "https://x/y",
        9000,
        "all",
    )
    assert tg.allow_from == ["@ann", "42"]
    assert "hush" not in repr(tg) and "1:abc" not in repr(tg)


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ('mode = "push"', "channels.telegram.mode"),
        ('group_policy = "some"', "channels.telegram.group_policy"),
        ("webhook_port = 70000", "channels.telegram.webhook_port"),
        ("webhoook_url = 'x'", "channels.telegram.webhoook_url"),
    ],
)
def test_bad_values_name_the_key(tmp_path, line, key):
    config = tmp_path / "bot.toml"
    config.write_text(f"[channels.telegram]\n{line}\n")
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        load_settings(config)


def test_example_config_documents_every_key():
    shown = defaults_shown(example_config(), Settings)  # the defaults commented out too
    example = tomllib.loads(shown)["channels"]["telegram"]
    assert set(example) == {
        "token",
        "base_url",
        "allow_from",
        "mode",
        "webhook_url",
        "webhook_secret",
        "group_policy",
        "streaming",
        "link_previews",
        "telegram_drafts",
    }


def test_platform_channels_builds_telegram_only_with_a_token(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert platform_channels(load_settings()) == []
    monkeypatch.setenv("BOT_CHANNELS__TELEGRAM__TOKEN", "1:abc")
    settings = load_settings()
    channels = platform_channels(settings)
    assert [type(c) for c in channels] == [TelegramChannel]
    daemon = build_daemon(settings)
    channel = daemon.channels["telegram"]
    assert isinstance(channel, TelegramChannel)
    assert isinstance(channel.state, KeyValueStore)  # the offset lives in the daemon's db


def test_file_url_follows_the_api_root():
    assert file_base_url("https://api.telegram.org/bot") == "https://api.telegram.org/file/bot"
    assert file_base_url("http://127.0.0.1:8081/bot") == "http://127.0.0.1:8081/file/bot"
    assert file_base_url("http://proxy/tg/bot{token}") == "http://proxy/tg/file/bot{token}"


async def test_a_token_with_a_trailing_space_in_the_file_connects(
    tmp_path, monkeypatch, fake_telegram
):
    """It was "token rejected" with no hint: the space went into the Bot API path."""
    monkeypatch.delenv("BOT_CHANNELS__TELEGRAM__TOKEN", raising=False)
    config = tmp_path / "bot.toml"
    config.write_text(
        f'[channels.telegram]\ntoken = "{fake_telegram.token} "\n'
        f'base_url = "{fake_telegram.base_url}"\n'
    )
    channel = TelegramChannel(load_settings(config).channels.telegram, poll_timeout=1)

    async def put(_msg):
        return None

    await channel.start(put)
    try:
        assert channel.connected
    finally:
        await channel.stop()
