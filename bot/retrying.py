"""Retries that cost nothing until something fails.

A tenacity loop costs about 30 microseconds to build and step through even when the
first attempt succeeds, and the hot path runs several retried steps per message (the
dispatcher's journal steps, the model call). :func:`retry_after_failure` makes the
first attempt a plain await and builds the tenacity loop only once it has failed,
replaying that failure as the loop's first attempt: the policy (what is retried,
the backoff, the logging hooks, the attempt numbers) is exactly tenacity's.

:func:`backoff` describes such a policy without importing tenacity: its import (about
10 ms) is paid at the first failure, not by every start before ``ready:``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from tenacity import AsyncRetrying, RetryCallState

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


def backoff(
    *,
    initial: float,
    max_s: float,
    jitter: float = 1.0,
    attempts: int | None = None,
    before_sleep: Callable[[RetryCallState], None] | None = None,
    final: tuple[type[Exception], ...] = (),
) -> Callable[[], AsyncRetrying]:
    """A loop retrying any Exception but ``final`` ones with exponential backoff and
    jitter (``attempts`` None: until it succeeds or is cancelled), re-raising the last
    error when it stops."""

    def retrying() -> AsyncRetrying:
        import tenacity

        return tenacity.AsyncRetrying(
            wait=tenacity.wait_exponential_jitter(initial=initial, max=max_s, jitter=jitter),
            stop=tenacity.stop_never if attempts is None else tenacity.stop_after_attempt(attempts),
            before_sleep=before_sleep,
            retry=tenacity.retry_if_not_exception_type(final),
            reraise=True,
        )

    return retrying
