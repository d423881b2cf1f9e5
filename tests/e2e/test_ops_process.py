"""The real `python -m bot run` process with Telegram (the fake Bot API) and the fake LLM:
start-up does not wait for litellm, and SIGTERM mid-turn loses nothing."""

from __future__ import annotations

import asyncio
import re
import signal
from datetime import timedelta
from pathlib import Path

import aiohttp
import pytest

from bot.messages import ChatKey, utcnow
from bot.store.db import Database
from bot.store.reminders import ReminderKind, ReminderStore
from tests.fakes import telegram_api
from tests.fakes.llm_server import FakeLLM, tool_calls_reply
from tests.fakes.process import DEFAULT_LOOP, LLM_KEY, BotProcess, bot_env
from tests.fakes.telegram_api import FakeTelegram
from tests.fakes.waiting import PROCESS_S, PROCESS_TEST_S

# Subprocesses and real time; still run by make test.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(PROCESS_TEST_S)]

fake_telegram = telegram_api.fake_telegram

WARMED = "litellm warm-up import finished"


async def _seed_reminder(data: Path) -> None:
    db = Database(data / "bot.db")
    await db.open()
    await ReminderStore(db).add(
        ChatKey("telegram", "42"),
        "7",
        content="later",
        kind=ReminderKind.REMINDER,
        fire_at=utcnow() + timedelta(days=1),
        recurrence=None,
        timezone="UTC",
    )
    await db.close()


async def _check_ready_without_litellm(bot: BotProcess) -> None:
    """Ready (channels up, reminders planned, /healthz 200) before litellm is imported."""
    ready = bot.lines[bot.index(": ready: ") or 0]
    assert "channels=telegram" in ready and "reminders=1" in ready
    assert f" loop={DEFAULT_LOOP} " in ready, ready
    assert bot.index(WARMED) is None, "ready waited for the litellm import"
    match = re.search(r"web=(http://\S+)", ready)
    assert match, ready
    async with aiohttp.ClientSession() as http, http.get(match[1] + "/healthz") as resp:
        body = await resp.json()
        assert resp.status == 200, body
    assert body["channel:telegram"] == "ok" and body["database"] == "ok"


async def test_ready_before_litellm_then_sigterm_mid_turn_loses_nothing(
    tmp_path: Path, fake_llm: FakeLLM, fake_telegram: FakeTelegram
) -> None:
    """One scenario, two processes (each pays the litellm import once, in the background).

    The shutdown timeout is the default 10 s: the quick turn's answer is let out only after
    the SIGTERM, and what remains of its turn must fit in it on a loaded machine too."""
    await _seed_reminder(tmp_path / "data")
    env = bot_env(tmp_path / "data", fake_llm, fake_telegram, BOT_AGENT__SHUTDOWN_TIMEOUT_S="10")
    tg = fake_telegram
    # Chat 42's turn outlasts the shutdown timeout (its answer never comes); chat 43's
    # finishes within it.
    never = asyncio.Event()
    fake_llm.reply(tool_calls_reply([("final_result", {"answer": "too late"})]), held=never)
    first = await BotProcess.start(env, tmp_path)
    await _check_ready_without_litellm(first)
    slow = tg.message("hold on", chat_id=42, message_id=21)
    await fake_llm.wait_requests(1, timeout=PROCESS_S)  # litellm imported, model "thinking"
    quick = asyncio.Event()  # the model answers chat 43 only once the stop has begun
    fake_llm.reply(tool_calls_reply([("final_result", {"answer": "quick answer"})]), held=quick)
    tg.message("quick", chat_id=43, user_id=8, message_id=31)
    await fake_llm.wait_requests(2, timeout=PROCESS_S)

    first.proc.send_signal(signal.SIGTERM)
    await first.wait_line("SIGTERM: stopping")
    quick.set()  # mid-shutdown: this turn ends within the timeout, the other does not
    assert await first.stop(None) == 0, first.log
    # The warm-up import did finish, in the background, after ready.
    assert (first.index(": ready: ") or 0) < (first.index(WARMED) or -1), first.log
    assert "turns unfinished after 10.0 s; they resume at the next start" in first.log
    assert first.log.rstrip().endswith("stopped") and "Traceback" not in first.log
    # The turn that finished in time was delivered (outbox flushed) before the exit.
    assert [(c.params["chat_id"], c.params["text"]) for c in tg.sent()] == [(43, "quick answer")]

    second = await BotProcess.start(env, tmp_path)
    try:
        await tg.wait_sent(2, timeout=PROCESS_S)
        tg.message("barrier", chat_id=42, message_id=22)  # queued behind any repeat
        await tg.wait_sent(3)
        await tg.wait_confirmed(slow["update_id"])
    finally:
        assert await second.stop(signal.SIGINT) == 0, second.log
    assert "resuming 1 unanswered messages" in second.log
    assert [(c.params["chat_id"], c.params["text"]) for c in tg.sent()] == [
        (43, "quick answer"),
        (42, "echo: hold on"),
        (42, "echo: barrier"),
    ]
    assert tg.sent(chat_id=42)[0].params["reply_parameters"]["message_id"] == 21
    assert LLM_KEY not in first.log + second.log
