"""What dateparser must not be left to guess in a time phrase.

dateparser reads a number it cannot place as a month, day or year: "at 8" became
August, "in 5" May, "tomorrow at 8" kept the current time. So "at N", "at N:MM" and
"at Npm" are rewritten as a 24-hour "at HH:MM" first, and a number left with no unit,
no am/pm and no month beside it is refused instead of guessed.
"""

from __future__ import annotations

import calendar
import re
from datetime import date

from bot.errors import ToolError

_UNIT = re.compile(
    r"s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|w|wks?|weeks?|fortnights?"
    r"|mo|months?|y|yrs?|years?"
)
_MERIDIEMS = frozenset({"am", "pm", "a.m.", "p.m.", "o'clock", "oclock"})
_MONTH = re.compile(
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_NUMBER = re.compile(r"\d+(?:st|nd|rd|th)?")
_GLUED = re.compile(r"\d+([a-z]+)")
_AFTER_NOON = re.compile(r"\b(?:tonight|evening|afternoon)\b", re.IGNORECASE)
_AT_TIME = re.compile(
    r"\bat\s+(\d{1,2})(?:[:.](\d{2}))?(?:\s*(a\.?m\.?|p\.?m\.?|o'?clock)(?![\w.]))?(?![\w:./-])",
    re.IGNORECASE,
)


# Spoken fractions dateparser does not read ("in half an hour" was "could not understand").
_AND_A_HALF = re.compile(r"\b(an|one|\d+) (?:hours? and a half|and a half hours?)\b", re.I)
_SPOKEN = (
    (re.compile(r"\b(?:half an|a half) hours?\b", re.I), "30 minutes"),
    (re.compile(r"\bthree quarters of an hour\b", re.I), "45 minutes"),
    (re.compile(r"\b(?:an? |one )?quarter (?:of an |an )?hours?\b", re.I), "15 minutes"),
    (re.compile(r"\b(?:half a|a half) day\b", re.I), "12 hours"),
)


def spoken_amounts(text: str) -> str:
    """ "half an hour" as "30 minutes", "an hour and a half" as "90 minutes", "a quarter
    of an hour" as "15 minutes": amounts said in words, rewritten as dateparser reads them."""
    text = _AND_A_HALF.sub(_hours_and_a_half, text)
    for pattern, amount in _SPOKEN:
        text = pattern.sub(amount, text)
    return text


def _hours_and_a_half(match: re.Match[str]) -> str:
    hours = int(match[1]) if match[1].isdigit() else 1
    return f"{hours * 60 + 30} minutes"


_BARE_DAY = re.compile(r"\b(?:on\s+)?the\s+(\d{1,2})(?:st|nd|rd|th)\b", re.IGNORECASE)


def with_its_month(text: str, today: date) -> list[str]:
    """ "on the 15th" names a day and no month (it was "'15th' names no month"): the
    phrase with this month's date, then the next month's that has that day (for when
    this month's is past); [] when the phrase names a month or no such day."""
    found = _BARE_DAY.search(text)
    if found is None or any(_MONTH.fullmatch(w) for w in _words(text)):
        return []
    day = int(found[1])
    year, month, phrases = today.year, today.month, []
    for _ in range(12):
        if 1 <= day <= calendar.monthrange(year, month)[1]:
            named = f"{calendar.month_name[month]} {day} {year}"
            phrases.append(text[: found.start()] + named + text[found.end() :])
            if len(phrases) == 2:
                break
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return phrases


def _words(text: str) -> list[str]:
    return [w for w in re.split(r"[\s,]+", text.lower()) if w]


def is_unit(word: str) -> bool:
    return _UNIT.fullmatch(word.lower()) is not None


def is_number(word: str) -> bool:
    return _NUMBER.fullmatch(word.lower().rstrip(".")) is not None


def is_quantity(words: list[str], i: int) -> bool:
    """Whether ``words[i:]`` starts with an amount: "10 min", "10min", "second"."""
    word = words[i].lower()
    glued = _GLUED.fullmatch(word)
    if is_unit(word) or (glued is not None and is_unit(glued[1])):
        return True
    return is_number(word) and i + 1 < len(words) and is_unit(words[i + 1])


def at_times(text: str) -> str:
    """Rewrite "at 8" as "at 08:00", "at 6pm" as "at 18:00", "at 8.30" as "at 08:30";
    after noon in a phrase that says so: "tonight at 9" is 21:00 (it was 09:00, already
    gone by the evening it was said in)."""
    later = _AFTER_NOON.search(text) is not None
    return _AT_TIME.sub(lambda match: _at_time(match, later), text)


def _at_time(match: re.Match[str], after_noon: bool = False) -> str:
    hour, minute = int(match[1]), int(match[2] or 0)
    suffix = (match[3] or "").lower().replace(".", "").replace("'", "")
    if not suffix and after_noon and 1 <= hour <= 11:
        suffix = "pm"
    if suffix in ("am", "pm"):
        if not 1 <= hour <= 12:
            raise ToolError(f"'{match[0][3:].strip()}' is not a time of day; try 'at 9am'")
        hour = hour % 12 + (12 if suffix == "pm" else 0)
    if hour > 23 or minute > 59:
        raise ToolError(f"'{match[0][3:].strip()}' is not a time of day; try 'at 21:30'")
    return f"at {hour:02d}:{minute:02d}"


def check_numbers(text: str) -> None:
    """Refuse a number with nothing to say what it counts (dateparser would guess)."""
    words = _words(text)
    if any(_MONTH.fullmatch(w) for w in words):
        return  # "december 5", "5th of may 2027": a day and a year
    for i, word in enumerate(words):
        if not is_number(word):
            continue
        after = words[i + 1] if i + 1 < len(words) else ""
        if is_unit(after) or after in _MERIDIEMS:
            continue
        raise ToolError(_unplaced(word.rstrip(".")))


def _unplaced(word: str) -> str:
    if not word.isdigit():
        day = int(re.sub(r"\D", "", word) or 0)
        if not 1 <= day <= 31:
            return f"'{word}' is no day of a month"
        return f"'{word}' names no month; say e.g. 'December {word}'"
    hint = f"'in {word} minutes', 'in {word} hours'"
    if int(word) <= 24:
        hint += f" or, for a time of day, 'at {word}'"
    return f"'{word}' has no unit; say e.g. {hint}"
