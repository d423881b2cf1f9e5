"""A seeded chaos soak of the real `bot run` against the fake Telegram and model: chats
talk and set reminders while the process is SIGKILLed at random moments and restarted,
then stopped with SIGTERM; every delivery is counted.

Every message must be answered and every reminder delivered exactly once. Telegram can
neither take an idempotency key nor be asked what was posted, so one window stays
open: the send itself (the post reached Telegram, the process died before recording
it). The soak tells that window apart exactly: right after each kill it reads the
outbox, and only a delivery that Telegram had already received while its row was still
unsent may arrive a second time, once.
"""

from __future__ import annotations

import asyncio
import random
import re
import signal
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.messages import outbound_from_json
from bot.store.db import Database
from tests.fakes import telegram_api
from tests.fakes.llm_server import FakeLLM
from tests.fakes.process import BotProcess, bot_env
from tests.fakes.telegram_api import FakeTelegram
from tests.fakes.waiting import until

pytestmark = pytest.mark.slow  # subprocesses and real time; still run by make test

fake_telegram = telegram_api.fake_telegram

SEED = 1446
CHATS = 8
MESSAGES = 72  # a quarter of them set a reminder a few seconds ahead
BURST = 3  # messages arriving together between two random pauses
KILLS = 6
TOKEN = re.compile(r"\b[mr]\d+\b")


def _delivery(text: str) -> tuple[str, str] | None:
    """(what, token): an answer to message ``m7`` / ``r7``, or reminder ``r7`` firing."""
    found = TOKEN.search(text)
    if found is None:
        return None
    return ("reminder" if text.startswith("⏰") else "answer", found[0])


async def _in_send_window(db_path: Path, tg: FakeTelegram) -> set[tuple[str, str]]:
    """Deliveries Telegram already has whose outbox row the killed process had not yet
    marked sent: the window Telegram leaves open."""
    received = {_delivery(c.params["text"]) for c in tg.sent()}
    db = Database(db_path)
    await db.open()
    try:
        rows = await db.fetchall(
            "SELECT payload FROM outbox WHERE status IN ('pending', 'sending')"
        )
    finally:
        await db.close()
    unsent = {_delivery(outbound_from_json(r["payload"]).text) for r in rows}
    return {d for d in unsent & received if d is not None}


async def _all_delivered(
    bot: BotProcess,
    db_path: Path,
    wanted: set[tuple[str, str]],
    delivered: Callable[[], Counter[Any]],
) -> None:
    try:
        await until(lambda: wanted <= set(delivered()), timeout=60)
    except TimeoutError:
        missing = sorted(wanted - set(delivered()))
        rows = await _rows(db_path)
        raise AssertionError(f"never delivered: {missing}\n{rows}\n{bot.log}") from None


async def _rows(db_path: Path) -> str:
    """The journal's rows, to tell where a missing delivery stopped."""
    db = Database(db_path)
    await db.open()
    try:
        inbox = await db.fetchall("SELECT message_id, status, attempts FROM inbox")
        outbox = await db.fetchall("SELECT delivery_key, status, attempts FROM outbox")
    finally:
        await db.close()
    return f"inbox: {[tuple(r) for r in inbox]}\noutbox: {[tuple(r) for r in outbox]}"


def _say(tg: FakeTelegram, n: int, rng: random.Random) -> tuple[str, str] | None:
    """Message ``n`` in a random chat; returns the reminder it sets, if any."""
    chat = 1 + rng.randrange(CHATS)
    if rng.random() < 0.25:
        due = f"in {rng.randint(1, 4)} seconds"  # from when the command runs: never past
        tg.message(f"/remind {due} | r{n}", chat_id=chat, user_id=chat, message_id=n)
        return ("reminder", f"r{n}")
    tg.message(f"m{n}", chat_id=chat, user_id=chat, message_id=n)
    return None


@pytest.mark.timeout(240)
async def test_sigkills_at_random_moments_lose_nothing_and_double_nothing(
    tmp_path: Path, fake_llm: FakeLLM, fake_telegram: FakeTelegram
) -> None:
    def delivered() -> Counter[tuple[str, str] | None]:
        return Counter(_delivery(c.params["text"]) for c in tg.sent())

    rng = random.Random(SEED)
    tg, data = fake_telegram, tmp_path / "data"
    env = bot_env(data, fake_llm, tg)
    bursts = MESSAGES // BURST
    kill_after = set(rng.sample(range(bursts), KILLS))
    expected: set[tuple[str, str]] = set()
    window: set[tuple[str, str]] = set()  # may arrive twice: in flight at a kill
    bot = await BotProcess.start(env, tmp_path)
    for burst in range(bursts):
        for n in range(burst * BURST + 1, (burst + 1) * BURST + 1):
            expected.add(("answer", f"r{n}" if (r := _say(tg, n, rng)) else f"m{n}"))
            expected |= {r} if r else set()
        await asyncio.sleep(rng.uniform(0.05, 0.8))  # the random moment of the next kill
        if burst in kill_after:
            assert await bot.stop(signal.SIGKILL) == -signal.SIGKILL
            window |= await _in_send_window(data / "bot.db", tg)
            bot = await BotProcess.start(env, tmp_path)
            # Each message meets at most one kill: one in flight at three would be
            # retired as a message that kills the process (by design, not a loss).
            await _all_delivered(
                bot, data / "bot.db", {d for d in expected if d[0] == "answer"}, delivered
            )

    try:
        await _all_delivered(bot, data / "bot.db", expected, delivered)
    finally:
        assert await bot.stop(signal.SIGTERM) == 0, bot.log
    counts = delivered()
    assert set(counts) == expected  # nothing lost, nothing unexpected
    twice = {d for d, n in counts.items() if n > 1}
    assert twice <= window, f"doubled outside the send window: {sorted(twice - window)}"
    assert all(n <= 2 for n in counts.values()), counts
