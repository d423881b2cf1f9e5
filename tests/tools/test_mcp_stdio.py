"""The MCP client against a real stdio MCP server child (tests/fakes/mcp_server.py).

Read-only checks share one server per module; tests that kill, change or break a
server start their own.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bot.agent.toolbox import ERROR_HINT, ToolCall, ToolContext
from bot.config.mcp import MCPServerSettings, MCPSettings
from bot.messages import ChatKey
from tests.fakes.mcp_retry import connects_after_retries
from tests.fakes.mcp_server import BASE_TOOLS
from tests.fakes.provider_rules import schema_violations
from tests.fakes.waiting import until
from tools.loader import build_registry
from tools.mcp.manager import MCPManager
from tools.mcp.report import checks, probe, render
from tools.registry import ToolRegistry

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

SCRIPT = str(Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py")
SDK_ALLOWLIST = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
CTX = ToolContext(chat_key=ChatKey("test", "c1"), user_id="u1")


def stdio(**overrides: Any) -> MCPServerSettings:
    values: dict[str, Any] = {"command": sys.executable, "args": [SCRIPT], "tool_timeout_s": 5}
    values.update(overrides)
    return MCPServerSettings(**values)


def manager_for(registry: ToolRegistry, **servers: MCPServerSettings) -> MCPManager:
    return MCPManager(MCPSettings(servers=servers, retry_initial_s=0.05), registry)


async def connected(registry: ToolRegistry, **servers: MCPServerSettings) -> MCPManager:
    manager = manager_for(registry, **servers)
    manager.start()
    await until(lambda: all(s.status.state == "ready" for s in manager.servers.values()), 20)
    return manager


async def call(registry: ToolRegistry, name: str, arguments: Any = None, ctx: ToolContext = CTX):
    return await registry.execute(ToolCall("c1", name, arguments or {}), ctx)


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def shared() -> AsyncIterator[tuple[ToolRegistry, MCPManager]]:
    registry = build_registry(extra_plugins=False)
    # It also writes a non-JSON line to stdout at start (FAKE_MCP_JUNK).
    manager = await connected(registry, fake=stdio(tool_timeout_s=0.5, env={"FAKE_MCP_JUNK": "1"}))
    yield registry, manager
    await manager.stop()


async def test_tools_are_listed_named_and_sorted_after_builtins(shared) -> None:
    registry, manager = shared
    names = [d["function"]["name"] for d in registry.definitions()]
    mcp = [n for n in names if n.startswith("mcp_")]
    assert names[: len(names) - len(mcp)] == sorted(n for n in names if not n.startswith("mcp_"))
    assert mcp == sorted(mcp) and names[-len(mcp) :] == mcp
    assert "mcp_fake_echo" in mcp and "mcp_fake_empty_schema" in mcp  # {} did not sink the list
    assert "mcp_fake_recursive" not in mcp  # uncleanable: skipped alone
    assert manager.states() == {"mcp:fake": "ready"}
    for definition in registry.definitions():
        if definition["function"]["name"].startswith("mcp_"):
            assert schema_violations(definition["function"]["parameters"]) == [], definition


async def test_read_only_hint_makes_a_tool_concurrency_safe(shared) -> None:
    registry, _ = shared
    assert registry.concurrency_safe("mcp_fake_echo")
    assert not registry.concurrency_safe("mcp_fake_slow")


async def test_calls_go_through_prepare_call(shared) -> None:
    registry, _ = shared
    assert (await call(registry, "mcp_fake_echo", {"text": "hi"})).content == "echo: hi"
    missing = await call(registry, "mcp_fake_echo", {})
    assert missing.is_error and "missing required parameter 'text'" in missing.content
    cast = await call(registry, "mcp_fake_nullable", '{"note": null, "count": "3"}')
    assert not cast.is_error
    assert json.loads(cast.content)["args"] == {"note": None, "count": 3}
    empty = await call(registry, "mcp_fake_empty_schema", None)
    assert json.loads(empty.content) == {"tool": "empty_schema", "args": {}}


def _bytes(path: str) -> bytes:
    return Path(path).read_bytes()


def _files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


async def test_an_image_a_tool_returns_is_forwarded_to_the_user(shared, tmp_path: Path) -> None:
    """Its bytes go with the answer (send_file's way), under the workspace's files folder."""
    registry, _ = shared
    ctx = ToolContext(chat_key=ChatKey("test", "c1"), user_id="u1", workspace=tmp_path)
    image = await call(registry, "mcp_fake_image", ctx=ctx)
    assert image.content == (
        "a chart\n[image: image/png, 8 bytes]\n"
        "[image 1 (8 bytes) is sent to the user as image-1.png]"
    )
    [sent] = ctx.outgoing
    assert (sent.name, sent.kind, sent.mime_type) == ("image-1.png", "photo", "image/png")
    assert Path(sent.file_id) == tmp_path / "chat_files" / "test-c1" / "mcp" / "image-1.png"
    assert _bytes(sent.file_id) == b"\x89PNG\r\n\x1a\n"


async def test_an_image_from_a_tool_named_with_a_path_stays_in_the_chats_folder(
    tmp_path: Path,
) -> None:
    """A server names its tools: '../../../../escaped' wrote outside the workspace and
    'charts/render' lost its image (no such folder). Both land in the chat's mcp folder,
    their names cleaned as the registry cleans them, and go with the answer."""
    registry = ToolRegistry()
    names = ["../../../../escaped", "charts/render"]
    evil = stdio(env={"FAKE_MCP_IMAGE_NAMES": ",".join(names)}, enabled_tools=names)
    manager = await connected(registry, evil=evil)
    workspace = tmp_path / "ws"
    ctx = ToolContext(chat_key=ChatKey("test", "c1"), user_id="u1", workspace=workspace)
    try:
        assert registry.names() == ["mcp_evil_____________escaped", "mcp_evil_charts_render"]
        results = [await call(registry, name, ctx=ctx) for name in registry.names()]
    finally:
        await manager.stop()
    assert [r.is_error for r in results] == [False, False], results
    assert "is sent to the user as ____________escaped-1.png" in results[0].content
    assert "is sent to the user as charts_render-1.png" in results[1].content
    folder = workspace / "chat_files" / "test-c1" / "mcp"
    assert [(Path(a.file_id), a.kind) for a in ctx.outgoing] == [
        (folder / "____________escaped-1.png", "photo"),
        (folder / "charts_render-1.png", "photo"),
    ]
    assert _files_under(tmp_path) == sorted(Path(a.file_id) for a in ctx.outgoing)  # only these
    assert all(_bytes(a.file_id) == b"\x89PNG\r\n\x1a\n" for a in ctx.outgoing)


async def test_results_error_results_and_timeouts(shared) -> None:
    registry, manager = shared
    image = await call(registry, "mcp_fake_image")
    assert image.content == "a chart\n[image: image/png, 8 bytes]"
    failed = await call(registry, "mcp_fake_fail")
    assert failed.is_error and failed.content.startswith("Error: the widget is broken")
    assert failed.content.endswith(ERROR_HINT)
    before = dict(manager.counters()["fake"])
    slow = await call(registry, "mcp_fake_slow", {"seconds": 5})
    assert slow.is_error and "did not answer within 0.5 s" in slow.content
    assert slow.content.endswith(ERROR_HINT)
    after = manager.counters()["fake"]
    assert after["timeouts"] == before["timeouts"] + 1
    assert after["errors"] == before["errors"] + 1
    # The session survives a timeout: the next call is answered.
    assert (await call(registry, "mcp_fake_echo", {"text": "still"})).content == "echo: still"


async def test_child_env_enabled_tools_and_workspaces(monkeypatch) -> None:
    """The child sees only its configured env; only enabled tools, only in its workspaces."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-daemon-secret")
    monkeypatch.setenv("BOT_LLM__API_KEY", "sk-daemon-secret")
    registry = ToolRegistry()
    settings = stdio(env={"SERVICE_TOKEN": "tok-123456"}, enabled_tools=["env", "echo"])
    manager = await connected(registry, w=settings.model_copy(update={"workspaces": ["lab"]}))
    lab = ToolContext(chat_key=ChatKey("test", "c1"), user_id="u1", workspace_name="lab")
    try:
        assert registry.names() == ["mcp_w_echo", "mcp_w_env"]
        assert registry.definitions("default") == []
        assert len(registry.definitions("lab")) == 2
        hidden = await call(registry, "mcp_w_env")
        assert hidden.is_error and "not found" in hidden.content
        names = set(json.loads((await call(registry, "mcp_w_env", ctx=lab)).content))
    finally:
        await manager.stop()
    assert "SERVICE_TOKEN" in names
    assert not names & {"OPENAI_API_KEY", "BOT_LLM__API_KEY"}
    assert names <= {"SERVICE_TOKEN", *SDK_ALLOWLIST, "LC_CTYPE"}  # LC_CTYPE: Python's own


