"""bot/retrying.py: the first attempt is a plain await, tenacity's loop takes over after
a failure with the policy :func:`backoff` describes."""

from __future__ import annotations

import pytest

from bot.retrying import backoff, retry_after_failure


class _Flaky:
    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.attempts: list[int] = []

    async def __call__(self, attempt: int) -> str:
        self.attempts.append(attempt)
        if len(self.attempts) <= self.failures:
            raise OSError(f"busy {len(self.attempts)}")
        return "done"


async def test_a_first_success_needs_no_loop() -> None:
    def never() -> object:
        raise AssertionError("the retry loop was built for a success")

    assert await retry_after_failure(_Flaky(0), never) == "done"  # type: ignore[arg-type]


async def test_failures_are_retried_with_their_attempt_numbers_and_hook() -> None:
    slept: list[int] = []
    flaky = _Flaky(2)
    policy = backoff(
        initial=0.001, max_s=0.002, jitter=0, before_sleep=lambda s: slept.append(s.attempt_number)
    )
    assert await retry_after_failure(flaky, policy) == "done"
    assert flaky.attempts == [1, 2, 3]  # the first failure counts as attempt 1
    assert slept == [1, 2]


async def test_attempts_stop_the_loop_with_the_last_error() -> None:
    flaky = _Flaky(10)
    with pytest.raises(OSError, match="busy 3"):
        await retry_after_failure(flaky, backoff(initial=0.001, max_s=0.002, attempts=3))
    assert flaky.attempts == [1, 2, 3]


async def test_without_attempts_it_retries_until_success() -> None:
    flaky = _Flaky(6)
    assert await retry_after_failure(flaky, backoff(initial=0.001, max_s=0.001, jitter=0)) == "done"
    assert len(flaky.attempts) == 7
