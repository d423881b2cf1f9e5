"""A NUL (U+0000) in text from outside: PostgreSQL refuses it in a text value, SQLite
keeps it. A message or a page holding one was answered on SQLite and failed its turn
every time on PostgreSQL ("Sorry, something went wrong"); both now keep U+FFFD in its
place, so both backends store, and the model reads, the same text."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bot.app import build_daemon
from bot.daemon import Daemon
from bot.messages import ChatKey
from bot.text import valid_unicode
from tests.conftest import make_settings
from tests.fakes.channel import FakeChannel
from tests.fakes.postgres import throwaway_schema
from tests.fakes.web_sites import FakeSite

KEY = ChatKey("test", "c1")


def test_valid_unicode_replaces_nul_and_lone_surrogates() -> None:
    assert valid_unicode("a\x00b\ud800c") == "a\ufffdb\ufffdc"
    assert valid_unicode("\U0001f600 plain") == "\U0001f600 plain"


@pytest_asyncio.fixture(params=["sqlite", "postgres"])
async def daemon(
    request: pytest.FixtureRequest, fake_llm: Any, tmp_path: Path
) -> AsyncIterator[tuple[Daemon, FakeChannel]]:
    """A daemon on each backend (PostgreSQL: the test server, a schema of its own)."""
    async with contextlib.AsyncExitStack() as stack:
        store: dict[str, str] = {}
        if request.param == "postgres":
            store["url"] = await stack.enter_async_context(throwaway_schema())
        settings = make_settings(
            tmp_path / "data", fake_llm.url, fetch={"allow_private": ["127.0.0.1"]}, store=store
        )
        channel = FakeChannel()
        daemon = build_daemon(settings, [channel])
        await daemon.start()
        try:
            yield daemon, channel
        finally:
            await daemon.stop(timeout=2)


async def test_a_message_holding_nul_is_answered_and_stored_alike(
    daemon: tuple[Daemon, FakeChannel],
) -> None:
    bot, chat = daemon
    reply = await chat.ask("pasted log line\x00with a NUL")
    assert reply.text == "echo: pasted log line\ufffdwith a NUL"
    history = await bot.sessions.history(KEY)
    assert history[0] == {"role": "user", "content": "pasted log line\ufffdwith a NUL"}
    assert "\\x00" not in repr(history)  # no NUL in any row


async def test_a_page_holding_nul_reaches_the_model_and_the_store(
    daemon: tuple[Daemon, FakeChannel], fake_llm: Any, fake_site: FakeSite, loopback_only: Any
) -> None:
    bot, chat = daemon
    url = fake_site.page("/nul.txt", "before\x00after", content_type="text/plain; charset=utf-8")
    fake_llm.reply_tool_calls([("web_fetch", {"url": url})])
    fake_llm.reply_tool_calls([("final_result", {"answer": "read it"})])
    assert (await chat.ask("read this")).text == "read it"
    [tool] = [m for m in await bot.sessions.history(KEY) if m.get("name") == "web_fetch"]
    assert "before\ufffdafter" in str(tool["content"])
    assert "\x00" not in str(tool["content"])