async def test_killed_server_is_reconnected_the_call_retried_and_stop_ends_it(tmp_path) -> None:
    registry = ToolRegistry()
    manager = await connected(registry, k=stdio())
    try:
        pid = int((await call(registry, "mcp_k_pid")).content)
        os.kill(pid, signal.SIGKILL)  # dies while idle: the next calls reconnect (once), retry
        results = await asyncio.gather(
            *(call(registry, "mcp_k_echo", {"text": str(i)}) for i in range(3))
        )
        assert [r.content for r in results] == ["echo: 0", "echo: 1", "echo: 2"]
        assert manager.counters()["k"]["reconnects"] == 1
        # Dies mid-call: reconnected, and the one retry (on a new process) is answered,
        # because the tool says (readOnlyHint) that repeating it is safe.
        marker = str(tmp_path / "died-once")
        retried = await call(registry, "mcp_k_die_read_only", {"marker": marker})
        assert retried.content == "answered on the retry"
        assert manager.counters()["k"]["reconnects"] == 2
        new_pid = int((await call(registry, "mcp_k_pid")).content)
        assert new_pid != pid
    finally:
        await manager.stop()
    with pytest.raises(ProcessLookupError):  # shutdown ended the child
        os.kill(new_pid, 0)
    assert manager.states() == {"mcp:k": "stopped"} and "mcp_k_pid" not in registry


