"""Albums on Telegram: the photos a user sends together arrive as one update each (one
``media_group_id``, the caption on one part), through the real PTB against the fake Bot
API. They are one message to the bot: one answer, written having seen every picture,
also when the parts come over two polls, and in a group where only the captioned part
mentions the bot."""

from __future__ import annotations

import time
from typing import Any

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
    return "; ".join(seen_as(p, "image/jpeg") for p in pictures)


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
