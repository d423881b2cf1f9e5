"""SIGKILL in the middle of a streamed answer, then a restart: the real `bot run` against
the fake Telegram and a model writing slowly. The killed process leaves a half answer
on screen (posted and edited); the restarted one finishes that same message, or deletes
it and posts the answer: either way one visible answer, no stale half left behind,
counted on the fake's message state."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.fakes import telegram_api
from tests.fakes.llm_server import FakeLLM, streamed_answer
from tests.fakes.process import BotProcess, bot_env
from tests.fakes.telegram_api import FakeTelegram
from tests.fakes.waiting import until

pytestmark = pytest.mark.slow  # two daemon subprocesses and a model writing in real time

fake_telegram = telegram_api.fake_telegram

ANSWER = " ".join(f"word{n}" for n in range(80))  # about 560 characters, no Markdown
CHAT = 42


@pytest.mark.timeout(120)
async def test_sigkill_mid_stream_then_restart_leaves_one_visible_answer(
    tmp_path: Path, fake_llm: FakeLLM, fake_telegram: FakeTelegram
) -> None:
    tg, data = fake_telegram, tmp_path / "data"
    env = bot_env(data, fake_llm, tg, BOT_STREAMING__PRIVATE_INTERVAL_S="0.2")
    fake_llm.reply(streamed_answer(ANSWER, seconds=20.0, piece=4))  # killed long before
    bot = await BotProcess.start(env, tmp_path)
    tg.message("tell me a long story", chat_id=CHAT)
    await tg.wait_for("sendMessage", 1, timeout=30)  # the preview posted
    await tg.wait_for("editMessageText", 2, timeout=30)  # and grown twice
    assert await bot.stop(signal.SIGKILL) == -signal.SIGKILL
    (half,) = tg.visible(CHAT)
    assert ANSWER.startswith(half) and half != ANSWER, half  # the stale half answer

    fake_llm.reply(streamed_answer(ANSWER, seconds=1.5))  # the replayed turn's call
    bot = await BotProcess.start(env, tmp_path)
    try:
        # The killed run's stream never finished; the replayed one's did.
        await until(lambda: tg.visible(CHAT) == [ANSWER] and len(fake_llm.streamed) == 1, 60)
    except TimeoutError:
        raise AssertionError(f"{tg.visible(CHAT)}\n{bot.log}") from None
    assert await bot.stop(signal.SIGTERM) == 0, bot.log  # whatever was still to send, sent

    assert tg.visible(CHAT) == [ANSWER]  # one visible answer, the half one gone
    posted = tg.sent(chat_id=CHAT)
    deleted = [c for c in tg.calls_to("deleteMessage") if c.ok]
    assert len(posted) - len(deleted) == 1, (posted, deleted)
    assert len(fake_llm.requests) == 2  # the turn ran again once, no more