async def test_an_idle_dead_server_is_found_by_ping_and_replaced() -> None:
    registry = ToolRegistry()
    settings = MCPSettings(servers={"p": stdio()}, retry_initial_s=0.05, ping_interval_s=0.2)
    manager = MCPManager(settings, registry)
    manager.start()
    try:
        await until(lambda: manager.servers["p"].status.state == "ready", 20)
        pid = int((await call(registry, "mcp_p_pid")).content)
        os.kill(pid, signal.SIGKILL)
        # No call needed: the next ping finds the connection dead and reconnects.
        await until(lambda: manager.counters()["p"]["reconnects"] == 1, 20)
        await until(lambda: manager.servers["p"].status.state == "ready", 20)
        assert int((await call(registry, "mcp_p_pid")).content) != pid
    finally:
        await manager.stop()


async def test_tools_list_changed_refreshes_the_definitions(shared) -> None:
    registry, _ = shared
    before = [d["function"]["name"] for d in registry.definitions()]  # cached now
    assert "mcp_fake_late" not in before
    assert (await call(registry, "mcp_fake_add_tool")).content == "added"
    await until(lambda: "mcp_fake_late" in registry, 10)
    after = [d["function"]["name"] for d in registry.definitions()]
    assert "mcp_fake_late" in after and after.index("mcp_fake_late") > after.index("final_result")
    assert (await call(registry, "mcp_fake_late")).content == "late tool ran"


