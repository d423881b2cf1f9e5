"""Per-chat order through a retry: a reply that failed once (Telegram's 502) is not
overtaken by its chat's next reply, nor split from its own later parts by it (nor by
the next answer's streamed preview); other chats never wait, and a reply given up lets
its chat go on."""

from __future__ import annotations

from typing import Any

import pytest

import bot.store.outbox
from bot.messages import ChatKey
from tests.fakes import telegram_api
from tests.fakes.llm_server import FakeLLM, streamed_answer
from tests.fakes.telegram_api import FakeTelegram
from tests.fakes.waiting import outbox_settled

fake_telegram = telegram_api.fake_telegram
telegram_daemon = telegram_api.telegram_daemon

FIRST = "echo: first question"
SECOND = "echo: second question"
# The first retry's wait: the next turn (an echo) is answered well within it and its
# double, so without the hold its answer would come first.
RETRY_S = 0.5
LONG = "A" * 3000 + "\n\n" + "B" * 3000  # two messages on Telegram (4,096 characters each)
NEXT = "The second answer, about something else entirely, written slowly."
FAST = {"private_interval_s": 0.1, "group_interval_s": 0.3}  # previews a tenth as paced


def _is_first(params: dict[str, Any]) -> bool:
    return "first" in params.get("text", "")


def _in_order(seen: list[str], expected: list[str]) -> bool:
    """What the chat shows so far is where ``expected`` begins: nothing came early."""
    return seen == expected[: len(seen)]


async def test_the_next_answer_waits_for_the_retry_of_the_one_before(
    telegram_daemon: Any, fake_telegram: FakeTelegram, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bot.store.outbox, "BACKOFF_BASE_S", RETRY_S)
    await telegram_daemon(streaming_off=True)
    fake_telegram.fail("sendMessage", 502, times=2, match=_is_first)  # retried twice
    fake_telegram.message("first question", chat_id=42)
    await fake_telegram.wait_for("sendMessage", 1)  # refused: its retry is booked
    fake_telegram.message("second question", chat_id=42)
    fake_telegram.message("another chat", chat_id=43)
    await fake_telegram.wait_until(lambda: fake_telegram.visible(43))
    assert fake_telegram.visible(43) == ["echo: another chat"]  # not held by chat 42's retry
    assert _in_order(fake_telegram.visible(42), [FIRST, SECOND])
    await fake_telegram.wait_until(lambda: len(fake_telegram.visible(42)) == 2)
    assert fake_telegram.visible(42) == [FIRST, SECOND]


@pytest.mark.parametrize("streaming", [False, True], ids=["whole", "streamed"])
async def test_a_long_answer_retried_stays_whole_before_the_next(
    telegram_daemon: Any,
    fake_telegram: FakeTelegram,
    fake_llm: FakeLLM,
    monkeypatch: pytest.MonkeyPatch,
    streaming: bool,
) -> None:
    """Streamed, the next answer's preview is not posted above the part waiting either."""
    monkeypatch.setattr(bot.store.outbox, "BACKOFF_BASE_S", RETRY_S)
    await telegram_daemon(streaming=FAST, streaming_off=not streaming)
    fake_llm.reply_tool_calls([("final_result", {"answer": LONG})])
    # Streamed: previewed within the retry's wait; else answered at once.
    fake_llm.reply(streamed_answer(NEXT, seconds=1.0 if streaming else 0.0))
    fake_telegram.fail("sendMessage", 502, times=2, match=lambda p: p["text"].startswith("B"))
    fake_telegram.message("first question", chat_id=42)
    await fake_telegram.wait_for("sendMessage", predicate=lambda c: not c.ok)  # the part B
    fake_telegram.message("second question", chat_id=42)
    await fake_telegram.wait_until(lambda: NEXT in fake_telegram.visible(42))
    shown = fake_telegram.visible(42)
    assert [t[0] for t in shown[:2]] == ["A", "B"] and shown[2:] == [NEXT]


async def test_a_reply_given_up_lets_its_chat_go_on(
    telegram_daemon: Any, fake_telegram: FakeTelegram, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bot.store.outbox, "BACKOFF_BASE_S", 0.05)
    daemon, _ = await telegram_daemon(streaming_off=True)
    daemon.delivery._max_attempts = 3
    fake_telegram.fail("sendMessage", 502, times=100, match=_is_first)
    fake_telegram.message("first question", chat_id=42)
    await fake_telegram.wait_for("sendMessage", 1)
    fake_telegram.message("second question", chat_id=42)
    await fake_telegram.wait_until(lambda: fake_telegram.visible(42))
    assert sorted(await outbox_settled(daemon.db.path)) == ["failed", "sent"]
    assert fake_telegram.visible(42) == [SECOND]
    texts = [c.params["text"] for c in fake_telegram.calls_to("sendMessage")]
    assert texts == [FIRST] * 3 + [SECOND]  # held until the first was given up
    assert not daemon.delivery.delivering(ChatKey("telegram", "42"))
