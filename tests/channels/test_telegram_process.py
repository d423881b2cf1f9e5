"""The real process: `bot run` with Telegram configured by environment, SIGKILLed mid-turn."""

from __future__ import annotations

import signal

import pytest

from tests.fakes import telegram_api
from tests.fakes.llm_server import FakeLLM
from tests.fakes.process import LLM_KEY, BotProcess, bot_env
from tests.fakes.waiting import PROCESS_S, PROCESS_TEST_S

# Subprocesses and real time; still run by make test.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(PROCESS_TEST_S)]

fake_telegram = telegram_api.fake_telegram


def _texts_seen(llm: FakeLLM, text: str) -> int:
    return sum(1 for r in llm.requests if text in r.json["messages"][-1]["content"])


async def test_sigkill_mid_turn_answers_once_after_restart(tmp_path, fake_llm, fake_telegram):
    env = bot_env(tmp_path / "data", fake_llm, fake_telegram)
    fake_llm.reply_tool_calls([("final_result", {"answer": "too late"})], delay=30)
    first = await BotProcess.start(env, tmp_path)
    assert "channels=telegram" in "".join(first.lines)
    update = fake_telegram.message("hold on", message_id=21)
    await fake_llm.wait_requests(1, timeout=PROCESS_S)  # mid-turn: the model is "thinking"
    assert await first.stop(signal.SIGKILL) == -signal.SIGKILL
    assert fake_telegram.sent() == []

    second = await BotProcess.start(env, tmp_path)
    try:
        sent = await fake_telegram.wait_sent(1, timeout=PROCESS_S)
        assert sent[0].params["text"] == "echo: hold on"
        assert sent[0].params["reply_parameters"]["message_id"] == 21
        fake_telegram.message("barrier", message_id=22)  # same chat: queued after any repeat
        await fake_telegram.wait_sent(2)
        await fake_telegram.wait_confirmed(update["update_id"])
    finally:
        code = await second.stop(signal.SIGTERM)
    log = second.log
    assert code == 0, log
    assert [c.params["text"] for c in fake_telegram.sent()] == ["echo: hold on", "echo: barrier"]
    assert _texts_seen(fake_llm, "hold on") == 2  # once per process: the new one saw it once
    assert "resuming 1 unanswered messages" in log
    assert "Traceback" not in log and LLM_KEY not in log
    assert fake_telegram.token.split(":", 1)[1] not in log  # the token never reaches the log