def _relisting() -> bool:
    """A re-listing of the tools is running or waiting to."""
    coros = (t.get_coro() for t in asyncio.all_tasks() if not t.done())
    names = {getattr(c, "__qualname__", "") for c in coros}
    return bool(names & {"MCPServer.refresh", "MCPServer._relist_while_wanted"})


async def test_a_server_saying_its_tools_changed_over_and_over_is_relisted_once_or_twice(
    shared, caplog
) -> None:
    registry, _ = shared
    caplog.set_level(logging.INFO, logger="tools.mcp.server")
    assert (await call(registry, "mcp_fake_changes", {"times": 50})).content == "changes: done"
    assert (await call(registry, "mcp_fake_echo", {"text": "x"})).content == "echo: x"
    await until(lambda: not _relisting(), 10)
    relisted = [r for r in caplog.records if "tool list changed" in r.getMessage()]
    assert 1 <= len(relisted) <= 10  # not 50 re-listings (each re-installs every tool)
    assert "mcp_fake_echo" in registry


async def test_a_server_asking_for_sampling_or_elicitation_is_told_no_at_once(shared) -> None:
    """The bot has no model or person to lend a server mid-call: the SDK refuses at once
    and the server's tool goes on (here it says what it was told)."""
    registry, _ = shared
    sampled = await call(registry, "mcp_fake_sample")
    assert sampled.content == "sample: refused (Sampling not supported)"
    elicited = await call(registry, "mcp_fake_elicit")
    assert elicited.content == "elicit: refused (Elicitation not supported)"


async def test_junk_on_stdout_is_survived(shared, caplog) -> None:
    """The shared server wrote junk before its first message; this call writes more."""
    caplog.set_level(logging.WARNING)
    registry, _ = shared
    assert (await call(registry, "mcp_fake_junk")).content == "survived"
    assert (await call(registry, "mcp_fake_echo", {"text": "ok"})).content == "echo: ok"
    await until(lambda: "unreadable" in caplog.text)


async def test_a_server_that_never_starts_is_retried_and_fails_calls_cleanly() -> None:
    registry = ToolRegistry()
    manager = manager_for(
        registry,
        dead=stdio(args=["-c", "raise SystemExit(7)"]),
        missing=stdio(command="/nonexistent/mcp-server"),
    )
    manager.start()
    try:
        dead, missing = manager.servers["dead"], manager.servers["missing"]
        await until(lambda: dead.status.attempts >= 2 and missing.status.attempts >= 2, 20)
        states = manager.states()
        assert states["mcp:dead"].startswith(("failed", "connecting"))
        assert states["mcp:missing"].startswith(("failed", "connecting"))
        assert len(registry) == 0
        outcome = await dead.call("echo", {})
        assert outcome.is_error and "unavailable" in outcome.text
    finally:
        await manager.stop()


async def test_a_call_that_died_with_the_server_is_not_sent_again(tmp_path) -> None:
    """Neither readOnlyHint nor idempotentHint: the server may have done it already."""
    registry = ToolRegistry()
    manager = await connected(registry, k=stdio())
    try:
        marker = tmp_path / "died-once"
        died = await call(registry, "mcp_k_die", {"marker": str(marker)})
        assert died.is_error and "not safe to repeat automatically" in died.content
        assert "answered on the retry" not in died.content
        assert marker.exists()  # the server had the call when it went away
        back = await call(registry, "mcp_k_echo", {"text": "back"})
        assert back.content == "echo: back"  # the next call finds a fresh server
    finally:
        await manager.stop()


async def test_a_huge_result_is_cut_before_it_is_kept(shared) -> None:
    registry, _ = shared
    big = await call(registry, "mcp_fake_big", {"size": 250_000})
    assert not big.is_error and len(big.content) == 100_000
    assert big.content.endswith("characters (mcp.max_result_chars)]")


