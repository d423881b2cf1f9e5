from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

import pytest

from bot.errors import ToolError
from bot.reminders.cron import cron_trigger, next_occurrence
from bot.reminders.timeparse import check_future, format_delay, format_local, parse_when, zone

NOW = datetime(2026, 11, 29, 13, 0, tzinfo=UTC)  # 21:00 in Shanghai


@pytest.mark.parametrize(
    ("text", "expected_local"),
    [
        ("in 10 minutes", "2026-11-29 21:10"),
        ("tomorrow at 9am", "2026-11-30 09:00"),
        ("next Monday 8:30", "2026-11-30 08:30"),
        ("2026-12-01T09:00", "2026-12-01 09:00"),  # naive ISO = the user's zone
        ("2026-12-01T09:00:00+00:00", "2026-12-01 17:00"),  # explicit offset wins
        ("2026-12-01T01:00:00Z", "2026-12-01 09:00"),
    ],
)
def test_parse_when_in_user_zone(text, expected_local):
    when = parse_when(text, "Asia/Shanghai", NOW)
    assert when.tzinfo is UTC
    assert when.astimezone(zone("Asia/Shanghai")).strftime("%Y-%m-%d %H:%M") == expected_local


def test_same_phrase_differs_by_zone():
    a = parse_when("tomorrow at 9am", "Asia/Shanghai", NOW)
    b = parse_when("tomorrow at 9am", "America/New_York", NOW)
    assert b - a == timedelta(hours=13)


@pytest.mark.parametrize("text", ["", "   ", "blorp the flurb", "next fortnight-ish"])
def test_unparseable_time_is_a_clear_error(text):
    with pytest.raises(ToolError, match="time"):
        parse_when(text, "UTC", NOW)


def test_past_and_far_future_are_refused():
    with pytest.raises(ToolError, match="in the past"):
        check_future(NOW - timedelta(minutes=1), NOW, "UTC")
    with pytest.raises(ToolError, match="10 years"):
        check_future(NOW + timedelta(days=3653), NOW, "UTC")
    check_future(NOW + timedelta(days=3650), NOW, "UTC")


@pytest.mark.parametrize("name", ["Mars/Olympus", "", "UTC ", "../etc/passwd", "/etc/localtime"])
def test_unknown_zone(name):
    with pytest.raises(ToolError, match="IANA"):
        zone(name)


@pytest.mark.parametrize(
    "expr", ["* * * *", "0 9 * * * *", "61 * * * *", "0 25 * * *", "0 9 * * funday", "bogus"]
)
def test_invalid_cron(expr):
    with pytest.raises(ToolError, match="cron"):
        cron_trigger(expr, "UTC")


@pytest.mark.parametrize(
    ("tz", "start", "utc_hours"),
    [
        # Europe/Berlin: CET -> CEST on 2026-03-29, CEST -> CET on 2026-10-25
        ("Europe/Berlin", datetime(2026, 3, 27, 12, tzinfo=UTC), [8, 7, 7, 7]),
        ("Europe/Berlin", datetime(2026, 10, 23, 12, tzinfo=UTC), [7, 8, 8, 8]),
        ("America/New_York", datetime(2026, 3, 6, 18, tzinfo=UTC), [14, 13, 13, 13]),
    ],
)
def test_daily_nine_stays_nine_local_across_dst(tz, start, utc_hours):
    when = start
    seen = []
    for _ in range(4):
        when = next_occurrence("0 9 * * *", tz, when)
        assert when is not None
        assert when.astimezone(zone(tz)).hour == 9
        seen.append(when.hour)
    assert seen == utc_hours


def test_format_helpers():
    assert format_delay(timedelta(hours=2, minutes=5)) == "2 h 5 min"
    assert format_delay(timedelta(days=3, hours=4)) == "3 d 4 h"
    assert format_delay(timedelta(seconds=45)) == "45 s"
    assert format_local(NOW, "Asia/Shanghai") == "Sun 2026-11-29 21:00 Asia/Shanghai"


def test_an_overlong_time_phrase_is_refused_before_dateparser_sees_it():
    phrase = "tomorrow at 9am " * 1_000  # ~16,000 characters: dateparser takes ~0.6 s on it
    with pytest.raises(ToolError, match="at most 200 characters"):
        parse_when(phrase, "UTC", NOW)
    with pytest.raises(ToolError, match="at most 200 characters"):
        parse_when("x" * 201, "UTC", NOW)
    padded = "  tomorrow at 9am" + " " * 500  # surrounding blanks do not count
    assert parse_when(padded, "UTC", NOW) > NOW


