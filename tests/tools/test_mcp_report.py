"""`bot doctor` and `bot mcp list` connect to each configured MCP server and list its tools."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from bot.app import mcp_checks
from bot.ops import doctor
from tests.bot.test_doctor import _cli, _config, _dead_url
from tests.fakes.llm_server import FakeLLM
from tests.fakes.mcp_http import MCPHttpServer
from tests.fakes.open_meteo import FakeOpenMeteo

pytestmark = pytest.mark.slow

SECRET = "Bearer doctor-secret-value"


@pytest_asyncio.fixture
async def http_server() -> AsyncIterator[MCPHttpServer]:
    server = await MCPHttpServer().start()
    yield server
    await server.stop()


def _mcp_config(tmp_path: Path, llm: FakeLLM, weather: FakeOpenMeteo, url: str) -> Path:
    return _config(
        tmp_path,
        llm={"model": "openai/fake-model", "api_base": llm.url, "api_key": "sk-doctor-secret"},
        weather={"geocoding_url": weather.settings().geocoding_url},
        mcp={
            "servers": {
                "web": {"url": url, "headers": {"Authorization": SECRET}},
                "gone": {"url": _dead_url("/mcp"), "connect_timeout_s": 5},
                "off": {"tool_timeout_s": 5},
            }
        },
    )


async def test_doctor_lists_each_servers_tools_and_names_the_failing_one(
    tmp_path: Path, fake_llm: FakeLLM, http_server: MCPHttpServer
) -> None:
    async with FakeOpenMeteo() as weather:
        weather.add_place("Berlin", "Germany", 52.52, 13.41, "Europe/Berlin")
        config = _mcp_config(tmp_path, fake_llm, weather, http_server.url)
        checks = await doctor.run_checks(config, mcp_checks)
        code, out = await _cli("doctor", "--config", str(config))
    rows = {c.name: c for c in checks}
    assert rows["mcp web"].status == "ok"
    assert "mcp_web_echo" in rows["mcp web"].detail
    assert "skipped (schema): recursive" in rows["mcp web"].detail
    assert rows["mcp gone"].status == "failed" and rows["mcp gone"].fix
    assert "mcp off" not in rows  # neither command nor url: off, nothing to check
    assert code == 1 and "mcp web" in out and "mcp gone" in out
    assert "doctor-secret" not in out


async def test_mcp_list_shows_servers_states_and_tool_names(
    tmp_path: Path, fake_llm: FakeLLM, http_server: MCPHttpServer
) -> None:
    async with FakeOpenMeteo() as weather:
        config = _mcp_config(tmp_path, fake_llm, weather, http_server.url)
        code, out = await _cli("mcp", "list", "--config", str(config))
    assert code == 0, out
    lines = out.splitlines()
    assert "web (http): ready" in lines and "  mcp_web_echo" in lines
    assert "  (skipped: recursive, its schema cannot be cleaned)" in lines
    assert any(line.startswith("gone (http): failed") for line in lines)
    assert "off (-): off (no command or url)" in lines
    assert "doctor-secret" not in out
