"""No secret reaches a log line: every record is redacted as it is made.

Secrets travel in places no call site controls: a provider's error text echoes the key
(whole, truncated or base64), SDKs log request URLs with the bot token in the path,
an ``api_base`` may carry a key in its query string, and pydantic's ``UserWarning``s
print input values. So redaction is not left to callers: a log-record factory masks the
configured secrets (and their base64 forms), key-shaped words, bot tokens in URL paths
and URL query values in every record, its traceback included, before any handler (the
stderr one, pytest's) sees it; and Python ``warnings`` are routed through logging so
they pass the same way.

A configured value too short or too common to be a secret (``"none"``, ``"x"``, any
placeholder under 8 characters, the placeholders local servers are given) is not
masked: masking ``none`` turned ``channels=none`` into ``channels=***`` in every
report. :func:`protect_logs` returns such values so start-up can say so once.
"""

from __future__ import annotations

import base64
import logging
import re
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import unquote_plus, urlsplit

MASK = "***"
MIN_SECRET = 8  # shorter values are placeholders, and masking them garbles ordinary words
# Placeholders long enough to pass MIN_SECRET that no provider issues as a real key.
PLACEHOLDERS = frozenset(
    {"placeholder", "changeme", "change-me", "not-needed", "notneeded", "sk-no-key-required"}
)
_URL = re.compile(r"[a-z][a-z0-9+.-]*://[^\s'\"<>]+", re.IGNORECASE)
_QUERY_VALUE = re.compile(r"([?&;][^=&#\s]+=)[^&#\s]+")
_USERINFO = re.compile(r"(://[^/@:\s]+:)[^/@\s]+@")
_TOKEN_PATH = re.compile(r"(/bot)\d+:[A-Za-z0-9_-]+")  # Bot API URLs: /bot<id>:<secret>/
_PATH_KEY = re.compile(r"[A-Za-z0-9_\-.~%+=]{16,}")
# A query key naming one of these carries a credential (password, sslpassword, api_key,
# access_token, client_secret, sslkey...); the other values stay readable.
_SECRET_KEYS = ("pass", "secret", "token", "key")
_KEY_LIKE = re.compile(
    r"\b(?:sk|rk|pk)-[A-Za-z0-9_*.-]{6,}|\bxox[abeprs]-[A-Za-z0-9-]{6,}|\bxapp-[A-Za-z0-9-]{6,}"
)


class Redactor:
    """Masks what it was told is secret, and whatever looks like a credential."""

    def __init__(self) -> None:
        self._secrets: set[str] = set()
        self._ordered: list[str] = []
        self._ignored: set[str] = set()

    def add(self, values: Iterable[str]) -> list[str]:
        """Mask ``values`` from now on; returns those newly ignored (see :func:`maskable`)."""
        ignored: list[str] = []
        for value in values:
            if not maskable(value):
                if value and value not in self._ignored:
                    self._ignored.add(value)
                    ignored.append(value)
                continue
            raw = value.encode()
            forms = {
                value,
                base64.b64encode(raw).decode().rstrip("="),
                base64.urlsafe_b64encode(raw).decode().rstrip("="),
            }
            self._secrets |= forms
        self._ordered = sorted(self._secrets, key=len, reverse=True)
        return ignored

    def __call__(self, text: str) -> str:
        for secret in self._ordered:
            if secret in text:
                text = text.replace(secret, MASK)
        if "://" in text:
            text = _URL.sub(lambda m: _mask_url(m.group()), text)
        return _KEY_LIKE.sub(MASK, text)


def maskable(value: str) -> bool:
    """Whether a configured value can be a secret worth masking wherever it appears."""
    return len(value.strip()) >= MIN_SECRET and value.strip().lower() not in PLACEHOLDERS


def _mask_url(url: str) -> str:
    url = _TOKEN_PATH.sub(rf"\1{MASK}", url)
    url = _USERINFO.sub(rf"\1{MASK}@", url)
    return mask_query(url)


def mask_query(url: str) -> str:
    """``url`` with every query value masked: a driver may take the password there
    (``?password=``, ``?sslpassword=``), and nothing here knows every such name."""
    return _QUERY_VALUE.sub(rf"\1{MASK}", url)


