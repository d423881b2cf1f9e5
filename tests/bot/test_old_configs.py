"""Configs an earlier ``bot init`` wrote load under this release, and a key that went is
accepted with a deprecation warning naming what replaced it.

``old_configs/<commit>.toml`` is what ``bot init`` wrote at that commit of main (``git show
<commit>:deploy/bot.example.toml``, which a test kept equal to ``bot init``'s output;
before that file existed, ``bot/templates/bot.example.toml``): the first release, the
first with platform channels, each release that added sections, and the last before
``webhook_port`` and ``http_port`` left the example.
"""

from __future__ import annotations

import logging
import re
import tomllib
from pathlib import Path

import pytest

from bot.config.deprecated import deprecated_paths
from bot.config.settings import Settings, load_settings

OLD_CONFIGS = sorted((Path(__file__).parent / "old_configs").glob("*.toml"))


def _deprecation_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and "deprecated" in r.getMessage()
    ]


def _set_in(text: str) -> set[str]:
    """The deprecated keys the TOML ``text`` sets."""
    data = tomllib.loads(text)
    found = set()
    for path, _ in deprecated_paths(Settings):
        node = data
        for part in path.split("."):
            node = node.get(part, {}) if isinstance(node, dict) else {}
        if node != {}:
            found.add(path)
    return found


@pytest.mark.parametrize("config", OLD_CONFIGS, ids=lambda p: p.stem)
@pytest.mark.parametrize("tokens", ["as written", "filled in"])
def test_a_config_an_earlier_bot_init_wrote_still_loads(
    config: Path, tokens: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    text = config.read_text(encoding="utf-8")
    if tokens == "filled in":  # as its owner would: every channel on
        text = re.sub(r'(?m)^(\w*(?:token|secret)) = ""', r'\1 = "xoxb-1-filled"', text)
    path = tmp_path / "bot.toml"
    path.write_text(text, encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        settings = load_settings(path)
    assert settings.channels.telegram.base_url == "https://api.telegram.org/bot"
    warned = _deprecation_warnings(caplog)
    assert sorted(_set_in(text)) == sorted(
        re.search(r"'([\w.]+)'", line).group(1)  # type: ignore[union-attr]
        for line in warned
    )
    assert "channels.slack.http_port" in _set_in(text)  # every one of them wrote it


def test_a_deprecated_key_is_said_with_its_replacement_from_the_file_and_the_environment(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "bot.toml"
    path.write_text("[channels.telegram]\nwebhook_port = 8443\n", encoding="utf-8")
    monkeypatch.setenv("BOT_CHANNELS__SLACK__HTTP_PORT", "3000")
    with caplog.at_level(logging.WARNING):
        load_settings(path)
    assert _deprecation_warnings(caplog) == [
        f"config {path}: 'channels.telegram.webhook_port': deprecated and ignored; the webhook"
        " is served by the [web] app: set [web] port and host, and remove this key",
        f"config {path}: BOT_CHANNELS__SLACK__HTTP_PORT: deprecated and ignored; the Events"
        " API route is served by the [web] app at http_path: set [web] port and host, and"
        " remove this key",
    ]


def test_a_config_this_release_writes_says_nothing_deprecated(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from bot.app import example_config

    path = tmp_path / "bot.toml"
    path.write_text(example_config(), encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        load_settings(path)
    assert _deprecation_warnings(caplog) == []