@pytest.mark.timeout(60)  # without the caps the branching schema alone runs for hours
async def test_a_flood_of_tools_and_a_branching_schema_are_capped_and_logged(caplog) -> None:
    registry = build_registry(extra_plugins=False)
    builtins = set(registry.names())
    server = stdio(env={"FAKE_MCP_TOOLS": "300", "FAKE_MCP_BLOWUP": "12"})
    settings = MCPSettings(servers={"x": server}, retry_initial_s=0.05, max_tools_per_server=200)
    manager = MCPManager(settings, registry)
    with caplog.at_level(logging.WARNING):
        manager.start()
        try:
            await until(lambda: manager.servers["x"].status.state == "ready", 20)
            listed = len(manager.servers["x"].status.tools)
            assert listed == len(BASE_TOOLS) + 301 and manager.capped == {"x": listed - 200}
            assert len(manager.tool_names("x")) == 200 - 2  # recursive and blowup refused
            assert "mcp_x_blowup" not in registry
            offered = [d["function"]["name"] for d in registry.definitions()]
            assert len(offered) == 128 and builtins <= set(offered)
        finally:
            await manager.stop()
    assert "'blowup' skipped: the schema inlines to more than 10000 nodes" in caplog.text
    assert f"lists {listed} tools; only the first 200 are installed" in caplog.text
    assert "only the first 128 are offered to the model" in caplog.text


async def test_doctor_warns_about_tools_left_out_by_the_cap() -> None:
    server = stdio(env={"FAKE_MCP_TOOLS": "100"})
    reports = await probe(MCPSettings(servers={"x": server}, max_tools_per_server=20))
    [row] = checks(reports)
    left_out = len(BASE_TOOLS) + 100 - 20
    assert row.status == "ok"
    assert f"warning: {left_out} more listed tools not installed" in row.detail
    assert "mcp.servers.x.enabled_tools" in render(reports)


async def _colliding_names(first: str, a_lists: str) -> dict[str, str]:
    """Model-facing name -> what calling it answers, for servers ``a`` (tools ``b_c``,
    ``x.y``, ``x_y`` in the order of ``a_lists``) and ``a_b`` (tool ``c``), connected
    ``first`` first, then ``a`` re-listed (as after ``tools/list_changed``)."""
    registry = ToolRegistry()
    manager = manager_for(
        registry,
        a=stdio(env={"FAKE_MCP_NAMES": a_lists, "FAKE_MCP_LABEL": "a"}),
        a_b=stdio(env={"FAKE_MCP_NAMES": "c", "FAKE_MCP_LABEL": "a_b"}),
    )
    try:
        for name in (first, *(s for s in manager.servers if s != first)):
            assert await manager.servers[name].connect()
        await manager.servers["a"].refresh()
        ours = [n for s in manager.servers for n in manager.tool_names(s)]
        return {
            n: (await call(registry, n)).content
            for n in ours
            if manager.remote_name(n) in ("b_c", "x.y", "x_y", "c")
        }
    finally:
        await manager.stop()


async def test_colliding_names_do_not_depend_on_which_server_came_first() -> None:
    """``a``'s ``b_c`` and ``a_b``'s ``c`` both clean to ``mcp_a_b_c``: the plain name is
    ``a_b``'s whoever connects first, and ``x_y`` (no cleaning needed) keeps its own
    wherever ``x.y`` is listed; the others end in a hash, the same one every time."""
    one = await _colliding_names("a", "b_c,x.y,x_y")
    two = await _colliding_names("a_b", "x_y,x.y,b_c")
    assert one == two and len(one) == 4
    assert one["mcp_a_b_c"] == "c on a_b" and one["mcp_a_x_y"] == "x_y on a"
    assert sorted(one.values()) == ["b_c on a", "c on a_b", "x.y on a", "x_y on a"]


