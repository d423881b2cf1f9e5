"""Caps on what one model response may make the daemon do."""

from __future__ import annotations

from typing import Any, ClassVar

from bot.agent.toolbox import ToolContext
from bot.messages import ChatKey
from tests.conftest import DaemonFactory
from tests.fakes.llm_server import FakeLLM
from tools.base import Tool

KEY = ChatKey("test", "c1", None)


class CountingTool(Tool):
    name = "count_me"
    description = "Counts its calls."
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}
    read_only = True
    _plugin_discoverable = False

    def __init__(self) -> None:
        self.calls = 0

    async def execute(self, ctx: ToolContext, *args: Any, **kwargs: Any) -> str:
        self.calls += 1
        return "counted"


async def test_tool_calls_beyond_the_cap_are_refused_not_run(
    daemon_factory: DaemonFactory, fake_llm: FakeLLM
) -> None:
    daemon, chat = await daemon_factory(agent={"max_tool_calls_per_step": 3})
    tool = CountingTool()
    daemon.tools.register(tool, builtin=False)
    fake_llm.reply_tool_calls([("count_me", {})] * 5)
    fake_llm.reply_tool_calls([("final_result", {"answer": "done"})])
    assert (await chat.ask("count")).text == "done"
    assert tool.calls == 3
    results = [m["content"] for m in await daemon.sessions.history(KEY) if m["role"] == "tool"]
    assert len(results) == 6  # every call has its result, so the pairing stays legal
    assert sum("counted" in r for r in results) == 3
    refused = [r for r in results[:5] if "counted" not in r]
    assert len(refused) == 2
    assert all("Error" in r and "at most 3 tool calls" in r for r in refused)


def test_the_default_cap_is_sixteen() -> None:
    from bot.config import AgentSettings

    assert AgentSettings().max_tool_calls_per_step == 16
