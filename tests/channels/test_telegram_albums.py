"""Albums on Telegram: the photos a user sends together arrive as one update each (one
``media_group_id``, the caption on one part), through the real PTB against the fake Bot
API. They are one message to the bot: one answer, written having seen every picture,
also when the parts come over two polls, and in a group where only the captioned part
mentions the bot."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import aiohttp

from tests.fakes import documents, telegram_api
from tests.fakes.llm_server import image_responder, seen_as
from tests.fakes.telegram_api import FakeTelegram

fake_telegram = telegram_api.fake_telegram
telegram_daemon = telegram_api.telegram_daemon

PICTURES = [documents.png(4, 3, (10 * i, 200, 10)) for i in range(1, 4)]
NO_PREVIEW = {"enabled": False}


def _part(fake: FakeTelegram, i: int, chat_id: int, caption: str = "") -> dict[str, Any]:
    """Queue the ``i``-th picture of album "77" as an update of its own."""
    fake.add_file(f"ph{i}", PICTURES[i], f"photos/file_{i}.png")
    extra = {"caption": caption} if caption else {}
    message = fake.make_message(None, chat_id=chat_id, media_group_id="77", **extra)
    if caption.startswith("@"):
        message["caption_entities"] = [
            {"type": "mention", "offset": 0, "length": len(caption.split(maxsplit=1)[0])}
        ]
    message["photo"] = [
        {"file_id": f"ph{i}", "file_unique_id": f"u{i}", "width": 4, "height": 3,
         "file_size": len(PICTURES[i])},
    ]  # fmt: skip
    return fake.add_update({"message": message})


def _seen(pictures: list[bytes]) -> str:
    """As the model sees them: under the type their bytes are (PNG here), whatever a
    platform declared (a photo is "image/jpeg" to it)."""
    return "; ".join(seen_as(p, "image/png") for p in pictures)


async def _barrier(fake: FakeTelegram, chat_id: int, text: str = "@test_bot barrier") -> None:
    """One more message answered: everything sent before it has been answered."""
    fake.message(text, chat_id=chat_id)
    await fake.wait_until(lambda: any(text[10:] in c.params["text"] for c in fake.sent(chat_id)))


async def test_an_album_is_one_message_with_every_picture(
    telegram_daemon, fake_telegram, fake_llm
) -> None:
    await telegram_daemon(media={"vision": "on"}, streaming=NO_PREVIEW)
    fake_llm.default = image_responder
    for i in range(3):
        _part(fake_telegram, i, 42, "which one is best?" if i == 0 else "")
    [answer] = await fake_telegram.wait_sent(1)
    await _barrier(fake_telegram, 42)
    assert [c.params["text"] for c in fake_telegram.sent(42)][:-1] == [answer.params["text"]]
    assert answer.params["text"] == _seen(PICTURES)
    [text] = [p["text"] for p in fake_llm.requests[0].json["messages"][-1]["content"]
              if p["type"] == "text"]  # fmt: skip
    assert text.startswith("which one is best?\n")


async def test_every_caption_of_an_album_reaches_the_model_tied_to_its_picture(
    telegram_daemon, fake_telegram, fake_llm
) -> None:
    """Telegram lets each part of an album have its own caption: all of them reach the
    model, each naming the picture it was written on, not only the first."""
    await telegram_daemon(media={"vision": "on"}, streaming=NO_PREVIEW)
    fake_llm.default = image_responder
    for i, caption in enumerate(["the red one", "", "is this one blurry?"]):
        _part(fake_telegram, i, 42, caption)
    [answer] = await fake_telegram.wait_sent(1)
    assert answer.params["text"] == _seen(PICTURES)
    [text] = [p["text"] for p in fake_llm.requests[0].json["messages"][-1]["content"]
              if p["type"] == "text"]  # fmt: skip
    assert text.startswith("photo 1: the red one\nphoto 3: is this one blurry?\n")


async def test_an_album_over_two_polls_in_a_group_is_answered_once_before_what_follows(
    telegram_daemon, fake_telegram, fake_llm
) -> None:
    """The caption mentioning the bot is on the second part, which comes a poll later;
    the uncaptioned first part is no chatter to drop, and a message sent after the album
    is answered after it."""
    await telegram_daemon(media={"vision": "on"}, streaming=NO_PREVIEW)
    fake_llm.default = image_responder
    await _barrier(fake_telegram, -100, "@test_bot first")
    sent_at = time.monotonic()
    first = _part(fake_telegram, 0, -100)
    await fake_telegram.wait_for(  # fetched, held: the bot polls again from the album
        "getUpdates",
        1,
        predicate=lambda c: c.at > sent_at and c.params.get("offset") == first["update_id"],
    )
    _part(fake_telegram, 1, -100, "@test_bot which one?")
    fake_telegram.message("@test_bot and this text after it", chat_id=-100)
    await fake_telegram.wait_sent(3, chat_id=-100)
    texts = [c.params["text"] for c in fake_telegram.sent(-100)]
    assert texts[1] == _seen(PICTURES[:2])
    assert texts[2] == "echo: and this text after it"
    await _barrier(fake_telegram, -100)
    assert len(fake_telegram.sent(-100)) == 4


# -- webhook mode: each part is a request of its own -----------------------------------
SECRET = "album-secret"


async def _webhook(telegram_daemon: Any, wait_s: float = 1.0) -> tuple[Any, str]:
    daemon, channel = await telegram_daemon(
        mode="webhook",
        webhook_url="https://bot.example.com/tg/hook",
        webhook_secret=SECRET,
        media={"vision": "on"},
        streaming=NO_PREVIEW,
    )
    channel.held_albums.wait_s = wait_s
    return channel, f"http://127.0.0.1:{daemon.web.port}/tg/hook"


async def _post(url: str, update: dict[str, Any]) -> int:
    headers = {"X-Telegram-Bot-Api-Secret-Token": SECRET}
    async with aiohttp.ClientSession() as http, http.post(url, json=update, headers=headers) as r:
        return r.status


async def test_a_webhook_album_is_one_message_and_holds_nothing_else(
    telegram_daemon, fake_telegram, fake_llm
) -> None:
    """The three parts come as three requests at once: one answer having seen every
    picture, each request answered 200 once the album is journaled; a text sent to the
    webhook meanwhile is journaled at once, not held behind the album."""
    _, url = await _webhook(telegram_daemon, wait_s=5.0)
    fake_llm.default = image_responder
    parts = [_part(fake_telegram, i, 42, "which one is best?" if i == 1 else "") for i in range(3)]
    held = [asyncio.create_task(_post(url, p)) for p in parts]
    text = fake_telegram.add_update({"message": fake_telegram.make_message("hi", chat_id=43)})
    assert await _post(url, text) == 200
    assert not any(task.done() for task in held)  # the album is still held
    assert await asyncio.gather(*held) == [200, 200, 200]
    await fake_telegram.wait_sent(1, chat_id=42)
    await fake_telegram.wait_sent(1, chat_id=43)
    [answer] = fake_telegram.sent(42)
    assert answer.params["text"] == _seen(PICTURES)
    assert await _post(url, parts[2]) == 200  # a part resent after its album: no new turn
    after = fake_telegram.make_message("after the album", chat_id=42)
    assert await _post(url, fake_telegram.add_update({"message": after})) == 200
    await fake_telegram.wait_until(
        lambda: any("after the album" in c.params["text"] for c in fake_telegram.sent(42))
    )
    assert len(fake_telegram.sent(42)) == 2
    assert len(fake_llm.requests) == 3


async def test_a_webhook_album_not_journaled_fails_every_part_and_is_sent_again_whole(
    telegram_daemon, fake_telegram, fake_llm
) -> None:
    """The store fails the album's journal: every part's request is an error (Telegram
    resends them all, none is half kept), and the resent album is one message."""
    from bot.errors import StoreError

    channel, url = await _webhook(telegram_daemon)
    fake_llm.default = image_responder
    journal = channel._put_inbound
    failures = [StoreError("disk full")]

    async def failing_once(msg: Any) -> None:
        if failures:
            raise failures.pop()
        await journal(msg)

    channel._put_inbound = failing_once
    parts = [_part(fake_telegram, i, 42, "which?" if i == 0 else "") for i in range(2)]
    assert await asyncio.gather(*(_post(url, p) for p in parts)) == [500, 500]
    assert fake_llm.requests == []
    assert await asyncio.gather(*(_post(url, p) for p in parts)) == [200, 200]
    [answer] = await fake_telegram.wait_sent(1, chat_id=42)
    assert answer.params["text"] == _seen(PICTURES[:2])


async def test_albums_held_at_shutdown_are_refused_not_half_kept() -> None:
    """The daemon stops while an album is held: every held part's request fails (the
    webhook answers 500, Telegram resends them to the next start) and nothing of the
    album was journaled."""
    import pytest

    from bot.errors import ChannelError
    from bot.messages import ChatKey, InboundMessage
    from channels.telegram.albums import HeldAlbums

    journaled: list[InboundMessage] = []

    async def journal(msg: InboundMessage) -> None:
        journaled.append(msg)

    def read(update: dict[str, Any]) -> InboundMessage:
        m = update["message"]
        return InboundMessage(ChatKey("telegram", str(m["chat"]["id"])), "7", "", str(m["id"]))

    held = HeldAlbums(read, journal, wait_s=60.0)
    parts = [
        {"update_id": i, "message": {"id": i, "chat": {"id": 42}, "media_group_id": "77"}}
        for i in (1, 2)
    ]
    requests = [asyncio.create_task(held.put(p)) for p in parts]
    await asyncio.sleep(0)  # both parts are held (the album's closer has not begun)
    await held.stop()
    for request in requests:
        with pytest.raises(ChannelError, match="stopped"):
            await request
    assert journaled == []


def test_every_captions_text_links_keep_their_urls() -> None:
    """Each part's caption is read as the lead's is: a link's URL follows its words."""
    from channels.telegram.albums import read_album
    from channels.telegram.normalize import BotIdentity, normalize

    fake = FakeTelegram()  # builders only
    parts = []
    for i, caption in enumerate(["first: here", "second: there"]):
        message = fake.make_message(None, media_group_id="77", caption=caption)
        label = caption.split()[-1]
        message["caption_entities"] = [
            {"type": "text_link", "offset": caption.index(label), "length": len(label),
             "url": f"https://example.org/{i}"},
        ]  # fmt: skip
        message["photo"] = [{"file_id": f"ph{i}", "file_unique_id": f"u{i}", "width": 4,
                             "height": 3}]  # fmt: skip
        parts.append({"update_id": i, "message": message})
    me = BotIdentity(id=1, username="test_bot")
    msg = read_album(parts, lambda update: normalize(update, me))
    assert msg is not None and msg.text == (
        "photo 1: first: here (https://example.org/0)\n"
        "photo 2: second: there (https://example.org/1)"
    )
