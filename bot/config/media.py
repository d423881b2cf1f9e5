"""``[media]``: what the assistant does with pictures, voice notes and documents users
send, and the limits on files it receives and sends.

A vision or transcription model that is named must be a litellm model name; its server
and key are optional (empty: the provider's own, from its environment variable).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr

from bot.config.section import Section

VisionChoice = Literal["auto", "on", "off"]


class MediaSettings(Section):
    # Inbound files larger than this (as the platform declares them) are not downloaded.
    max_inbound_mb: float = Field(default=20, gt=0, le=2_000)
    # auto: images reach the chat model when litellm says it supports vision; on: always
    # (a self-hosted model litellm does not know); off: never.
    vision: VisionChoice = "auto"
    # Describes an image in words when the chat model cannot see ("" = none).
    vision_model: str = ""
    vision_api_base: str = ""
    vision_api_key: SecretStr = SecretStr("")
    # Images stay in the request for this many of the latest user turns, then a line.
    keep_images_turns: int = Field(default=3, ge=0, le=50)
    # Voice notes and audio files become text with this model ("" = not transcribed).
    transcription_model: str = ""
    transcription_api_base: str = ""
    transcription_api_key: SecretStr = SecretStr("")
    # Converting one document (a file sent, a page web_fetch read) runs in a child process
    # killed after convert_timeout_s, reads this many PDF pages at most, and refuses an
    # Office file (a zip) unpacking past max_unpacked_mb; the child's memory is capped at
    # twice max_unpacked_mb plus 256 MB, so a PDF whose streams inflate past that (a
    # deflate bomb) is refused too: a 10,000-page PDF or a bomb stops here.
    convert_timeout_s: float = Field(default=60, gt=0)
    max_pdf_pages: int = Field(default=500, ge=1)
    max_unpacked_mb: float = Field(default=200, gt=0)
