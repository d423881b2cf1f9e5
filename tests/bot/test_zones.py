"""Time zones as people type them: offsets mean what they say (tzdata's Etc/GMT names
are POSIX-signed), abbreviations name the clock of the places that use them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.errors import ToolError
from bot.reminders.timeparse import format_local
from bot.reminders.zones import describe_zone, user_zone


@pytest.mark.parametrize(
    ("typed", "zone", "hours"),
    [
        ("GMT+1", "Etc/GMT-1", 1),  # was Etc/GMT+1: UTC-1, two hours off for Berlin
        ("UTC+2", "Etc/GMT-2", 2),  # was refused
        ("utc -5", "Etc/GMT+5", -5),
        ("+02:00", "Etc/GMT-2", 2),
        ("-0500", "Etc/GMT+5", -5),
        ("UTC\u22123", "Etc/GMT+3", -3),  # a typographic minus
        ("UTC+14", "Etc/GMT-14", 14),
        ("UTC+0", "UTC", 0),
        ("Etc/GMT+1", "Etc/GMT+1", -1),  # tzdata's own name keeps tzdata's meaning
    ],
)
def test_an_offset_is_the_zone_at_that_offset(typed, zone, hours):
    found = user_zone(typed)
    assert found.key == zone
    assert datetime(2026, 7, 1, tzinfo=UTC).astimezone(found).utcoffset().total_seconds() == (
        hours * 3600
    )


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("UTC+5:30", "has no zone of its own; say the place, e.g. "),
        ("UTC+15", "they run from UTC-12 to UTC\\+14"),
        ("GMT-13", "they run from UTC-12 to UTC\\+14"),
        ("+03:75", "they run from UTC-12 to UTC\\+14"),
    ],
)
def test_an_offset_with_no_zone_is_refused_with_what_to_say(typed, message):
    with pytest.raises(ToolError, match=message):
        user_zone(typed)


def test_a_half_hour_offset_names_places_on_it():
    with pytest.raises(ToolError) as refused:
        user_zone("+05:30")
    assert "'Asia/Kolkata'" in str(refused.value)


@pytest.mark.parametrize(
    ("typed", "zone"),
    [
        ("PST", "America/Los_Angeles"),  # was refused
        ("est", "America/New_York"),  # was tzdata's EST: Panama's clock, no summer time
        ("MST", "America/Denver"),
        ("EDT", "America/New_York"),
        ("BST", "Europe/London"),
        ("CEST", "Europe/Berlin"),
        ("JST", "Asia/Tokyo"),
        ("CET", "CET"),  # tzdata's own, with the EU's summer time
    ],
)
def test_an_abbreviation_is_the_clock_of_its_places(typed, zone):
    assert user_zone(typed).key == zone


@pytest.mark.parametrize("typed", ["PT", "et", "MT"])
def test_a_two_letter_code_is_no_abbreviation(typed):
    """PT is Portugal's code as much as Pacific Time's: refused, not guessed."""
    with pytest.raises(ToolError, match="is not an IANA time zone"):
        user_zone(typed)


@pytest.mark.parametrize("typed", ["IST", "cst"])
def test_an_ambiguous_abbreviation_asks_which(typed):
    with pytest.raises(ToolError, match="is used for several time zones; say which: "):
        user_zone(typed)


def test_a_fixed_offset_reads_as_utc_plus_and_says_it_keeps_no_summer_time():
    assert describe_zone("Etc/GMT-2") == "UTC+2 (Etc/GMT-2, a fixed offset: no summer time)"
    assert describe_zone("Europe/Berlin") == "Europe/Berlin"
    noon = datetime(2026, 12, 7, 10, 0, tzinfo=UTC)
    assert format_local(noon, "Etc/GMT-2") == "Mon 2026-12-07 12:00 UTC+2"
    assert format_local(noon, "Etc/GMT+5") == "Mon 2026-12-07 05:00 UTC-5"


@pytest.mark.parametrize(
    ("typed", "zone"),
    [
        ("Berlin, Germany", "Europe/Berlin"),  # each was "not an IANA time zone"
        ("berlin germany", "Europe/Berlin"),
        ("London UK", "Europe/London"),
        ("New York USA", "America/New_York"),
        ("Los Angeles, CA", "America/Los_Angeles"),
        ("Berlin.", "Europe/Berlin"),
    ],
)
def test_a_city_with_its_country_after_it_is_the_citys_zone(typed, zone):
    assert user_zone(typed).key == zone


def test_words_that_name_no_city_are_still_refused():
    with pytest.raises(ToolError, match="is not an IANA time zone"):
        user_zone("xyz abc")


def test_a_name_far_longer_than_any_zone_is_refused_at_once():
    """ "Los Angeles " * 8000 was read as Los Angeles after seconds of work on the event
    loop (the place lookup is quadratic in the words); it is refused before any lookup,
    and the refusal does not repeat the text."""
    with pytest.raises(ToolError, match="too long for a time zone") as info:
        user_zone("Los Angeles " * 8000)
    assert len(str(info.value)) < 200
    assert user_zone("America/Argentina/ComodRivadavia").key.startswith("America/")
    assert user_zone("New York, United States of America").key == "America/New_York"


def test_set_timezone_offers_a_bound_name_length():
    from tools.reminders import SetTimezoneTool

    prop = SetTimezoneTool.parameters["properties"]["timezone"]
    assert prop["maxLength"] == 100
    assert SetTimezoneTool().validate_params({"timezone": "x" * 101})
