"""Pictures as the model is sent them (bot/media/pictures.py, bot/media/intake.py): the
type their bytes are, damage said plainly, upright, transparency kept readable."""

from __future__ import annotations

import base64
import io
from typing import Any

import pytest
from PIL import Image

from bot.errors import MediaError
from bot.media.pictures import MAX_SIDE, fit
from bot.messages import Attachment
from tests.fakes.channel import FileChannel

ORIENTATION = 0x0112


def _encoded(image: Any, fmt: str, **options: Any) -> bytes:
    out = io.BytesIO()
    image.save(out, fmt, **options)
    return out.getvalue()


def _opened(data: bytes) -> Any:
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


def _sideways(width: int, height: int) -> bytes:
    """A phone photo as stored: landscape pixels, EXIF 6 (turn 90 degrees clockwise to
    show it), its top-left corner blue."""
    image = Image.new("RGB", (width, height), (200, 0, 0))
    image.paste((0, 0, 255), (0, 0, width // 4, height // 4))
    exif = Image.Exif()
    exif[ORIENTATION] = 6
    return _encoded(image, "JPEG", exif=exif.tobytes(), quality=60)


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


def test_a_large_phone_photo_is_shrunk_upright() -> None:
    data, mime = fit(_sideways(4_032, 3_024), "image/jpeg")
    shown = _opened(data)
    assert (mime, shown.size) == ("image/jpeg", (1_176, MAX_SIDE))  # portrait
    assert shown.getexif().get(ORIENTATION) in (None, 1)  # not turned a second time
    red, _, blue = shown.getpixel((shown.width - 20, 20))  # the blue corner, turned
    assert blue > 150 and red < 100


def test_a_small_sideways_photo_is_turned_upright_too() -> None:
    data, mime = fit(_sideways(400, 300), "image/jpeg")
    shown = _opened(data)
    assert (mime, shown.size) == ("image/jpeg", (300, 400))
    assert shown.getexif().get(ORIENTATION) in (None, 1)


def test_an_upright_small_photo_still_goes_byte_for_byte() -> None:
    exif = Image.Exif()
    exif[ORIENTATION] = 1
    photo = _encoded(Image.new("RGB", (400, 300), (1, 2, 3)), "JPEG", exif=exif.tobytes())
    assert fit(photo, "image/jpeg") == (photo, "image/jpeg")


def _transparent(mode: str) -> bytes:
    """Black text on a transparent background, too large to go as it is."""
    if mode == "P":
        image = Image.new("P", (2_400, 1_200), 0)
        image.putpalette([0, 0, 0, 0, 0, 0])  # both black: 0 is transparent
        image.paste(1, (200, 200, 2_200, 400))
        return _encoded(image, "PNG", transparency=0)
    image = Image.new(mode, (2_400, 1_200), (0,) * len(mode))
    image.paste((0,) * (len(mode) - 1) + (255,), (200, 200, 2_200, 400))
    return _encoded(image, "PNG")


@pytest.mark.parametrize("mode", ["RGBA", "LA", "P"])
def test_a_shrunk_transparent_picture_keeps_its_text_readable(mode: str) -> None:
    data, _ = fit(_transparent(mode), "image/png")
    shown = _opened(data).convert("RGB")
    assert shown.getpixel((5, 5)) == (255, 255, 255)  # the background: over white
    assert shown.getpixel((780, 230)) == (0, 0, 0)  # the text: black, as drawn


@pytest.mark.parametrize("mode", ["I;16", "I"])
def test_a_shrunk_sixteen_bit_greyscale_keeps_its_greys(mode: str) -> None:
    image = Image.new(mode, (2_400, 1_200), 32_768)
    image.paste(Image.new(mode, (1_200, 1_200), 8_192), (0, 0))
    fmt = "PNG" if mode == "I;16" else "TIFF"  # a 32-bit image: as TIFF keeps it
    data, _ = fit(_encoded(image, fmt), "image/png")
    shown = _opened(data).convert("L")
    assert abs(shown.getpixel((1_400, 300)) - 128) <= 2
    assert abs(shown.getpixel((100, 300)) - 32) <= 2
