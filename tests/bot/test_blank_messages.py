"""A message with nothing to read (spaces, zero-width characters, a Hangul filler, Braille
blanks) cost a model turn, and its echo showed nothing; it is skipped now. A blank
caption on a file is no blank message: the file is read."""

from __future__ import annotations

from typing import Any

import pytest

from bot.messages import Attachment
from bot.text import shows_nothing
from tests.fakes.channel import FileChannel

BLANKS = ["     ", "\n\n\n", "\u200b\u200b\u200b", "\u200d\ufeff\u2060", "\u3164", "\u2800\u2800"]


@pytest.mark.parametrize(
    ("text", "blank"),
    [
        ("\u3164", True),
        ("\u115f\u1160 \uffa0", True),
        ("\u2800\u2800\n", True),
        ("\u3164\u3131", False),  # a filler beside a letter: the letter shows
        ("\u2801", False),  # a Braille pattern with a dot
    ],
)
def test_blank_glyphs_show_nothing(text: str, blank: bool) -> None:
    assert shows_nothing(text) is blank


async def test_blank_messages_cost_no_model_call(daemon_factory: Any, fake_llm: Any) -> None:
    _, chat = await daemon_factory()
    blanks = [await chat.say(text) for text in BLANKS]
    reply = await chat.ask("hi")  # one lane: the blanks were taken before it
    assert reply.text == "echo: hi"
    assert len(fake_llm.requests) == 1
    assert all(chat.replies_to(msg) == [] for msg in blanks)


async def test_a_file_with_a_blank_caption_is_read(daemon_factory: Any, fake_llm: Any) -> None:
    channel = FileChannel()
    channel.add_file("d1", b"the tide turns at noon")
    _, chat = await daemon_factory(channel=channel)
    note = Attachment("document", "d1", "note.txt", "text/plain")
    await chat.ask("\u200b", attachments=(note,))
    assert len(fake_llm.requests) == 1
    assert "the tide turns at noon" in str(fake_llm.requests[0].json["messages"])
