"""The web tools in the daemon: their settings, a workspace that turns them off, and
their calls counted by outcome in /metrics."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from bot.agent.toolbox import ToolCall, ToolContext
from bot.app import build_daemon
from bot.config import Settings
from bot.config.webtools import FetchSettings, SearchSettings
from bot.messages import ChatKey
from tests.conftest import make_settings
from tests.fakes.channel import FakeChannel
from tests.fakes.llm_server import FakeLLM
from tools.loader import build_registry


def test_defaults() -> None:
    search, fetch = Settings().search, Settings().fetch
    assert (search.backend, search.max_results, search.api_key.get_secret_value()) == (
        "duckduckgo",
        5,
        "",
    )
    assert (fetch.max_bytes, fetch.timeout_s, fetch.max_redirects) == (2_000_000, 15, 5)
    assert fetch.allow_private == [] and fetch.user_agent


@pytest.mark.parametrize(
    ("section", "values", "message"),
    [
        (SearchSettings, {"backend": "brave"}, "needs [search] api_key"),
        (SearchSettings, {"backend": "tavily"}, "needs [search] api_key"),
        (SearchSettings, {"backend": "searxng"}, "needs [search] searxng_url"),
        (SearchSettings, {"backend": "google"}, "duckduckgo"),
        (FetchSettings, {"allow_private": ["wiki lan"]}, "neither a host name"),
    ],
)
def test_bad_settings_are_refused(section: type, values: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(message)):
        section(**values)
    FetchSettings(allow_private=["wiki.lan", "10.0.0.0/8", "127.0.0.1", "fd00::/8"])


async def test_a_workspace_can_turn_the_web_tools_off() -> None:
    registry = build_registry(extra_plugins=False)
    registry.disable("kids", ["web_fetch", "web_search"])
    names = {d["function"]["name"] for d in registry.definitions("kids")}
    assert "web_fetch" not in names and "web_search" not in names and "final_result" in names
    assert {"web_fetch", "web_search"} <= {
        d["function"]["name"] for d in registry.definitions("default")
    }
    ctx = ToolContext(ChatKey("cli", "1"), "u", workspace_name="kids")
    result = await registry.execute(ToolCall("c", "web_fetch", {"url": "https://x.org"}), ctx)
    assert result.is_error and "not found" in result.content
    with pytest.raises(ValidationError, match="final_result cannot be disabled"):
        Settings(workspaces={"kids": {"disabled_tools": ["final_result"]}})


def test_a_misspelled_disabled_tool_is_named_at_start_up(caplog: pytest.LogCaptureFixture) -> None:
    """It turns nothing off, so the log says which entry and the tool likely meant; the
    config still loads (it did before), and an MCP tool's name (registered later) passes."""
    from bot.app_agent import _tool_registry

    settings = Settings(
        workspaces={
            "kids": {"disabled_tools": ["web-fetch", "websearch", "web_fetch", "mcp_wiki_read"]}
        }
    )
    with caplog.at_level(logging.WARNING):
        registry = _tool_registry(settings)
    said = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(said) == 2, said
    assert said[0].startswith(
        "[workspaces.kids] disabled_tools: 'web-fetch' names no tool; did you mean 'web_fetch'?"
    )
    assert "'websearch' names no tool; did you mean 'web_search'?" in said[1]
    names = {d["function"]["name"] for d in registry.definitions("kids")}
    assert "web_fetch" not in names and "web_search" in names


async def test_the_daemon_wires_settings_service_and_metrics(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    settings = make_settings(
        tmp_path / "data",
        fake_llm.url,
        workspaces={"routes": {"*": "default"}, "default": {"disabled_tools": ["web_fetch"]}},
        fetch={"allow_private": ["127.0.0.1"]},
    )
    daemon = build_daemon(settings, [FakeChannel()])
    await daemon.start()
    try:
        side = daemon.agent.built
        assert side is not None
        assert "web_fetch" not in {d["function"]["name"] for d in side.tools.definitions()}
        assert "web_search" in {d["function"]["name"] for d in side.tools.definitions()}
        web = side.runner._services.web
        assert web is not None
        with pytest.raises(Exception, match="only http and https"):
            await web.fetch("file:///etc/passwd")
        text = (await daemon.metrics.render()).decode()
        assert 'bot_web_calls_total{outcome="refused",tool="web_fetch"} 1.0' in text
    finally:
        await daemon.stop()
