"""An admin is ``<channel>:<user id>``, the form a message's sender takes: a bare id, a
@username or a misspelled channel matched nobody, so the operator had no admin and no
word of it. A config that says so still loads (it did before) and every start warns,
naming the entry and the fix (``bot doctor`` shows it too); ``bot init --admin`` refuses
one. The shape is checked on the field (stray spaces dropped and the channel in lower
case, as the matching compares); the channel's name when a config is loaded, against
the registered platforms: tests run daemons on channels of their own.
"""

from __future__ import annotations

from collections.abc import Iterable

# The terminal is trusted without an entry, but naming it is no mistake.
LOCAL_CHANNELS = ("cli",)


def platforms() -> list[str]:
    """The registered platforms' names (imported when first needed: channel packages
    import bot.config.section)."""
    from channels.registry import SPECS

    return [spec.name for spec in SPECS]


def _where_ids_are(channel: str) -> str:
    """How a user finds their id on ``channel``, as its ``bot init`` question says ("Your
    ... user id, from ..."), or "" for a platform that asks none."""
    from channels.registry import SPECS

    questions = [q for spec in SPECS if spec.name == channel for q in spec.setup if q.admin]
    if not questions:
        return ""
    where = questions[0].prompt.split(" (")[0]
    return f" ({where[:1].lower()}{where[1:]})"


def admin_entry(value: str) -> str:
    """``value`` as ``<channel>:<user id>``, or ValueError saying how to write it."""
    channel, sep, user = value.partition(":")
    channel, user = channel.strip().lower(), user.strip()
    first = platforms()[0]
    if not sep and channel.startswith("@"):  # a bare @name: "<channel>:@name" is no better
        channel, user = "", channel
    if user.startswith("@"):  # allow_from takes names; a sender is matched by its id
        channel = channel or first
        raise ValueError(
            f"admin {value!r} names a user by name; admins are user ids, "
            f"e.g. '{channel}:42'{_where_ids_are(channel)}"
        )
    if sep and channel and user and not any(c.isspace() for c in channel + user):
        return f"{channel}:{user}"
    if not sep:  # a bare id: the channel it is on is what is missing
        fix = f"write it with its channel, e.g. '{first}:{value.strip() or '<id>'}'"
    else:
        fix = f"e.g. '{first}:42'"
    raise ValueError(f"admin {value!r} is not <channel>:<user id>; {fix}")


def admin_entries(values: Iterable[str]) -> list[str]:
    """Each entry in the matching's form; one of no admin's shape kept as written (it
    matches nobody; :func:`admin_problem` says why when the config is loaded)."""
    entries = []
    for value in values:
        try:
            entries.append(admin_entry(value))
        except ValueError:
            entries.append(value)
    return entries


def admin_problem(value: str) -> str | None:
    """Why ``value`` matches nobody, or None for a good entry."""
    try:
        entry = admin_entry(value)
    except ValueError as exc:
        return str(exc)
    return unknown_channel(entry)


def unknown_channel(entry: str) -> str | None:
    """Why ``entry`` (already of the right shape) names no channel, or None."""
    import difflib  # only for a mistake

    channel, _, user = entry.partition(":")
    known = [*platforms(), *LOCAL_CHANNELS]
    if channel in known:
        return None
    close = difflib.get_close_matches(channel, known, n=1, cutoff=0.6)
    hint = f"did you mean '{close[0]}:{user}'? " if close else ""
    return f"admin {entry!r} names no channel: {hint}(channels: {', '.join(platforms())})"
