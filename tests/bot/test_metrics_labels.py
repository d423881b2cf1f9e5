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


async def test_a_scrape_before_any_count_shows_every_family() -> None:
    """prometheus-client loads at the first count or scrape (after ready:); a scrape
    that comes first still lists every family, the readings and the refreshed gauge."""
    metrics = PrometheusMetrics()
    metrics.read_counters(lambda: [("bot_reminders_fired", "Reminders fired", 3.0)])

    async def depth() -> None:
        metrics.set_outbox_depth(2)

    metrics.refresh_before_scrape(depth)
    families = {
        f.name: f for f in text_string_to_metric_families((await metrics.render()).decode())
    }
    assert {"bot_messages_in", "bot_turn_seconds", "bot_model_calls", "bot_tool_calls"} <= set(
        families
    )
    assert families["bot_reminders_fired"].samples[0].value == 3.0
    assert families["bot_outbox_depth"].samples[0].value == 2.0
    metrics.message_in("test")  # counts land in the same registry
    text = (await metrics.render()).decode()
    assert 'bot_messages_in_total{channel="test"} 1.0' in text
