"""Pictures as the model is sent them (bot/media/pictures.py, bot/media/intake.py): the
type their bytes are, damage said plainly, upright, transparency kept readable."""

from __future__ import annotations

import base64
import io
from typing import Any

import pytest
from PIL import Image

from bot.errors import MediaError
from bot.media.pictures import fit
from bot.messages import Attachment
from tests.fakes.channel import FileChannel


def _encoded(image: Any, fmt: str, **options: Any) -> bytes:
    out = io.BytesIO()
    image.save(out, fmt, **options)
    return out.getvalue()


async def test_a_picture_goes_under_the_type_its_bytes_are_not_the_declared_one(
    daemon_factory, fake_llm
) -> None:
    """A PNG named shot.jpg (platforms take the declared type from the name): sent as
    image/jpeg with PNG bytes, the provider refused it (and every turn after)."""
    channel = FileChannel()
    await daemon_factory(
        channel=channel, media={"vision": "on"}, llm={"model": "openai/fake-model"}
    )
    png = _encoded(Image.new("RGB", (30, 20), (10, 20, 30)), "PNG")
    channel.add_file("f1", png)
    shot = Attachment("file", "f1", "shot.jpg", "image/jpeg", len(png))
    await channel.ask("what is this", attachments=(shot,))
    [url] = [
        p["image_url"]["url"]
        for m in fake_llm.requests[-1].json["messages"]
        if isinstance(m.get("content"), list)
        for p in m["content"]
        if p.get("type") == "image_url"
    ]
    head, _, data = url.partition(",")
    assert head == "data:image/png;base64"
    assert base64.b64decode(data) == png  # as it is, byte for byte


@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "WEBP", "GIF"])
def test_a_damaged_picture_within_the_limits_is_refused_not_sent(fmt: str) -> None:
    whole = _encoded(Image.effect_noise((300, 200), 60).convert("RGB"), fmt)
    with pytest.raises(MediaError, match="not a picture I can read"):
        fit(whole[: len(whole) // 2], "image/jpeg")
