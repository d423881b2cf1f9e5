"""An answer with files is delivered in steps (its text, each file, answer.md when the
text was capped); a failed step makes the outbox retry the delivery, and each step
already sent is sent once: the text is not posted again with every failed upload, on
any platform, and not after a restart either (the progress is in the state store).
Through the real client libraries against the loopback fakes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest_asyncio

from bot.bus.durable import DurableBus
from bot.delivery import Delivery
from bot.messages import Attachment, ChatKey, OutboundMessage
from bot.store.sqlite import sqlite_storage
from channels.base import Channel
from tests.fakes import discord_api, slack_api, telegram_api
from tests.fakes.discord_api import FakeDiscord
from tests.fakes.llm_server import FakeLLM
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram, TelegramDaemonFactory
from tests.fakes.waiting import until

fake_telegram = telegram_api.fake_telegram
telegram_daemon = telegram_api.telegram_daemon
fake_slack = slack_api.fake_slack
slack_channel = slack_api.slack_channel
fake_discord = discord_api.fake_discord
discord_channel = discord_api.discord_channel

WAIT_S = 30.0  # a retry comes after the outbox's first backoff (about 1 s)
ANSWER = "Here is your file."


def _texts(fake: FakeTelegram) -> list[str]:
    return [c.params["text"] for c in fake.sent() if c.ok]


def _upload_names(fake: FakeTelegram) -> list[str]:
    return [name for _method, name, _data, _params in fake.uploads()]


async def _progress_kept(daemon: Any) -> list[Any]:
    """The deliveries whose steps the state store keeps."""
    return list(await daemon.db.fetchall("SELECT key FROM kv WHERE key LIKE 'delivery:%'"))


async def _ask_for_a_file(fake_telegram: FakeTelegram, fake_llm: FakeLLM) -> None:
    fake_llm.reply_tool_calls([("send_file", {"content": "hello file", "name": "a.txt"})])
    fake_llm.reply_tool_calls([("final_result", {"answer": ANSWER})])
    fake_telegram.message("send me a file", chat_id=42)


async def test_telegram_a_failed_upload_is_retried_without_the_text_again(
    telegram_daemon: TelegramDaemonFactory, fake_telegram: FakeTelegram, fake_llm: FakeLLM
) -> None:
    daemon, _ = await telegram_daemon(streaming_off=True)
    fake_telegram.fail("sendDocument", 502, times=1)
    await _ask_for_a_file(fake_telegram, fake_llm)
    await until(lambda: daemon.delivery.sent == 1, WAIT_S)
    assert len(fake_telegram.calls_to("sendDocument")) == 2  # it failed once, then went
    assert _texts(fake_telegram) == [ANSWER]
    assert _upload_names(fake_telegram) == ["a.txt"]


async def test_telegram_a_capped_answer_whose_answer_md_fails_once(
    telegram_daemon: TelegramDaemonFactory, fake_telegram: FakeTelegram, fake_llm: FakeLLM
) -> None:
    """Capped at 6,000 characters: two posts (Telegram takes 4,096), then answer.md."""
    daemon, _ = await telegram_daemon(streaming_off=True, agent={"max_answer_chars": 6_000})
    huge = "".join(f"line {i}: " + "words " * 10 + "\n" for i in range(400))  # ~27,000
    fake_telegram.fail("sendDocument", 502, times=1)
    fake_llm.reply_tool_calls([("final_result", {"answer": huge})])
    fake_telegram.message("write a lot", chat_id=42)
    await until(lambda: daemon.delivery.sent == 1, WAIT_S)
    texts = _texts(fake_telegram)
    assert len(texts) == 2 and texts[0].startswith("line 0: words")
    assert "all of it is in answer.md" in texts[1]
    assert len(fake_telegram.calls_to("sendDocument")) == 2
    [(_method, name, data, _params)] = fake_telegram.uploads()
    assert name == "answer.md" and data.decode().strip() == huge.strip()


async def test_telegram_the_steps_sent_are_not_sent_again_after_a_restart(
    telegram_daemon: TelegramDaemonFactory,
    fake_telegram: FakeTelegram,
    fake_llm: FakeLLM,
    tmp_path: Path,
) -> None:
    """The upload keeps failing until the daemon stops; the next one retries the row
    from the outbox and sends only the file (Telegram cannot be asked what was posted)."""
    data_dir = tmp_path / "data"
    first, _ = await telegram_daemon(streaming_off=True, data_dir=data_dir)
    fake_telegram.fail("sendDocument", 502, times=1_000)
    await _ask_for_a_file(fake_telegram, fake_llm)
    await fake_telegram.wait_until(lambda: fake_telegram.calls_to("sendDocument"), WAIT_S)
    assert await _progress_kept(first)  # the text is out, kept before the file is tried
    await first.stop(timeout=2)
    fake_telegram.clear_failures("sendDocument")
    assert _texts(fake_telegram) == [ANSWER] and not fake_telegram.uploads()

    second, _ = await telegram_daemon(streaming_off=True, data_dir=data_dir)
    await until(lambda: second.delivery.sent == 1, WAIT_S)
    assert _texts(fake_telegram) == [ANSWER]
    assert _upload_names(fake_telegram) == ["a.txt"]
    for _ in range(200):  # marked sent, then its progress is deleted
        if not await _progress_kept(second):
            break
        await asyncio.sleep(0.05)
    assert not await _progress_kept(second)


# -- Slack and Discord: the same delivery path, their own adapters -----------------------
Deliver = Callable[[Channel, OutboundMessage], Awaitable[Delivery]]


@pytest_asyncio.fixture
async def delivered(tmp_path: Path) -> AsyncIterator[Deliver]:
    """Queues one message through the outbox to a channel; returns once it is sent."""
    storage = sqlite_storage(tmp_path / "bot.db")
    await storage.backend.open()
    tasks: list[asyncio.Task[None]] = []

    async def deliver(channel: Channel, msg: OutboundMessage) -> Delivery:
        bus = DurableBus(storage.inbox, storage.outbox)
        delivery = Delivery(storage.outbox, {msg.key.channel: channel}, state=storage.kv)
        tasks.append(asyncio.create_task(delivery.route(bus)))
        await bus.put_outbound(msg)
        await until(lambda: delivery.sent == 1, WAIT_S)
        assert await delivery.drain(2)
        return delivery

    yield deliver
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await storage.backend.close()


def _with_file(key: ChatKey, tmp_path: Path, *, written: bool = True) -> OutboundMessage:
    path = tmp_path / "a.txt"
    if written:
        path.write_bytes(b"hello file")
    return OutboundMessage(key, ANSWER, attachments=(Attachment("document", str(path), "a.txt"),))


async def test_slack_a_failed_upload_is_retried_without_the_text_again(
    fake_slack: FakeSlack, slack_channel: Any, delivered: Deliver, tmp_path: Path
) -> None:
    channel, _ = await slack_channel()
    fake_slack.fail("files.getUploadURLExternal", 200, "internal_error")
    await delivered(channel, _with_file(ChatKey("slack", "D0DM"), tmp_path))
    assert len(fake_slack.calls_to("files.getUploadURLExternal")) == 2
    assert [p["text"] for p in fake_slack.posts("D0DM")] == [ANSWER, ""]  # "": the file's
    assert list(fake_slack.uploaded.values()) == [b"hello file"]


async def test_discord_a_failed_upload_is_retried_without_the_text_again(
    fake_discord: FakeDiscord, discord_channel: Any, delivered: Deliver, tmp_path: Path
) -> None:
    """Past the nonce's few minutes (a later retry, a restart), Discord would make the
    text again: 0 s here."""
    fake_discord.nonce_window_s = 0.0
    channel, _ = await discord_channel()
    fake_discord.fail(
        "POST /channels/{channel_id}/messages", 503, after=1
    )  # the file (discord.py retries a 502 itself)
    await delivered(channel, _with_file(ChatKey("discord", "4242"), tmp_path))
    assert [m.get("content") for m in fake_discord.created] == [ANSWER, ""]
    assert [p.files for p in fake_discord.posts() if p.files] == [{"a.txt": b"hello file"}]


async def test_discord_a_note_on_a_file_it_cannot_take_is_posted_too(
    fake_discord: FakeDiscord, discord_channel: Any, delivered: Deliver, tmp_path: Path
) -> None:
    """The note is a delivery of its own: it never shares the text's nonce, with which
    Discord would hand back the text's message and post no note."""
    channel, _ = await discord_channel()
    msg = _with_file(ChatKey("discord", "4242"), tmp_path, written=False)  # gone
    await delivered(channel, msg)
    contents = [m.get("content") for m in fake_discord.created]
    assert contents == [ANSWER, "(Could not send the file a.txt: No such file or directory)"]
