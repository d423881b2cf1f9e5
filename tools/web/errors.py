"""The web tools' expected failures: each a ``ToolError`` (the model reads the message)
with the ``outcome`` label it is counted under in ``bot_web_calls_total``."""

from __future__ import annotations

from typing import ClassVar

from bot.errors import ToolError


class WebError(ToolError):
    outcome: ClassVar[str] = "error"


class WebTimeout(WebError):
    outcome = "timeout"


class RateLimited(WebError):
    outcome = "rate_limited"


class HttpStatusError(WebError):
    outcome = "http_error"


class Unsupported(WebError):
    outcome = "unsupported"


class TooLarge(WebError):
    outcome = "too_large"
