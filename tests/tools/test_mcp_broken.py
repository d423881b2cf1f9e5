"""The MCP client against servers that misbehave: bytes that are not UTF-8, a stream
that stops answering, a child that exits at start, HTTP refusals, draft-07 schemas, a
typo in enabled_tools. Real servers each (tests/fakes/mcp_raw.py, mcp_spec.py,
mcp_refusing.py), the real SDK client.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import pytest

from bot.agent.toolbox import ToolCall, ToolContext
from bot.config.mcp import MCPServerSettings, MCPSettings
from bot.messages import ChatKey
from tests.fakes.mcp_refusing import RefusingServer
from tests.fakes.waiting import until
from tools.mcp.manager import MCPManager
from tools.mcp.report import checks, probe, render
from tools.registry import ToolRegistry

pytestmark = pytest.mark.slow

FAKES = Path(__file__).resolve().parents[1] / "fakes"
CTX = ToolContext(chat_key=ChatKey("test", "c1"), user_id="u1")


def raw(**overrides: Any) -> MCPServerSettings:
    values: dict[str, Any] = {
        "command": sys.executable,
        "args": [str(FAKES / "mcp_raw.py")],
        "tool_timeout_s": 1,
        "connect_timeout_s": 1,
    }
    return MCPServerSettings(**{**values, **overrides})


def spec(tools: list[dict[str, Any]], **overrides: Any) -> MCPServerSettings:
    values: dict[str, Any] = {
        "command": sys.executable,
        "args": [str(FAKES / "mcp_spec.py")],
        "env": {"FAKE_MCP_SPEC": json.dumps(tools)},
        "tool_timeout_s": 5,
    }
    return MCPServerSettings(**{**values, **overrides})


async def connected(registry: ToolRegistry, ping_s: float = 30, **servers: Any) -> MCPManager:
    settings = MCPSettings(servers=servers, retry_initial_s=0.05, ping_interval_s=ping_s)
    manager = MCPManager(settings, registry)
    manager.start()
    await until(lambda: all(s.status.state == "ready" for s in manager.servers.values()), 20)
    return manager


async def call(registry: ToolRegistry, name: str, args: Any = None, ctx: ToolContext = CTX):
    return await registry.execute(ToolCall("c1", name, args or {}), ctx)


async def test_a_byte_that_is_not_utf8_spoils_one_answer_not_the_server() -> None:
    """One Latin-1 byte on stdout killed the SDK's reader: the server stayed "ready" and
    every later call waited out its timeout, for good. It is read with a replacement
    character now, and the next call is answered as before."""
    registry = ToolRegistry()
    manager = await connected(registry, raw=raw(tool_timeout_s=3))
    try:
        latin1 = await call(registry, "mcp_raw_latin1")
        after = await call(registry, "mcp_raw_ok")
    finally:
        await manager.stop()
    assert (latin1.is_error, latin1.content) == (False, "caf\ufffd cr\ufffdme")
    assert (after.is_error, after.content) == (False, "fine")
    assert manager.counters()["raw"]["timeouts"] == 0


async def test_a_server_that_stops_answering_after_a_call_timed_out_is_reconnected(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A timed-out call followed by a timed-out ping is a lost connection: reconnected
    at once (counted, logged once), and the next call is answered by the new child.
    Ping timeouts were ignored: every call failed and the state said "ready"."""
    caplog.set_level(logging.WARNING, logger="tools.mcp.server")
    registry = ToolRegistry()
    manager = await connected(registry, raw=raw())
    server = manager.servers["raw"]
    try:
        wedged = await call(registry, "mcp_raw_wedge")
        assert wedged.is_error and "did not answer within 1 s" in wedged.content
        await until(lambda: server.counters.reconnects == 1 and server.status.state == "ready")
        after = await call(registry, "mcp_raw_ok")
    finally:
        await manager.stop()
    assert (after.is_error, after.content) == (False, "fine")
    lost = [r for r in caplog.records if "unanswered" in r.getMessage()]
    assert len(lost) == 1 and lost[0].levelno == logging.WARNING


async def test_a_server_that_answers_no_ping_twice_is_reconnected() -> None:
    """Two pings in a row unanswered, no call in flight: the idle connection is lost."""
    registry = ToolRegistry()
    manager = await connected(registry, ping_s=0.2, raw=raw())
    server = manager.servers["raw"]
    try:
        first = await call(registry, "mcp_raw_wedge_after")  # answered, then silence
        await until(lambda: server.counters.reconnects == 1 and server.status.state == "ready")
        after = await call(registry, "mcp_raw_ok")
    finally:
        await manager.stop()
    assert first.content == after.content == "fine"
    assert server.counters.timeouts == 0


