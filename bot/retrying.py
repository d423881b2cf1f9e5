"""Retries that cost nothing until something fails.

A tenacity loop costs about 30 microseconds to build and step through even when the
first attempt succeeds, and the hot path runs several retried steps per message (the
dispatcher's journal steps, the model call). :func:`retry_after_failure` makes the
first attempt a plain await and builds the tenacity loop only once it has failed,
replaying that failure as the loop's first attempt: the policy (what is retried,
the backoff, the logging hooks, the attempt numbers) is exactly tenacity's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from tenacity import AsyncRetrying

R = TypeVar("R")


async def retry_after_failure(
    call: Callable[[int], Awaitable[R]], retrying: Callable[[], AsyncRetrying]
) -> R:
    """``await call(1)``; when it raises an Exception, ``retrying()`` decides: that
    failure counts as attempt 1 and later attempts are ``call(n)``."""
    try:
        return await call(1)
    except Exception as exc:
        failure: Exception | None = exc
    async for attempt in retrying():
        with attempt:
            if failure is not None:
                replayed, failure = failure, None
                raise replayed
            return await call(attempt.retry_state.attempt_number)
    raise AssertionError("unreachable: tenacity returns, re-raises or stops with an error")
