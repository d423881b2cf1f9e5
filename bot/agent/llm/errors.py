"""Naming a failed model call, and deciding whether another attempt may succeed.

litellm maps each provider's errors onto its own exception classes, but not
consistently (a refused connection arrives as an HTTP 500), so the retry policy in
:mod:`bot.agent.llm.client` asks this module instead of matching exceptions itself. litellm
is passed in, never imported, so classification costs nothing at import time.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Any

from bot.agent.llm.response import EmptyResponse, StreamCut, StreamOverrun, get_field

REFUSED = "bad request (HTTP 400)"  # the request itself refused: the same again fails too
FILTERED = "content policy violation"  # refused by the provider's content filter
REFUSALS = frozenset({REFUSED, FILTERED})  # what sending again unchanged cannot mend
TOO_LONG = "context window exceeded"  # over the model's window: a shorter request may pass
NOT_FOUND = "model not found (HTTP 404)"  # no such model there (not pulled): a setup to fix


@dataclass(frozen=True, slots=True)
class Failure:
    """A failed attempt: its kind for logs and messages, and whether to retry it."""

    kind: str
    retryable: bool
    retry_after: float | None = None
    expected: bool = True


def retry_after(exc: BaseException) -> float | None:
    """Seconds from a Retry-After header on the provider's error response, if any."""
    headers: Any = getattr(exc, "headers", None) or get_field(
        getattr(exc, "response", None), "headers"
    )
    if headers is None:
        return None
    try:
        value = headers.get("retry-after-ms")
        if value is not None:
            return max(0.0, float(value) / 1000)
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return max(0.0, float(value))
        except ValueError:
            when = parsedate_to_datetime(str(value))
            return max(0.0, (when - datetime.now(when.tzinfo)).total_seconds())
    except (AttributeError, TypeError, ValueError):
        return None


def classify(litellm: Any, exc: BaseException) -> Failure:
    """Name a failure and say whether another attempt on the same model may succeed."""
    status = getattr(exc, "status_code", None)
    checks: tuple[tuple[str, str, bool], ...] = (
        ("Timeout", "timeout", True),
        ("RateLimitError", "rate limited (HTTP 429)", True),
        ("ContextWindowExceededError", TOO_LONG, False),
        ("ContentPolicyViolationError", FILTERED, False),
        ("BadRequestError", REFUSED, False),
        ("NotFoundError", NOT_FOUND, False),
        ("PermissionDeniedError", "permission denied (HTTP 403)", False),
        ("UnprocessableEntityError", "unprocessable request (HTTP 422)", False),
        ("ServiceUnavailableError", "service unavailable (HTTP 503)", True),
        ("BadGatewayError", "bad gateway (HTTP 502)", True),
        ("InternalServerError", f"server error (HTTP {status or 500})", True),
        ("APIConnectionError", "connection error", True),
    )
    if isinstance(exc, EmptyResponse):
        return Failure("empty response (no choices)", True)
    if isinstance(exc, StreamCut):
        return Failure("answer cut off mid-stream", True)
    if isinstance(exc, StreamOverrun):
        return Failure("answer ran past its bounds", False)
    if isinstance(exc, TimeoutError):
        return Failure("timeout", True)
    if is_connection_error(exc):
        # litellm reports a refused/reset connection as InternalServerError (HTTP 500).
        return Failure("connection error", True)
    for class_name, kind, retryable in checks:
        cls = getattr(litellm, class_name, None)
        if isinstance(cls, type) and isinstance(exc, cls):
            return Failure(kind, retryable, retry_after(exc) if retryable else None)
    if isinstance(status, int):
        retryable = status >= 500 or status in (408, 409, 425, 429)
        return Failure(f"HTTP {status}", retryable, retry_after(exc) if retryable else None)
    return Failure(f"unexpected error ({type(exc).__name__})", False, expected=False)


def is_connection_error(exc: BaseException) -> bool:
    """True when the cause chain holds a transport failure rather than an HTTP answer."""
    seen = 0
    cause: BaseException | None = exc
    while cause is not None and seen < 10:
        names = {cls.__name__ for cls in type(cause).__mro__}
        if "APITimeoutError" in names:
            return False
        if isinstance(cause, ConnectionError) or "APIConnectionError" in names:
            return True
        cause = cause.__cause__ or cause.__context__
        seen += 1
    return False


def is_auth_error(litellm: Any, exc: BaseException) -> bool:
    """True when the provider rejected the credentials (litellm's AuthenticationError)."""
    cls = getattr(litellm, "AuthenticationError", None)
    return isinstance(cls, type) and isinstance(exc, cls)
