"""Pictures as the model is sent them (bot/media/pictures.py, bot/media/intake.py): the
type their bytes are, damage said plainly, upright, transparency kept readable."""

from __future__ import annotations

import io
from typing import Any

import pytest
from PIL import Image

from bot.errors import MediaError
from bot.media.pictures import fit


def _encoded(image: Any, fmt: str, **options: Any) -> bytes:
    out = io.BytesIO()
    image.save(out, fmt, **options)
    return out.getvalue()


@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "WEBP", "GIF"])
def test_a_damaged_picture_within_the_limits_is_refused_not_sent(fmt: str) -> None:
    whole = _encoded(Image.effect_noise((300, 200), 60).convert("RGB"), fmt)
    with pytest.raises(MediaError, match="not a picture I can read"):
        fit(whole[: len(whole) // 2], "image/jpeg")
