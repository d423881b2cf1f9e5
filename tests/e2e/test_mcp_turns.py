"""MCP tools in whole turns: fake channel -> daemon -> real litellm -> fake LLM (strict about
MCP tool schemas) -> an MCP tool on a real stdio server child -> final_result; plus the
daemon's /healthz, /metrics and shutdown with MCP servers configured."""

from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.bot.test_web import _get, _metrics, _value
from tests.conftest import DaemonFactory
from tests.fakes.llm_server import FakeLLM
from tests.fakes.waiting import until

pytestmark = pytest.mark.slow

SCRIPT = str(Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py")


def servers(**extra: dict[str, Any]) -> dict[str, Any]:
    fake = {"command": sys.executable, "args": [SCRIPT]}
    return {"servers": {"fake": fake, **extra}, "retry_initial_s": 0.05}


async def test_mcp_tool_call_through_a_turn_health_metrics_and_stop(
    daemon_factory: DaemonFactory, fake_llm: FakeLLM
) -> None:
    fake_llm.strict = True
    fake_llm.strict_tools = "mcp_"  # a dirty MCP schema would be a 400 here
    broken = {"command": sys.executable, "args": ["-c", "raise SystemExit(7)"]}
    marker = f"mcp-never-answers-{uuid.uuid4().hex}"
    hangs = {"command": sys.executable, "args": ["-c", f"import time; time.sleep(60)  # {marker}"]}
    daemon, chat = await daemon_factory(
        mcp=servers(broken=broken, hangs=hangs), context={"max_tool_result_chars": 500}
    )
    # Start-up did not wait for any server: ready now, the servers still on their way.
    assert daemon.state == "ready"
    await until(lambda: "mcp_fake_echo" in daemon.tools, 30)

    fake_llm.reply_tool_calls([("mcp_fake_echo", {"text": "hi"}), ("mcp_fake_big", {"size": 5000})])
    fake_llm.reply_tool_calls([("final_result", {"answer": "done"})])
    reply = await chat.ask("use the tools")
    assert reply.text == "done" and fake_llm.rejected == []
    request = fake_llm.requests[-2].json
    names = [t["function"]["name"] for t in request["tools"]]
    assert names.index("final_result") < names.index("mcp_fake_echo")  # built-ins first
    assert "mcp_fake_empty_schema" in names and "mcp_fake_recursive" not in names
    tool_msgs = [
        m["content"] for m in fake_llm.requests[-1].json["messages"] if m["role"] == "tool"
    ]
    assert tool_msgs[0] == "[tool output: mcp_fake_echo]\necho: hi"
    assert "saved to" in tool_msgs[1] and len(tool_msgs[1]) < 5000  # offloaded

    status, body = await _get(daemon, "/healthz")
    assert status == 200 and body["failing"] == [], body  # optional parts never fail it
    assert body["mcp:fake"] == "ready"
    assert body["mcp:broken"].startswith(("failed", "connecting"))
    assert body["mcp:hangs"] == "connecting"
    samples = await _metrics(daemon)
    assert _value(samples, "bot_mcp_calls_total", server="fake") == 2
    assert _value(samples, "bot_mcp_errors_total", server="fake") == 0

    pid = int((await daemon.tools.execute(_call("mcp_fake_pid"), _ctx())).content)
    assert _processes_with(marker)  # the child that never answers is running
    await daemon.stop(timeout=2)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert _processes_with(marker) == []  # ... and shutdown ended it too


def _processes_with(marker: str) -> list[int]:
    """Pids whose command line holds ``marker`` (Linux /proc)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and marker in (proc / "cmdline").read_text(errors="replace"):
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def _call(name: str) -> Any:
    from bot.agent.toolbox import ToolCall

    return ToolCall("c9", name, {})


def _ctx() -> Any:
    from bot.agent.toolbox import ToolContext
    from bot.messages import ChatKey

    return ToolContext(chat_key=ChatKey("test", "c1"), user_id="u1")


async def test_an_image_an_mcp_tool_returns_reaches_the_user_with_the_answer(
    daemon_factory: DaemonFactory, fake_llm: FakeLLM
) -> None:
    from tests.fakes.channel import FileChannel

    channel = FileChannel()
    daemon, _ = await daemon_factory(channel=channel, mcp=servers())
    await until(lambda: "mcp_fake_image" in daemon.tools, 30)
    fake_llm.reply_tool_calls([("mcp_fake_image", {})])
    fake_llm.reply_tool_calls([("final_result", {"answer": "Here is the chart."})])
    reply = await channel.ask("draw it")
    assert reply.text == "Here is the chart."
    await channel.wait_for(lambda _: len(channel.uploads) == 1)
    [(key, name, data, _)] = channel.uploads
    assert (key, name, data) == (reply.key, "image-1.png", b"\x89PNG\r\n\x1a\n")


async def test_an_image_from_a_tool_named_like_a_path_is_delivered_from_the_chats_folder(
    daemon_factory: DaemonFactory, fake_llm: FakeLLM
) -> None:
    """An MCP tool named '../../../../escaped' wrote its image outside the workspace and
    one named 'charts/render' lost it: both now reach the user, kept in the chat's folder."""
    from tests.fakes.channel import FileChannel

    channel = FileChannel()
    named = ["../../../../escaped", "charts/render"]
    evil = {"command": sys.executable, "args": [SCRIPT], "enabled_tools": named}
    evil["env"] = {"FAKE_MCP_IMAGE_NAMES": ",".join(named)}
    mcp = {"servers": {"evil": evil}, "retry_initial_s": 0.05}
    daemon, _ = await daemon_factory(channel=channel, mcp=mcp)
    tools = ["mcp_evil_____________escaped", "mcp_evil_charts_render"]
    await until(lambda: all(t in daemon.tools for t in tools), 30)
    fake_llm.reply_tool_calls([(tools[0], {}), (tools[1], {})])
    fake_llm.reply_tool_calls([("final_result", {"answer": "Two charts."})])
    reply = await channel.ask("draw them")
    assert reply.text == "Two charts."
    await channel.wait_for(lambda _: len(channel.uploads) == 2)
    names = ["____________escaped-1.png", "charts_render-1.png"]
    assert sorted(name for _, name, _, _ in channel.uploads) == names
    data = daemon.workspaces.path().parents[1]
    mcp_folder = daemon.workspaces.path() / "chat_files" / "test-c1" / "mcp"
    written = sorted(p for p in data.rglob("*.png") if p.is_file())
    assert written == [mcp_folder / name for name in names]


async def test_a_key_in_an_mcp_url_stays_out_of_health_and_status(
    daemon_factory: DaemonFactory, fake_llm: FakeLLM
) -> None:
    """/healthz and /status need no login: a server's error, which quotes its URL, is
    shown there with the URL's query values and a key in its path masked, as in the log."""
    import asyncio

    from tests.fakes.web_sites import FakeSite

    key, path_key = "SUPERSECRET0123456789", "pk4Rt9ZxQ2mN7vL1"
    async with FakeSite() as site:
        page = site.page(f"/s/{path_key}/sse", "bad key", "text/plain", status=401)
        url = f"{page}?api_key={key}"
        search = {"url": url, "connect_timeout_s": 3}
        daemon, _ = await daemon_factory(mcp={"servers": {"search": search}})

        async def health() -> dict[str, Any]:
            while True:  # polls the endpoint the operator reads
                body = dict((await _get(daemon, "/healthz"))[1])
                if str(body["mcp:search"]).startswith("failed"):
                    return body
                await asyncio.sleep(0.05)

        shown = await asyncio.wait_for(health(), 30)
        status = (await _get(daemon, "/status"))[1]
    assert "401" in shown["mcp:search"] and "api_key=***" in shown["mcp:search"]
    assert key not in str(shown) and key not in str(status)
    assert path_key not in str(shown) and path_key not in str(status)
    assert "/s/***/sse" in shown["mcp:search"]