async def test_a_child_that_exits_at_start_says_so_with_its_last_stderr_line() -> None:
    """It read "failed: AssertionError" (the stderr pipe's protocol was gone after EOF),
    in bot mcp list, bot doctor and /healthz alike."""
    script = "import sys; print('starting', file=sys.stderr); "
    script += "print('Error: GITHUB_TOKEN is not set', file=sys.stderr); sys.exit(1)"
    crashes = MCPServerSettings(command=sys.executable, args=["-c", script], connect_timeout_s=5)
    [report] = await probe(MCPSettings(servers={"crashes": crashes}))
    assert report.state == (
        "failed: the server exited at start; its stderr: starting | Error: GITHUB_TOKEN is not set"
    )
    [row] = checks([report])
    assert "GITHUB_TOKEN is not set" in row.detail and "AssertionError" not in row.detail


@pytest.mark.parametrize(
    ("status", "said"),
    [
        (401, "HTTP 401 Unauthorized: check the server's headers/token"),
        (403, "HTTP 403 Forbidden: check the server's headers/token"),
        (500, "HTTP 500 Internal Server Error: the server failed: see its logs"),
    ],
)
async def test_an_http_refusal_at_the_handshake_names_its_status(status: int, said: str) -> None:
    """401, 403 and 500 all read "Server returned an error response", no status."""
    refusing = await RefusingServer().start()
    try:
        settings = MCPServerSettings(url=refusing.url(status), connect_timeout_s=5)
        [report] = await probe(MCPSettings(servers={"web": settings}))
    finally:
        await refusing.stop()
    assert report.state.startswith(f"failed: {said}"), report.state


async def test_a_draft07_schema_still_lets_a_nullable_parameter_be_null() -> None:
    """zod's draft-07 tuple (``items`` a list) is not valid 2020-12: the check fell back
    to the wire view, which has no null, though the model was told "May be null."."""
    schema = {
        "type": "object",
        "properties": {
            "point": {"type": "array", "items": [{"type": "number"}, {"type": "number"}]},
            "size": {"type": "number", "minimum": 0, "exclusiveMinimum": True},
            "note": {"type": ["string", "null"]},
        },
        "required": ["note"],
    }
    registry = ToolRegistry()
    manager = await connected(registry, z=spec([{"name": "draw", "inputSchema": schema}]))
    try:
        wire = registry.definitions()[0]["function"]["parameters"]
        assert wire["properties"]["note"]["description"] == "May be null."
        null = await call(registry, "mcp_z_draw", {"note": None, "point": [1, 2]})
        zero = await call(registry, "mcp_z_draw", {"note": "x", "size": 0})
    finally:
        await manager.stop()
    assert not null.is_error, null.content
    assert json.loads(null.content) == {"note": None, "point": [1, 2]}
    assert zero.is_error and "size" in zero.content  # exclusiveMinimum still checked


async def test_audio_a_tool_returns_is_sent_with_its_extension(tmp_path: Path) -> None:
    """audio/wav arrived as audio-1.bin where the system's MIME table lacks it."""
    wav = {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}
    tools = [{"name": "say", "inputSchema": {}, "result": {"content": [wav]}}]
    registry = ToolRegistry()
    manager = await connected(registry, voice=spec(tools))
    ctx = ToolContext(chat_key=ChatKey("test", "c1"), user_id="u1", workspace=tmp_path)
    try:
        result = await call(registry, "mcp_voice_say", ctx=ctx)
    finally:
        await manager.stop()
    assert "is sent to the user as say-1.wav" in result.content, result.content
    assert [a.name for a in ctx.outgoing] == ["say-1.wav"]


async def test_a_typo_in_enabled_tools_is_shown_by_mcp_list_and_doctor() -> None:
    """It was only logged, and both silence the log."""
    tools = [{"name": n, "inputSchema": {}} for n in ("a", "b")]
    settings = MCPSettings(servers={"s": spec(tools, enabled_tools=["a", "zz"])})
    reports = await probe(settings)
    warning = "mcp.servers.s.enabled_tools names tools the server does not list: zz"
    assert render(reports) == f"s (stdio): ready\n  mcp_s_a\n  (warning: {warning} (a typo?))"
    [row] = checks(reports)
    assert warning in row.detail