def masked_url(url: str, *, key_paths: bool = False) -> str:
    """``url`` for a message: the password of its user info and the values of its
    secret-bearing query keys masked (``key_paths``: path segments shaped like a key too),
    the rest kept so that the operator sees which scheme, host and database were meant.
    Parsed by hand, not by ``urlsplit``, so that a malformed URL (a mistyped scheme, a bad
    port, none at all: ``bot:pw@db/x``) is masked as well."""
    scheme, sep, rest = url.partition("://") if "://" in url else ("", "", url)
    netloc, tail = _authority(rest)
    userinfo, at, host = netloc.rpartition("@")
    user, colon, _ = userinfo.partition(":")
    if key_paths and _key_shaped(user):  # a key given as the user name: https://KEY@host
        user = MASK
    userinfo = f"{user}{colon}{MASK}" if colon else user
    tail, hash_, fragment = tail.partition("#")
    path, ask, query = tail.partition("?")
    if key_paths:
        path = "/".join(MASK if _key_shaped(s) else s for s in path.split("/"))
    masked = f"{path}{ask}{_masked_pairs(query)}{hash_}{_masked_pairs(fragment)}"
    return f"{scheme}{sep}{userinfo}{at}{host}{masked}"


def _authority(rest: str) -> tuple[str, str]:
    """``rest`` (what follows ``://``) as its authority and the rest. A password with an
    unescaped ``/``, ``?`` or ``#`` in it would end the authority early and be shown as
    path: so a ``user:...`` authority with an ``@`` further on runs to that ``@`` (a
    ``host:port`` with an ``@`` in its path is then masked too: more, never less)."""
    end = _next_delimiter(rest, 0)
    if "@" not in rest[:end] and ":" in rest[:end] and "@" in rest[end:]:
        end = _next_delimiter(rest, rest.index("@", end))
    return rest[:end], rest[end:]


def _next_delimiter(text: str, start: int) -> int:
    """Where the authority that may start before ``start`` ends: the next ``/ ? #``."""
    return next((i for i in range(start, len(text)) if text[i] in "/?#"), len(text))


def _masked_pairs(query: str) -> str:
    """``key=value&...`` with the value masked where the key may name a secret."""
    pairs = []
    for pair in query.split("&"):
        key, sep, value = pair.partition("=")
        name = unquote_plus(key).lower()
        secret = sep and value and any(word in name for word in _SECRET_KEYS)
        pairs.append(f"{key}={MASK}" if secret else pair)
    return "&".join(pairs)


def url_secrets(url: str) -> list[str]:
    """The parts of a configured URL that may be credentials: its password, its query
    values, and path segments shaped like a key (hosted MCP servers often put the key in
    the path: ``/api/mcp/s/<key>/mcp``)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    values = [v for _, _, v in (p.partition("=") for p in parts.query.split("&")) if v]
    values += [s for s in parts.path.split("/") if _key_shaped(s)]
    return values + ([parts.password] if parts.password else [])


def _key_shaped(segment: str) -> bool:
    """A path segment that reads as a generated key rather than a word or a version:
    at least 16 characters of a token's alphabet, with both letters and digits
    (``mcp``, ``v1``, ``streamable-http``, ``2025-03-26`` are not)."""
    return (
        _PATH_KEY.fullmatch(segment) is not None
        and any(c.isdigit() for c in segment)
        and any(c.isalpha() for c in segment)
    )


REDACTOR = Redactor()


def redacted(value: Any) -> Any:
    """``value`` (JSON-shaped: dicts, lists, strings) with every string redacted: for
    what is served without a login (``/healthz``, ``/status``), where an error's text
    may quote a URL with its key."""
    if isinstance(value, str):
        return REDACTOR(value)
    if isinstance(value, dict):
        return {k: redacted(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redacted(v) for v in value]
    return value


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


def protect_logs(secrets: Iterable[str] = ()) -> list[str]:
    """Redact every log record from now on (idempotent) and send ``warnings`` there too.
    Returns the values not masked because they cannot be secrets, each once per process."""
    ignored = REDACTOR.add(secrets)
    current = logging.getLogRecordFactory()
    if not isinstance(current, _RedactingFactory):
        logging.setLogRecordFactory(_RedactingFactory(current))
    # Re-hooked every time: a test runner may have restored its own showwarning since.
    logging.captureWarnings(False)
    logging.captureWarnings(True)
    return ignored
