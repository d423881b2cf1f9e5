"""A secret read from a file ends in a line break (a Kubernetes secret, ``$(cat key)``, a
CRLF .env), or a pasted one in a space. Kept, a Slack app token with one crashed
``bot run`` (aiohttp refused the header: every channel down, a traceback), an LLM key
with one was "server error (HTTP 500)" retried three times, and a Telegram token with a
trailing space was "token rejected" with no hint. Surrounding whitespace is now dropped
at load; a token with whitespace inside is refused, named, never shown. And a channel
whose start raises anything is that channel failing, not the daemon."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import pytest

from bot.app import build_daemon
from bot.config import load_settings
from bot.errors import ConfigError
from tests.conftest import make_settings
from tests.fakes.channel import FakeChannel
from tests.fakes.llm_server import FakeLLM

CREDENTIALS = [
    ("llm", "api_key"),
    ("search", "api_key"),
    ("media", "vision_api_key"),
    ("media", "transcription_api_key"),
    ("channels.telegram", "token"),
    ("channels.telegram", "webhook_secret"),
    ("channels.slack", "bot_token"),
    ("channels.slack", "app_token"),
    ("channels.slack", "signing_secret"),
    ("channels.discord", "token"),
]


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in [v for v in os.environ if v.startswith("BOT_")]:
        monkeypatch.delenv(name)


def _value(settings: Any, section: str, key: str) -> str:
    node = settings
    for part in [*section.split("."), key]:
        node = getattr(node, part)
    return str(node.get_secret_value())


def _variable(section: str, key: str) -> str:
    return "BOT_" + "__".join([*section.split("."), key]).upper()


@pytest.mark.parametrize(("section", "key"), CREDENTIALS)
@pytest.mark.parametrize("around", ["\n", "\r\n", " ", "\t \n"])
def test_whitespace_around_a_credential_is_dropped_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, section: str, key: str, around: str
) -> None:
    monkeypatch.setenv(_variable(section, key), "sk-Secret-123" + around)
    if section == "search":
        monkeypatch.setenv("BOT_SEARCH__BACKEND", "brave")
    assert _value(load_settings(None), section, key) == "sk-Secret-123"


@pytest.mark.parametrize(("section", "key"), CREDENTIALS)
def test_whitespace_around_a_credential_is_dropped_from_the_file(
    tmp_path: Path, section: str, key: str
) -> None:
    config = tmp_path / "bot.toml"
    extra = 'backend = "brave"\n' if section == "search" else ""
    config.write_text(f'[{section}]\n{extra}{key} = " sk-Secret-123\\n"\n', encoding="utf-8")
    assert _value(load_settings(config), section, key) == "sk-Secret-123"


@pytest.mark.parametrize(("section", "key"), CREDENTIALS)
def test_a_credential_with_whitespace_inside_is_refused_named_and_unshown(
    monkeypatch: pytest.MonkeyPatch, section: str, key: str
) -> None:
    monkeypatch.setenv(_variable(section, key), "sk-Secret\n-123")
    with pytest.raises(ConfigError) as info:
        load_settings(None)
    message = str(info.value)
    assert f"'{section}.{key}'" in message and "space or line break inside" in message
    assert "Secret" not in message


def test_a_telegram_token_with_a_trailing_space_in_the_file_is_the_token(
    tmp_path: Path,
) -> None:
    config = tmp_path / "bot.toml"
    config.write_text('[channels.telegram]\ntoken = "123456:ABC-def "\n', encoding="utf-8")
    assert load_settings(config).channels.telegram.token.get_secret_value() == "123456:ABC-def"


def test_a_store_path_keeps_its_inner_spaces(tmp_path: Path) -> None:
    config = tmp_path / "bot.toml"
    config.write_text('[store]\nurl = "sqlite:my data/bot.db\\n"\n', encoding="utf-8")
    assert load_settings(config).store.url.get_secret_value() == "sqlite:my data/bot.db"


async def test_an_llm_key_ending_in_a_line_break_is_sent_without_it(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    """It was "server error (HTTP 500)", three times, and "try again in a little while"."""
    settings = make_settings(tmp_path / "data", fake_llm.url, llm={"api_key": "sk-test-key\n"})
    channel = FakeChannel()
    daemon = build_daemon(settings, [channel])
    await daemon.start()
    try:
        reply = await channel.ask("hello")
        assert reply.text == "echo: hello"
        [request] = fake_llm.requests
        assert request.headers["Authorization"] == "Bearer sk-test-key"
    finally:
        await daemon.stop(timeout=2)


class BrokenStart(FakeChannel):
    """A channel whose client library raised its own error at start (not a ChannelError)."""

    async def start(self, put_inbound: Any) -> None:
        raise ValueError("Forbidden control character detected in headers")


async def test_a_channel_start_raising_anything_fails_that_channel_only(
    fake_llm: FakeLLM, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = make_settings(tmp_path / "data", fake_llm.url)
    broken, working = BrokenStart("broken"), FakeChannel("working")
    daemon = build_daemon(settings, [broken, working])
    with caplog.at_level(logging.INFO):
        await daemon.start()
    try:
        assert daemon.state == "ready" and daemon.failed_channels == {"broken"}
        said = [r.getMessage() for r in caplog.records]
        assert any(
            "channel broken failed to start: ValueError: Forbidden control" in line for line in said
        ), said
        assert any("ready: channels=working " in line for line in said), said
        assert (await working.ask("hello")).text == "echo: hello"
    finally:
        await daemon.stop(timeout=2)
