"""``/remind <when> <what>`` without a ``|``: where the time ends and the text begins,
and ``/remind every ... at N``. The clock is fixed: Monday 2026-12-07, 11:00 in Berlin."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.errors import ToolError
from bot.reminders.commands import _every_split, split_when_what
from bot.reminders.repeats import every
from bot.reminders.timeparse import parse_when, zone

NOW = datetime(2026, 12, 7, 10, 0, tzinfo=UTC)
TZ = "Europe/Berlin"


@pytest.mark.parametrize(
    ("args", "when", "what", "expected_local"),
    [
        # was 'at 6pm 2' | 'tickets' at 2027-02-07 18:00
        ("at 6pm 2 tickets", "at 6pm", "2 tickets", "2026-12-07 18:00"),
        # was 11:00 tomorrow
        ("tomorrow at 8 pay 300 rent", "tomorrow at 8", "pay 300 rent", "2026-12-08 08:00"),
        ("monday at 9 standup", "monday at 9", "standup", "2026-12-14 09:00"),
        ("at 8 coffee", "at 8", "coffee", "2026-12-08 08:00"),
        ("in 1 hour 5 pushups", "in 1 hour", "5 pushups", "2026-12-07 12:00"),
        ("in 20 minutes second coffee", "in 20 minutes", "second coffee", "2026-12-07 11:20"),
        ("tomorrow 9am 10 min standup", "tomorrow 9am", "10 min standup", "2026-12-08 09:00"),
        ("in 30 minutes take 2 pills", "in 30 minutes", "take 2 pills", "2026-12-07 11:30"),
        ("in 10 minutes tea", "in 10 minutes", "tea", "2026-12-07 11:10"),
        ("tonight watch may december", "tonight", "watch may december", "2026-12-07 20:00"),
        ("tomorrow 9am | call mom", "tomorrow 9am", "call mom", "2026-12-08 09:00"),
        # an article starts the text: "at 5pm a" was read as 2027-01-07 17:00
        ("at 5pm a quick check", "at 5pm", "a quick check", "2026-12-07 17:00"),
        ("in 1 hour a meeting with Bob", "in 1 hour", "a meeting with Bob", "2026-12-07 12:00"),
        ("in 2 days an appointment", "in 2 days", "an appointment", "2026-12-09 11:00"),
        ("at 5pm one more call", "at 5pm", "one more call", "2026-12-07 17:00"),
        ("at 5pm we need milk", "at 5pm", "we need milk", "2026-12-07 17:00"),  # was Wednesday
        ("tomorrow at 8 su casa", "tomorrow at 8", "su casa", "2026-12-08 08:00"),
        ("at 5pm may I call", "at 5pm", "may I call", "2026-12-07 17:00"),  # was 7 May
        ("on 5 may call mom", "on 5 may", "call mom", "2027-05-05 09:00"),  # the month
    ],
)
def test_the_time_ends_where_the_text_begins(args, when, what, expected_local):
    assert split_when_what(args, TZ, NOW) == (when, what)
    local = parse_when(when, TZ, NOW).astimezone(zone(TZ))
    assert local.strftime("%Y-%m-%d %H:%M") == expected_local


@pytest.mark.parametrize("args", ["in 1 hour", "in 5 minutes", "in 2 days", "tomorrow at 8"])
def test_a_time_without_text_says_the_text_is_missing(args):
    """'/remind in 1 hour' was 'in 1' | 'hour': a reminder reading "hour" a month out."""
    with pytest.raises(ToolError, match="the reminder has no text"):
        split_when_what(args, TZ, NOW)


@pytest.mark.parametrize("args", ["", "blorp flurb", "in 5 tea"])
def test_no_time_at_all_is_the_usage(args):
    with pytest.raises(ToolError, match="usage: /remind"):
        split_when_what(args, TZ, NOW)


@pytest.mark.parametrize(
    ("text", "cron"),
    [
        ("day at 9", "0 9 * * *"),  # was "0 0 * * *": '9' read as September
        ("day at 9am", "0 9 * * *"),
        ("weekday at 8:30", "30 8 * * 1-5"),
        ("day at 8.30pm", "30 20 * * *"),
        ("day at noon", "0 12 * * *"),
    ],
)
def test_every_at_n_is_a_time_of_day(text, cron):
    assert every(text, TZ, NOW) == cron


@pytest.mark.parametrize(
    ("text", "cron"),
    [
        ("friday", "0 9 * * 5"),  # was the minute it was set: "0 11 * * 5"
        ("fridays", "0 9 * * 5"),
        ("mon and wed", "0 9 * * 1,3"),
        ("tues, thurs", "0 9 * * 2,4"),
        ("sunday at 18:00", "0 18 * * 0"),
        ("weekend", "0 9 * * 0,6"),
        ("week", "0 9 * * 1"),  # today's weekday: Monday
        ("weekly at 8", "0 8 * * 1"),
        ("month", "0 9 7 * *"),  # today's day of the month
        ("monthly at 7pm", "0 19 7 * *"),
    ],
)
def test_every_on_days_reads_whole_day_names_at_nine_unless_a_time_is_given(text, cron):
    assert every(text, TZ, NOW) == cron


@pytest.mark.parametrize("text", ["monster", "satisfy", "sundae", "thunder", "fried"])
def test_a_word_that_merely_starts_like_a_day_is_not_one(text):
    """'every month' was every Monday: the first three letters named the day."""
    with pytest.raises(ToolError, match=f"could not understand 'every {text}'"):
        every(text, TZ, NOW)


def test_a_repeat_without_a_bar_ends_where_the_day_names_do():
    assert _every_split("friday water the plants", TZ) == ("friday", "water the plants")
    assert _every_split("mon and thurs at 7 gym", TZ) == ("mon and thurs at 7", "gym")


@pytest.mark.parametrize(
    ("when", "expected_local"),
    [
        ("at 11:30", "2026-12-07 11:30"),  # was 2026-12-08: within the hour, so "tomorrow"
        ("11:45", "2026-12-07 11:45"),
        ("at 11:59am", "2026-12-07 11:59"),
        ("monday at 11:20", "2026-12-07 11:20"),
        ("at 10:55", "2026-12-08 10:55"),  # already passed today
        ("at 11:00", "2026-12-08 11:00"),  # now
        ("tomorrow at 11:30", "2026-12-08 11:30"),
        ("friday at 11:30", "2026-12-11 11:30"),
        ("monday at 10:30", "2026-12-14 10:30"),
    ],
)
def test_a_time_of_day_later_in_this_hour_is_today(when, expected_local):
    assert _local(when) == expected_local


@pytest.mark.parametrize(
    ("when", "expected_local"),
    [
        ("in half an hour", "2026-12-07 11:30"),  # was "could not understand"
        ("in a half hour", "2026-12-07 11:30"),
        ("in an hour and a half", "2026-12-07 12:30"),
        ("in one and a half hours", "2026-12-07 12:30"),
        ("in 2 and a half hours", "2026-12-07 13:30"),
        ("in 3 hours and a half", "2026-12-07 14:30"),
        ("in a quarter of an hour", "2026-12-07 11:15"),
        ("in three quarters of an hour", "2026-12-07 11:45"),
        ("in half a day", "2026-12-07 23:00"),
    ],
)
def test_amounts_said_in_words(when, expected_local):
    assert _local(when) == expected_local


def _local(when: str) -> str:
    return parse_when(when, TZ, NOW).astimezone(zone(TZ)).strftime("%Y-%m-%d %H:%M")


def test_an_amount_in_words_splits_from_the_text():
    assert split_when_what("in half an hour take the pizza out", TZ, NOW) == (
        "in half an hour",
        "take the pizza out",
    )


@pytest.mark.parametrize(
    ("when", "expected_local"),
    [
        ("tonight at 9", "2026-12-07 21:00"),  # was 09:00: "at 9" is 24-hour, before noon
        ("at 9:30 tonight", "2026-12-07 21:30"),
        ("tomorrow evening at 8", "2026-12-08 20:00"),
        ("this afternoon at 3", "2026-12-07 15:00"),
        ("tonight at 22", "2026-12-07 22:00"),
        ("tomorrow at 9", "2026-12-08 09:00"),  # no word for the evening: as before
    ],
)
def test_at_n_in_an_evening_phrase_is_after_noon(when, expected_local):
    assert _local(when) == expected_local


@pytest.mark.parametrize(
    ("when", "expected_local"),
    [
        ("on the 15th", "2026-12-15 09:00"),  # was "'15th' names no month"
        ("the 1st at 10", "2027-01-01 10:00"),  # this month's 1st is past: the next
        ("on the 7th", "2027-01-07 09:00"),  # today's 09:00 is past
        ("on the 7th at 18:00", "2026-12-07 18:00"),  # today, still ahead
        ("on the 31st", "2026-12-31 09:00"),
        ("the 15th of january", "2027-01-15 09:00"),  # a month named: as before
    ],
)
def test_a_day_of_the_month_alone_is_the_next_one_ahead(when, expected_local):
    assert _local(when) == expected_local


def test_a_day_of_the_month_skips_months_without_it():
    jan_31 = datetime(2027, 1, 31, 10, 0, tzinfo=UTC)
    local = parse_when("on the 30th", TZ, jan_31).astimezone(zone(TZ))
    assert local.strftime("%Y-%m-%d %H:%M") == "2027-03-30 09:00"  # February has none
    with pytest.raises(ToolError, match="'32nd' is no day of a month"):
        parse_when("on the 32nd", TZ, NOW)


def test_a_day_of_the_month_splits_from_the_text():
    assert split_when_what("on the 1st pay the rent", TZ, NOW) == ("on the 1st", "pay the rent")


@pytest.mark.parametrize(
    ("args", "when", "expected_local"),
    [
        ("tomorrow at 9: standup", "tomorrow at 9:", "2026-12-08 09:00"),  # was 11:00
        ("in 10 min: tea", "in 10 min:", "2026-12-07 11:10"),  # was the usage
        ("tomorrow at 9:30 - standup", "tomorrow at 9:30 -", "2026-12-08 09:30"),
        ("in 10 minutes, tea", "in 10 minutes,", "2026-12-07 11:10"),
    ],
)
def test_a_separator_after_the_time_hides_nothing(args, when, expected_local):
    assert split_when_what(args, TZ, NOW)[0] == when
    assert _local(when) == expected_local