# Monday 2026-12-07, 11:00 in Berlin: the clock of the auditor's misread phrases.
MONDAY = datetime(2026, 12, 7, 10, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected_local"),
    [
        ("tomorrow at 8", "2026-12-08 08:00"),  # was 11:00: the number was dropped
        ("at 8", "2026-12-08 08:00"),  # was 2027-08-07: August; 08:00 is past today
        ("at 18", "2026-12-07 18:00"),
        ("at 8:30", "2026-12-08 08:30"),
        ("at 6pm", "2026-12-07 18:00"),
        ("at 6 p.m.", "2026-12-07 18:00"),
        ("at 12am", "2026-12-08 00:00"),
        ("monday at 9", "2026-12-14 09:00"),  # was 2027-09-07: September
        ("friday at 8.30pm", "2026-12-11 20:30"),
        ("tomorrow at 8am", "2026-12-08 08:00"),
        ("tomorrow 8:00", "2026-12-08 08:00"),
        ("december 24 at 7", "2026-12-24 07:00"),
        ("5th of january", "2027-01-05 09:00"),  # a day with no time: 09:00
        ("in 2 months", "2027-02-07 11:00"),
        ("in 90 seconds", "2026-12-07 11:01"),
    ],
)
def test_a_number_at_a_time_is_a_time_of_day(text, expected_local):
    when = parse_when(text, "Europe/Berlin", MONDAY)
    assert when.astimezone(zone("Europe/Berlin")).strftime("%Y-%m-%d %H:%M") == expected_local


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("in 5", "'5' has no unit"),  # was 2027-05-07: May
        ("at 6pm 2", "'2' has no unit"),  # was 2027-02-07 18:00: February
        ("tomorrow 8", "'8' has no unit"),
        ("in 1", "'1' has no unit"),
        ("5th", "names no month"),  # was 2027-05-07 ("on the 5th": the next 5th)
        ("2027", "has no unit"),
        ("1700000000", "has no unit"),  # never a Unix time
        ("may", "names no day"),
        ("at 25", "not a time of day"),
        ("at 13pm", "not a time of day"),
    ],
)
def test_a_number_with_nothing_to_place_it_is_refused(text, error):
    with pytest.raises(ToolError, match=error):
        parse_when(text, "Europe/Berlin", MONDAY)


NY = "America/New_York"  # clocks go back on 2026-11-01: 02:00 EDT is 01:00 EST again


@pytest.mark.parametrize(
    ("tz", "expr", "first", "second"),
    [
        (NY, "30 1 * * *", datetime(2026, 11, 1, 5, 30), datetime(2026, 11, 2, 6, 30)),
        (NY, "0 1 * * sun", datetime(2026, 11, 1, 5, 0), datetime(2026, 11, 8, 6, 0)),
        (
            "Europe/Berlin",
            "30 2 * * *",
            datetime(2026, 10, 25, 0, 30),
            datetime(2026, 10, 26, 1, 30),
        ),
    ],
)
def test_a_daily_time_in_the_repeated_hour_fires_once(tz, expr, first, second):
    """01:30 comes twice the night clocks go back; it fired at both (05:30Z, 06:30Z)."""
    fired = next_occurrence(expr, tz, first.replace(tzinfo=UTC) - timedelta(hours=6))
    assert fired == first.replace(tzinfo=UTC)
    assert next_occurrence(expr, tz, fired) == second.replace(tzinfo=UTC)


MONDAY_10 = datetime(2026, 12, 7, 10, tzinfo=UTC)  # a Monday, 10:00 UTC


@pytest.mark.parametrize(
    ("expr", "days"),
    [
        # cron's weekday numbers: 0 and 7 are Sunday, 1 is Monday (APScheduler 3 counts
        # from Monday: "1-5" ran Tuesday to Saturday)
        ("0 9 * * 1-5", ["Tue", "Wed", "Thu", "Fri", "Mon"]),
        ("0 9 * * 1", ["Mon", "Mon"]),
        ("0 9 * * 0", ["Sun", "Sun"]),
        ("0 9 * * 7", ["Sun", "Sun"]),
        ("0 9 * * 6,0", ["Sat", "Sun", "Sat"]),
        ("0 9 * * */2", ["Tue", "Thu", "Sat", "Sun", "Tue"]),
        ("0 9 * * 1/3", ["Thu", "Mon", "Thu"]),
        ("0 9 * * mon-fri", ["Tue", "Wed", "Thu", "Fri", "Mon"]),
        ("0 9 * * SUN", ["Sun", "Sun"]),
    ],
)
def test_weekdays_are_numbered_as_cron_numbers_them(expr, days):
    when, seen = MONDAY_10, []
    for _ in days:
        when = next_occurrence(expr, "UTC", when)
        assert when is not None
        seen.append(when.strftime("%a"))
    assert seen == days


