"""`docker stop` and `docker restart` during a slow reply: SIGTERM, then SIGKILL once the
supervisor's grace period (Docker's 10 s, as long as the default shutdown_timeout_s)
runs out before the turn does. The real `bot run` against the fake Telegram and a model
whose answer is held: the stop gives the running turn's start back as it begins, so the
kill is not counted as the message's crash, and the start after three such restarts
answers it once instead of retiring it."""

from __future__ import annotations

import asyncio
import signal
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from bot.dispatcher.dispatcher import MAX_ATTEMPTS
from tests.fakes import telegram_api
from tests.fakes.llm_server import FakeLLM, text_reply
from tests.fakes.process import BotProcess, bot_env
from tests.fakes.telegram_api import FakeTelegram
from tests.fakes.waiting import PROCESS_S, PROCESS_TEST_S, STEP_S, until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(PROCESS_TEST_S)]

fake_telegram = telegram_api.fake_telegram

CHAT = 42
# Longer than any wait here: each SIGKILL lands while the stop still waits for the turn.
SHUTDOWN_TIMEOUT_S = "60"


def _row(data: Path) -> tuple[str, int] | None:
    """The message's inbox row (status, attempts), read beside the running daemon."""
    with closing(sqlite3.connect(data / "bot.db")) as db:
        row = db.execute("SELECT status, attempts FROM inbox").fetchone()
    return None if row is None else (str(row[0]), int(row[1]))


async def _stopped_then_killed(bot: BotProcess, data: Path) -> None:
    """SIGTERM; once the stop has given the turn's start back, SIGKILL (the turn still
    waits on the model: well inside shutdown_timeout_s)."""
    bot.proc.send_signal(signal.SIGTERM)
    try:
        await until(lambda: _row(data) == ("pending", 0), STEP_S)
    except TimeoutError:
        raise AssertionError(f"start still counted: {_row(data)}\n{bot.log}") from None
    assert await bot.stop(signal.SIGKILL) == -signal.SIGKILL, bot.log


async def test_killed_during_the_stop_three_times_then_answered_once(
    tmp_path: Path, fake_llm: FakeLLM, fake_telegram: FakeTelegram
) -> None:
    tg, data = fake_telegram, tmp_path / "data"
    env = bot_env(data, fake_llm, tg, BOT_AGENT__SHUTDOWN_TIMEOUT_S=SHUTDOWN_TIMEOUT_S)
    for _ in range(MAX_ATTEMPTS):  # each run's model call outlasts its process
        fake_llm.reply(text_reply("never said"), held=asyncio.Event())
    bot = await BotProcess.start(env, tmp_path)
    try:
        tg.message("please answer me", chat_id=CHAT)
        for run in range(1, MAX_ATTEMPTS + 1):
            if run > 1:
                bot = await BotProcess.start(env, tmp_path)  # replays the message
            await fake_llm.wait_requests(run, timeout=PROCESS_S)
            assert _row(data) == ("pending", 1)
            await _stopped_then_killed(bot, data)

        bot = await BotProcess.start(env, tmp_path)  # the model answers this time
        await until(lambda: _row(data) == ("done", 1), PROCESS_S)
        assert await bot.stop(signal.SIGTERM) == 0, bot.log
    finally:
        if bot.proc.returncode is None:
            await bot.stop(signal.SIGKILL)
    texts = [c.params["text"] for c in tg.sent(chat_id=CHAT)]
    assert texts == ["echo: please answer me"], texts  # once, and no GAVE_UP apology
    assert len(fake_llm.requests) == MAX_ATTEMPTS + 1
