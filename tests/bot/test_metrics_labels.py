"""Tool-call counters: a model-chosen name never becomes a Prometheus label value."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from bot.agent.toolbox import ToolCall, ToolContext
from bot.messages import ChatKey
from bot.ops.metrics import CountingToolBox, PrometheusMetrics
from tools.loader import build_registry

CTX = ToolContext(chat_key=ChatKey("test", "chat"), user_id="u1")


async def _tool_labels(metrics: PrometheusMetrics) -> dict[tuple[str, str], float]:
    text = (await metrics.render()).decode()
    return {
        (s.labels["tool"], s.labels["outcome"]): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == "bot_tool_calls_total"
    }


async def test_unknown_tool_names_are_counted_as_one_label() -> None:
    metrics = PrometheusMetrics()
    box = CountingToolBox(build_registry(), metrics)
    for i in range(50):
        await box.execute(ToolCall(id=f"c{i}", name=f"invented_{i}", arguments={}), CTX)
    await box.execute(ToolCall(id="n", name=None, arguments={}), CTX)
    await box.execute(ToolCall(id="w", name="get_weather", arguments={}), CTX)
    labels = await _tool_labels(metrics)
    assert labels == {
        ("(unknown)", "error"): 50,
        ("(none)", "error"): 1,
        ("get_weather", "error"): 1,
    }
