"""What a web tool may say about a server's answer: only what this code chose to say.

A server picks its reason phrase, its Content-Type, its Location, the bytes of a bad
status line (which aiohttp quotes in its exception text), even the names in its TLS
certificate. An error result is not framed as external content, so none of that text
may reach it: a status is said with the standard phrase for its code, a content type
as a ``type/subtype`` token, a URL only as parsed and percent-encoded again, a
transport failure as one of the plain reasons here, and a Retry-After as a duration.
"""

from __future__ import annotations

import errno
import http
import os
import re
import time
from email.utils import parsedate_to_datetime
from urllib.parse import quote

import aiohttp
from aiohttp import http_exceptions as parse_errors
from yarl import URL

MAX_URL = 200
_MAX_WAIT_S = 86_400
# RFC 9110's token characters, type "/" subtype, no parameters.
_MEDIA_TYPE = re.compile(r"[A-Za-z0-9!#$&^_.+-]{1,63}/[A-Za-z0-9!#$&^_.+-]{1,63}")
# What a URL keeps as is when shown; everything else (spaces, brackets, quotes,
# controls, non-ASCII) is percent-encoded, so no sentence can be spelled in it.
_URL_SAFE = ":/?#@!$&'()*+,;=%~-._"

# The parser's own failures (aiohttp chains them under a ClientResponseError that
# claims HTTP 400, or a ClientPayloadError): a fixed reason for each.
_MALFORMED: tuple[tuple[type[BaseException], str], ...] = (
    (parse_errors.BadStatusLine, "no valid HTTP status line"),
    (parse_errors.LineTooLong, "a status or header line too long to read"),
    (parse_errors.ContentEncodingError, "a body its Content-Encoding could not decode"),
    (parse_errors.ContentLengthError, "a body shorter than its Content-Length"),
    (parse_errors.TransferEncodingError, "a broken chunked body"),
    (parse_errors.InvalidHeader, "an invalid header"),
    (parse_errors.BadHttpMessage, "an invalid HTTP message"),
)


def shown_url(url: URL | str) -> str:
    """``url`` as it may appear in an error: re-encoded, at most ``MAX_URL`` characters."""
    text = quote(str(url), safe=_URL_SAFE)
    return text if len(text) <= MAX_URL else text[: MAX_URL - 1] + "…"


def shown_host(host: str) -> str:
    """A host name (from a redirect, so the server's choice) as it may appear in an error."""
    return shown_url(host)[:100]


def media_type(value: str) -> str:
    """A Content-Type header reduced to its ``type/subtype``, lower case; "" when it is
    none (the converter then says "unknown")."""
    head = value.split(";", 1)[0].strip()
    return head.lower() if _MEDIA_TYPE.fullmatch(head) else ""


def status_text(status: int) -> str:
    """``HTTP 403 Forbidden``: the code with its standard phrase, never the server's."""
    try:
        return f"HTTP {status} {http.HTTPStatus(status).phrase}"
    except ValueError:
        return f"HTTP {status}"


def retry_after_s(value: str | None, now: float | None = None) -> int | None:
    """A Retry-After header (seconds or an HTTP date) as seconds from now, at most a day;
    None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return min(int(value[:9]), _MAX_WAIT_S)
    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    left = when - (time.time() if now is None else now)
    return max(0, min(round(left), _MAX_WAIT_S))


def wait_advice(value: str | None) -> str:
    """What a rate limit's message tells the model to do, from its Retry-After."""
    seconds = retry_after_s(value)
    if seconds is None:
        return "wait a minute and try again"
    if seconds >= _MAX_WAIT_S:
        return "it asks to wait a day or more (Retry-After) before trying again"
    return f"it asks to wait {_duration(seconds)} (Retry-After) before trying again"


def _duration(seconds: int) -> str:
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7_200:
        return f"{round(seconds / 60)} min"
    return f"{round(seconds / 3_600)} h"


def failure(exc: aiohttp.ClientError) -> str:
    """A transport failure in plain words, none of them from the server."""
    malformed = _parse_error(exc)
    if malformed is not None:
        return f"the server sent a malformed response ({malformed})"
    if isinstance(exc, aiohttp.ClientPayloadError):
        return "the server sent a malformed response (a body that could not be read)"
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        return "its TLS certificate could not be verified"
    if isinstance(exc, aiohttp.ClientSSLError):
        return "the TLS handshake failed"
    if isinstance(exc, aiohttp.ClientConnectorError):
        return f"cannot connect ({_os_reason(exc.os_error)})"
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return "the server closed the connection without an answer"
    if isinstance(exc, aiohttp.ClientResponseError):
        return "the server sent a malformed response"
    if isinstance(exc, aiohttp.InvalidURL):
        return "the URL is not valid"
    if isinstance(exc, aiohttp.ClientConnectionError):
        return "the connection failed"
    return f"the request failed ({type(exc).__name__})"


def _parse_error(exc: BaseException) -> str | None:
    """The fixed reason of the parser error behind ``exc``, if one is."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        for kind, reason in _MALFORMED:
            if isinstance(cause, kind):
                return reason
        cause = cause.__cause__ or cause.__context__
    return None


def _os_reason(error: OSError) -> str:
    """The local system's words for an errno (never the peer's), else a generic one."""
    code = error.errno
    if code is None or code not in errno.errorcode:
        return "the connection failed"
    return os.strerror(code).lower()
