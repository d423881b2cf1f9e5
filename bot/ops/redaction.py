"""No secret reaches a log line: every record is redacted as it is made.

Secrets travel in places no call site controls: a provider's error text echoes the key
(whole, truncated or base64), SDKs log request URLs with the bot token in the path,
an ``api_base`` may carry a key in its query string, and pydantic's ``UserWarning``s
print input values. So redaction is not left to callers: a log-record factory masks the
configured secrets (and their base64 forms), key-shaped words, bot tokens in URL paths
and URL query values in every record, its traceback included, before any handler (the
stderr one, pytest's) sees it; and Python ``warnings`` are routed through logging so
they pass the same way.
"""

from __future__ import annotations

import base64
import logging
import re
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

MASK = "***"
_MIN_SECRET = 4  # shorter values would mask ordinary words
_URL = re.compile(r"[a-z][a-z0-9+.-]*://[^\s'\"<>]+", re.IGNORECASE)
_QUERY_VALUE = re.compile(r"([?&;][^=&#\s]+=)[^&#\s]+")
_USERINFO = re.compile(r"(://[^/@:\s]+:)[^/@\s]+@")
_TOKEN_PATH = re.compile(r"(/bot)\d+:[A-Za-z0-9_-]+")  # Bot API URLs: /bot<id>:<secret>/
_KEY_LIKE = re.compile(
    r"\b(?:sk|rk|pk)-[A-Za-z0-9_*.-]{6,}|\bxox[abeprs]-[A-Za-z0-9-]{6,}|\bxapp-[A-Za-z0-9-]{6,}"
)


class Redactor:
    """Masks what it was told is secret, and whatever looks like a credential."""

    def __init__(self) -> None:
        self._secrets: set[str] = set()
        self._ordered: list[str] = []

    def add(self, values: Iterable[str]) -> None:
        for value in values:
            if len(value) < _MIN_SECRET:
                continue
            raw = value.encode()
            forms = {
                value,
                base64.b64encode(raw).decode().rstrip("="),
                base64.urlsafe_b64encode(raw).decode().rstrip("="),
            }
            self._secrets |= forms
        self._ordered = sorted(self._secrets, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._ordered:
            if secret in text:
                text = text.replace(secret, MASK)
        if "://" in text:
            text = _URL.sub(lambda m: _mask_url(m.group()), text)
        return _KEY_LIKE.sub(MASK, text)


def _mask_url(url: str) -> str:
    url = _TOKEN_PATH.sub(rf"\1{MASK}", url)
    url = _USERINFO.sub(rf"\1{MASK}@", url)
    return _QUERY_VALUE.sub(rf"\1{MASK}", url)


def url_secrets(url: str) -> list[str]:
    """The parts of a configured URL that may be credentials: its password and query values."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    values = [v for _, _, v in (p.partition("=") for p in parts.query.split("&")) if v]
    return values + ([parts.password] if parts.password else [])


REDACTOR = Redactor()


class _RedactingFactory:
    """The log-record factory: the one it replaced makes the record, then it is redacted."""

    def __init__(self, base: Callable[..., logging.LogRecord]) -> None:
        self.base = base

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record = self.base(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: leave it to the handler to report
            return record
        redacted = REDACTOR(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        if record.exc_info:
            record.exc_text = REDACTOR(logging.Formatter().formatException(record.exc_info))
        if record.stack_info:
            record.stack_info = REDACTOR(record.stack_info)
        return record


def protect_logs(secrets: Iterable[str] = ()) -> None:
    """Redact every log record from now on (idempotent) and send ``warnings`` there too."""
    REDACTOR.add(secrets)
    current = logging.getLogRecordFactory()
    if not isinstance(current, _RedactingFactory):
        logging.setLogRecordFactory(_RedactingFactory(current))
    # Re-hooked every time: a test runner may have restored its own showwarning since.
    logging.captureWarnings(False)
    logging.captureWarnings(True)