@pytest.mark.parametrize(
    ("field", "error"),
    [("8", "not 0-7"), ("5-1", "runs backwards"), ("mon/0", "at least 1"), ("x-2", "not a day")],
)
def test_a_weekday_field_cron_would_refuse_is_refused(field, error):
    with pytest.raises(ToolError, match=error):
        cron_trigger(f"0 9 * * {field}", "UTC")


@pytest.mark.parametrize(
    ("text", "expected_local"),
    [
        ("friday", "2026-12-11 09:00"),  # was 00:00, the night before
        ("Friday", "2026-12-11 09:00"),
        ("next monday", "2026-12-14 09:00"),
        ("december 24", "2026-12-24 09:00"),
        ("2026-12-11", "2026-12-11 09:00"),  # an ISO 8601 date alone
        # a time of day named is kept, midnight too
        ("friday at 0:00", "2026-12-11 00:00"),
        ("friday midnight", "2026-12-11 00:00"),
        ("friday evening", "2026-12-11 18:00"),
        ("2026-12-11T00:00", "2026-12-11 00:00"),
        # a day counted from now keeps the time of now
        ("tomorrow", "2026-12-08 11:00"),
        ("in 2 days", "2026-12-09 11:00"),
    ],
)
def test_a_day_named_without_a_time_of_day_is_at_nine(text, expected_local):
    when = parse_when(text, "Europe/Berlin", MONDAY)
    assert when.astimezone(zone("Europe/Berlin")).strftime("%Y-%m-%d %H:%M") == expected_local


def test_at_midnight_a_day_counted_from_now_still_keeps_the_time_of_now():
    """At 00:00 sharp "in 2 days" is at 00:00 too; only a named day moves to 09:00."""
    midnight = datetime(2026, 12, 6, 23, 0, tzinfo=UTC)  # Monday 00:00 in Berlin
    local = [
        parse_when(text, "Europe/Berlin", midnight).astimezone(zone("Europe/Berlin"))
        for text in ("in 2 days", "friday")
    ]
    assert [f"{t:%a %H:%M}" for t in local] == ["Wed 00:00", "Fri 09:00"]


@pytest.mark.parametrize(
    "tz",
    ["America/New_York", "America/Los_Angeles", "Europe/Berlin", "Asia/Tokyo", "Etc/GMT+10"],
)
def test_a_time_of_day_alone_is_today_while_ahead_else_tomorrow(tz):
    """Said at each hour of a year's last day: a passed one was Dec 1 of next year, and
    west of UTC one passed within the UTC offset's hours was refused as past."""
    local = zone(tz)
    for hour in range(24):
        said = datetime(2026, 12, 31, hour, 30, tzinfo=local)
        for text, clock in (("at 9am", time(9)), ("21:00", time(21)), ("at 15:45", time(15, 45))):
            expected = datetime.combine(said.date(), clock, tzinfo=local)
            if expected <= said:
                expected = datetime.combine(date(2027, 1, 1), clock, tzinfo=local)
            got = parse_when(text, tz, said.astimezone(UTC)).astimezone(local)
            assert got == expected, f"{text} said at {said:%H:%M}"


def test_a_time_of_day_in_the_second_pass_of_the_repeated_hour_is_still_today():
    """At 01:10 EST (the hour's second pass) 'at 1:30' is 20 minutes on, not tomorrow."""
    second_pass = datetime(2026, 11, 1, 6, 10, tzinfo=UTC)
    assert parse_when("at 1:30", "America/New_York", second_pass) == datetime(
        2026, 11, 1, 6, 30, tzinfo=UTC
    )


def test_a_time_in_a_zone_the_phrase_names_is_read_on_that_zones_clock():
    new_year_eve = datetime(2026, 12, 31, 22, 0, tzinfo=UTC)
    for text, expected in (
        ("at 15:00 UTC", datetime(2027, 1, 1, 15, 0, tzinfo=UTC)),
        ("at 23:00 UTC", datetime(2026, 12, 31, 23, 0, tzinfo=UTC)),
        ("tomorrow at 9am UTC", datetime(2027, 1, 1, 9, 0, tzinfo=UTC)),
        ("at 3pm EST", datetime(2027, 1, 1, 20, 0, tzinfo=UTC)),
    ):
        assert parse_when(text, "Asia/Tokyo", new_year_eve) == expected, text
