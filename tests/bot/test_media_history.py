"""Pictures in the history (bot/media/shown.py): the latest ``keep_images_turns`` user
messages as stored keep theirs, counted and sent; older ones are neither, whatever
the governor merges."""

from __future__ import annotations

import io
from typing import Any

from PIL import Image

from bot.media.shown import NOT_SHOWN
from bot.messages import Attachment
from tests.fakes.channel import FileChannel
from tests.fakes.llm_server import default_responder, error_reply


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (30, 20), (10, 20, 30)).save(out, "PNG")
    return out.getvalue()


def _image_count(request: Any) -> int:
    payload = request if isinstance(request, dict) else request.json
    return sum(
        p.get("type") == "image_url"
        for m in payload.get("messages") or ()
        if isinstance(m.get("content"), list)
        for p in m["content"]
    )


def _refuses_pictures(request: Any) -> Any:
    """A provider that will not take this picture (Anthropic: 'Image does not match the
    provided media type'), so every request carrying it is refused."""
    if _image_count(request):
        return error_reply(400, {"error": {"message": "Image does not match", "type": "x"}})
    return default_responder(request)


async def test_a_refused_picture_is_dropped_and_the_turn_answered(daemon_factory, fake_llm) -> None:
    """A provider that refuses a picture (HTTP 400) refused every request carrying it:
    the turn got "unavailable ... try again in a little while", and so did the next
    ones while it was recent (at first until /new: the governor merged them into the
    picture's message). The turn is now asked once more without it, the model told so,
    and no later request carries it: each later turn is one call."""
    channel = FileChannel()
    await daemon_factory(
        channel=channel,
        media={"vision": "on", "keep_images_turns": 2},
        llm={"model": "openai/fake-model"},
    )
    fake_llm.default = _refuses_pictures
    channel.add_file("f1", _png())
    photo = Attachment("photo", "f1", "shot.png", "image/png", len(_png()))
    first = await channel.ask("what is this", attachments=(photo,))
    assert first.text.startswith("echo: "), first.text
    assert [_image_count(r) for r in fake_llm.requests] == [1, 0]
    assert NOT_SHOWN in fake_llm.requests[-1].json["messages"][-1]["content"]
    second = await channel.ask("never mind")  # the picture's message is still among the 2
    assert second.text.startswith("echo: ") and second.text.endswith("never mind")
    assert [_image_count(r) for r in fake_llm.requests] == [1, 0, 0]


async def test_a_refusal_with_no_picture_says_so_and_is_not_asked_twice(
    daemon_factory, fake_llm
) -> None:
    """A request refused for another reason is not sent again, and the reply does not
    promise that waiting helps."""
    _daemon, chat = await daemon_factory()
    fake_llm.default = lambda request: error_reply(400, {"error": {"message": "no", "type": "x"}})
    reply = await chat.ask("hello")
    assert len(fake_llm.requests) == 1
    assert "refused" in reply.text and "a little while" not in reply.text, reply.text


async def test_pictures_no_longer_sent_take_no_room_from_the_history(
    daemon_factory, fake_llm
) -> None:
    """Four photos 1,600 tokens each, sent one turn only, were still counted on every
    later request, and the turn they came with was cut from the history early."""
    channel = FileChannel()
    await daemon_factory(
        channel=channel,
        media={"vision": "on", "keep_images_turns": 1},
        llm={"model": "openai/fake-model"},
        context={"max_context_tokens": 12_000, "reserve_tokens": 1_000},
    )
    photos = []
    for i in range(4):
        channel.add_file(f"f{i}", _png())
        photos.append(Attachment("photo", f"f{i}", f"p{i}.png", "image/png", len(_png())))
    await channel.ask("My name is Zoe" + "." * 3_000, attachments=tuple(photos))
    for i in range(4):
        await channel.ask(f"turn {i}: " + "blah " * 800)
    messages = fake_llm.requests[-1].json["messages"]
    assert _image_count(fake_llm.requests[-1]) == 0
    users = [m["content"] for m in messages if m["role"] == "user"]
    assert len(users) == 5 and users[0].startswith("My name is Zoe")
