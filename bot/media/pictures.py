"""Pictures made fit for a vision model: at most 1,568 pixels on the long side (what
Anthropic recommends; OpenAI scales to 2,048 x 768 for high detail anyway) and a few MB
(providers refuse larger images: Anthropic 5 MB, OpenAI 20 MB), as JPEG when they had to
be made smaller: upright (a phone photo's EXIF rotation applied), transparency over
white. A picture already within both, of a type every provider takes and upright as
stored, goes as it is, byte for byte, under the type its bytes are.

Pillow reads the bytes (it arrives with python-pptx and is the maintained imaging
library); a decompression bomb (a small file of billions of pixels) is refused by its
pixel cap, an unknown format (HEIC without a plugin) or a damaged file (decoded whole
first) is said plainly.
"""

from __future__ import annotations

import functools
import io
import logging
import warnings
from typing import Any

from bot.errors import MediaError

log = logging.getLogger(__name__)

MAX_SIDE = 1_568
MAX_BYTES = 3_500_000
MAX_PIXELS = 60_000_000  # about 8,000 x 7,500: a larger picture is refused unread
SENT_AS_IS = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
_ORIENTATION = 0x0112  # the EXIF tag: 1 is upright


@functools.cache
def _pillow() -> Any:
    """Pillow's Image, set to refuse pictures past the cap; its warning for those below
    twice the cap is silenced, as :func:`fit` refuses them itself."""
    from PIL import Image

    Image.MAX_IMAGE_PIXELS = MAX_PIXELS
    warnings.filterwarnings("ignore", category=Image.DecompressionBombWarning)
    return Image


def fit(data: bytes, mime: str) -> tuple[bytes, str]:
    """``data`` and the type its bytes are (never the one declared: providers refuse an
    image whose type does not match) as the model is sent it; :class:`MediaError` when
    it is no picture Pillow reads. CPU-bound: run it on a thread."""
    from PIL import UnidentifiedImageError

    Image = _pillow()
    try:
        with Image.open(io.BytesIO(data)) as image:
            # Pillow itself refuses only past twice its cap (between, it warns and decodes).
            if image.width * image.height > MAX_PIXELS:
                raise Image.DecompressionBombError
            fmt = Image.MIME.get(image.format or "", "")
            if _as_is(image, fmt, len(data)):
                # Open read the header only: a damaged (truncated) file fails here, where
                # it is said plainly, not at the provider.
                image.load()
                return data, fmt
            return _smaller(image), "image/jpeg"
    except Image.DecompressionBombError:
        raise MediaError(f"it has more than {MAX_PIXELS:,} pixels") from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        log.info("picture not readable: %s", exc)
        raise MediaError("it is not a picture I can read (damaged, or an unknown format)") from None


def _as_is(image: Any, fmt: str, size: int) -> bool:
    """Within every limit, of a type providers take, and upright as stored (a phone
    photo's EXIF rotation is not applied by every provider)."""
    upright = image.getexif().get(_ORIENTATION, 1) == 1
    return fmt in SENT_AS_IS and max(image.size) <= MAX_SIDE and size <= MAX_BYTES and upright


def _smaller(image: Any) -> bytes:
    """``image`` made to fit, upright, as JPEG (quality 85). Shrunk before it is turned,
    so a JPEG is decoded at a reduced scale."""
    from PIL import ImageOps

    image.thumbnail((MAX_SIDE, MAX_SIDE))
    upright = ImageOps.exif_transpose(image)  # the rotation is applied, its tag dropped
    out = io.BytesIO()
    _flat(upright).save(out, "JPEG", quality=85)
    return out.getvalue()


def _flat(image: Any) -> Any:
    """``image`` as RGB for JPEG. A plain ``convert("RGB")`` drops transparency (a
    transparent background goes black, and black text on it vanishes) and clips 16-bit
    greyscale (nearly all white); transparency goes over white, greyscale past 8 bits
    is scaled down to 8."""
    Image = _pillow()
    if image.mode.startswith("I"):
        wide = image.mode.startswith("I;16") or image.getextrema()[1] > 255
        image = image.convert("I").point(lambda v: v * (1 / 256 if wide else 1)).convert("L")
    if image.mode in ("RGBA", "LA", "PA", "RGBa", "La") or "transparency" in image.info:
        rgba = image.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(white, rgba).convert("RGB")
    return image.convert("RGB")
