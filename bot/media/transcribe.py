"""Voice notes and audio files as text, through any litellm transcription model
(``litellm.atranscription``: OpenAI's whisper-1, Groq's whisper-large-v3, a local
OpenAI-compatible server).
"""

from __future__ import annotations

import logging

from bot.agent.llm.client import litellm_module
from bot.config.media import MediaSettings
from bot.errors import MediaError

log = logging.getLogger(__name__)

# The extensions OpenAI-style servers read the format from (default: OGG Opus voice notes).
SUFFIXES = {"audio/mpeg": "mp3", "audio/mp4": "m4a", "audio/x-m4a": "m4a", "audio/wav": "wav",
            "audio/x-wav": "wav", "audio/webm": "webm", "audio/flac": "flac"}  # fmt: skip
HOW_TO_CONFIGURE = (
    'set [media] transcription_model (for example "whisper-1" or '
    '"groq/whisper-large-v3", with transcription_api_key or the provider\'s key variable)'
)


class Transcriber:
    def __init__(self, settings: MediaSettings, timeout_s: float = 120) -> None:
        self.model = settings.transcription_model
        self._api_base = settings.transcription_api_base or None
        self._api_key = settings.transcription_api_key.get_secret_value() or None
        self._timeout_s = timeout_s

    @property
    def configured(self) -> bool:
        return bool(self.model)

    async def transcribe(self, name: str, data: bytes, mime: str) -> str:
        """The words said; :class:`MediaError` when the model fails or hears nothing."""
        try:
            litellm = await litellm_module()
            resp = await litellm.atranscription(
                model=self.model,
                file=(name or f"voice.{SUFFIXES.get(mime, 'ogg')}", data, mime or "audio/ogg"),
                api_base=self._api_base,
                api_key=self._api_key,
                timeout=self._timeout_s,
                max_retries=0,
            )
        except Exception as exc:  # litellm maps each provider's failure to its own kinds
            log.warning("transcription with %s failed: %s", self.model, exc)
            raise MediaError("the transcription model is unavailable right now") from exc
        text = str(getattr(resp, "text", "") or "").strip()
        if not text:
            raise MediaError("no words were heard in it")
        return text
