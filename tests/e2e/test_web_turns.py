"""The web tools in a whole turn: the model calls them, the daemon's own settings
reach them, and what the model reads back is framed, defused and, for a long page,
offloaded like any large tool result."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.fakes.web_sites import FakeSearch, FakeSite, Hit

FIXTURES = Path(__file__).parent.parent / "tools" / "web_fixtures"


def tool_messages(request: Any) -> list[str]:
    return [m["content"] for m in request.json["messages"] if m["role"] == "tool"]


async def test_a_long_page_is_fetched_framed_and_offloaded(
    daemon_factory: Any, fake_llm: Any, fake_site: FakeSite, loopback_only: list[str]
) -> None:
    article = (
        "<html><body><article><h1>Tides</h1>"
        + "".join(
            f"<p>Paragraph {n}: the tide tables for the harbour list high and low water.</p>"
            for n in range(600)
        )
        + "</article></body></html>"
    )
    url = fake_site.page("/tides", article)
    _daemon, chat = await daemon_factory(fetch={"allow_private": ["127.0.0.1"]})
    fake_llm.reply_tool_calls([("web_fetch", {"url": url})])
    fake_llm.reply_tool_calls([("final_result", {"answer": "high water at noon"})])
    assert (await chat.ask("when is high water?")).text == "high water at noon"
    [content] = tool_messages(fake_llm.requests[1])
    assert content.startswith("[tool output: web_fetch]\n[Full output (")
    assert "saved to" in content and "[external content " in content
    saved = Path(content.split("saved to ", 1)[1].split(";", 1)[0])
    full = await asyncio.to_thread(saved.read_text, encoding="utf-8")
    assert "Paragraph 599: the tide tables" in full
    assert loopback_only == ["127.0.0.1"]


async def test_injection_and_refusal_reach_the_model_as_data(
    daemon_factory: Any, fake_llm: Any, fake_site: FakeSite, loopback_only: list[str]
) -> None:
    url = fake_site.page("/cake", (FIXTURES / "injection.html").read_bytes())
    _daemon, chat = await daemon_factory(fetch={"allow_private": ["127.0.0.1"]})
    fake_llm.reply_tool_calls(
        [("web_fetch", {"url": url}), ("web_fetch", {"url": "http://169.254.169.254/"})]
    )
    fake_llm.reply_tool_calls([("final_result", {"answer": "a lemon cake"})])
    assert (await chat.ask("read this recipe")).text == "a lemon cake"
    page, refused = tool_messages(fake_llm.requests[1])
    assert "Lemon cake" in page
    assert "[Runtime Context" not in page and "[quoted text: runtime context" in page
    assert "[end of external content]" not in page.replace("\\", "")
    assert refused.startswith("[tool output: web_fetch]\nError: refused to fetch 169.254.169.254")
    assert "link-local" in refused
    assert loopback_only == ["127.0.0.1"]


async def test_search_uses_the_configured_backend(
    daemon_factory: Any, fake_llm: Any, fake_search: FakeSearch
) -> None:
    fake_search.hits = [Hit("Ferry timetable", "https://ferry.example/", "Boats every hour.")]
    daemon, chat = await daemon_factory(
        search={"backend": "searxng", "searxng_url": fake_search.root, "max_results": 3}
    )
    fake_llm.reply_tool_calls([("web_search", {"query": "ferry timetable"})])
    fake_llm.reply_tool_calls([("final_result", {"answer": "every hour"})])
    assert (await chat.ask("how often is the ferry?")).text == "every hour"
    [content] = tool_messages(fake_llm.requests[1])
    assert "1. Ferry timetable\n   https://ferry.example/\n   Boats every hour." in content
    text = (await daemon.metrics.render()).decode()
    assert 'bot_web_calls_total{outcome="ok",tool="web_search"} 1.0' in text
    assert 'bot_tool_calls_total{outcome="ok",tool="web_search"} 1.0' in text