async def test_a_servers_stderr_goes_to_its_logger_never_onto_the_terminal(capfd, caplog) -> None:
    """20,000 lines: read as fast as written (the call answers), a burst of them logged
    under the server's name, the rest counted; none on the daemon's own stderr (in
    ``bot chat``, the prompt)."""
    caplog.set_level(logging.INFO, logger="tools.mcp.stderr")
    registry = ToolRegistry()
    manager = await connected(registry, loud=stdio(tool_timeout_s=60))
    try:
        answer = await call(registry, "mcp_loud_chatty", {"lines": 20_000})
        assert answer.content == "chatty: done"
    finally:
        await manager.stop()
    assert "stderr line" not in capfd.readouterr().err
    lines = [r for r in caplog.records if r.name == "tools.mcp.stderr.loud"]
    assert lines and lines[0].getMessage().startswith("stderr line 0 stderr line 0")
    assert lines[0].levelno == logging.INFO and len(lines) < 500
    logged = sum(1 for r in lines if "stderr line" in r.getMessage())
    counted = re.findall(r"(\d+) (?:more )?lines (?:before it )?not logged", caplog.text)
    assert counted and logged + sum(map(int, counted)) == 20_000  # every line was read


async def test_mcp_list_and_the_cap_do_not_follow_the_servers_listing_order() -> None:
    """A server listing its tools in another order each time (a hash map's) installs the
    same tools, shown in the same order, after every restart."""
    cap = len(BASE_TOOLS) + 1  # room for one of the three extra tools

    async def listed_as(order: str) -> str:
        server = stdio(env={"FAKE_MCP_NAMES": order})
        reports = await probe(MCPSettings(servers={"x": server}, max_tools_per_server=cap))
        return render(reports)

    one, two = await listed_as("zeta,alpha,mid"), await listed_as("mid,zeta,alpha")
    assert one == two
    shown = [line.strip() for line in one.splitlines() if line.startswith("  mcp_")]
    assert shown == sorted(shown) and "mcp_x_alpha" in shown and "mcp_x_zeta" not in shown


async def test_a_server_given_up_on_at_the_handshake_leaves_no_descriptor_open() -> None:
    """Its stderr pipe is closed with it, even when the connecting task is cancelled."""
    hangs = stdio(args=["-c", "import time; time.sleep(60)"], connect_timeout_s=0.3)
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(5):
        manager = manager_for(ToolRegistry(), hangs=hangs)
        assert not await manager.servers["hangs"].connect()
        await manager.stop()
    assert len(os.listdir("/proc/self/fd")) <= before


def _after(wait: str) -> str:
    """A stdio server that runs ``wait`` (Python) before it starts."""
    return f"import os, sys, time\n{wait}os.execv(sys.executable, [sys.executable, {SCRIPT!r}])\n"


async def test_a_server_slower_than_its_handshake_timeout_is_retried(tmp_path: Path) -> None:
    """Slow the first time (``npx`` fetching its package), quick the next: the server
    given up on at the handshake is retried, and its tools come."""
    marker = str(tmp_path / "started-once")
    first = f"if not os.path.exists({marker!r}):\n    open({marker!r}, 'w').close()\n"
    # 3 s: the retried start (Python importing the mcp SDK) must fit it on a loaded
    # machine; at 1 s a full suite on a slow 2-core machine saw every retry time out too.
    script = _after(first + "    time.sleep(30)\n")
    await connects_after_retries(stdio(args=["-c", script], connect_timeout_s=3))


async def test_a_server_always_slower_than_its_handshake_timeout_gets_longer_each_retry() -> None:
    """Every start takes longer than ``connect_timeout_s`` (a loaded machine): each retry
    allowed the same time and none connected; each now allows twice the last, up to
    four times, and the server connects."""
    await connects_after_retries(
        stdio(args=["-c", _after("time.sleep(1.2)\n")], connect_timeout_s=1)
    )
