"""A repeat's schedule as a person reads it, in replies and listings (it was the cron
expression alone: "repeats '0 9 * * 5'")."""

from __future__ import annotations

import pytest

from bot.reminders.schedule import describe, in_words


@pytest.mark.parametrize(
    ("cron", "words"),
    [
        ("0 9 * * 5", "at 09:00 on Fridays"),
        ("0 9 * * *", "at 09:00 every day"),
        ("30 8 * * 1-5", "at 08:30 on weekdays"),
        ("0 9 * * mon-fri", "at 09:00 on weekdays"),
        ("0 18 * * 1,5", "at 18:00 on Mondays and Fridays"),
        ("0 9 * * 0,1,3", "at 09:00 on Mondays, Wednesdays and Sundays"),
        ("0 9 * * 0,6", "at 09:00 at weekends"),
        ("0 9 * * 7", "at 09:00 on Sundays"),  # cron's other Sunday
        ("0 9 7 * *", "at 09:00 on day 7 of each month"),
        ("0 */2 * * *", "every 2 hours"),
        ("0 */1 * * *", "every hour"),
        ("0 * * * *", "every hour"),
        ("*/15 * * * *", "every 15 minutes"),
        ("* * * * *", "every minute"),
    ],
)
def test_the_shapes_remind_every_writes_are_said_in_words(cron, words):
    assert in_words(cron) == words
    assert describe(cron) == f"{words} ('{cron}')"


@pytest.mark.parametrize(
    "cron",
    ["0 9 1,15 * 1", "5 4 * 12 *", "0 9,18 * * *", "5 * * * *", "5 */2 * * *", "*/0 * * * *"],
)
def test_any_other_expression_is_quoted_as_typed(cron):
    assert in_words(cron) is None
    assert describe(cron) == f"'{cron}'"
