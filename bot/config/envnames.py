"""A ``BOT_`` environment variable that names no setting is said at start-up, with the name
it likely meant: pydantic-settings reports a misspelled nested name (``BOT_LLM__MODLE``)
but never reads one whose first part matches no field (``BOT_LLM_MODEL``,
``BOT_CHANNEL__<NAME>__TOKEN``), so the setting was silently left at its default. A
warning, not an error: a deployment may set ``BOT_`` names for tools of its own
(``BOT_TOKEN`` is common), and an upgrade must not stop it from starting.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

PREFIX = "BOT_"
# Read by name, never settings: the config file's path (bot.config.settings), and the
# PostgreSQL servers of the test suite (tests/fakes/postgres.py) and of `make bench`.
OWN = frozenset({"BOT_CONFIG"})
OWN_PREFIXES = ("BOT_TEST_", "BOT_BENCH_")


def unknown_variable(
    environ: Mapping[str, str], fields: Collection[str], sections: Collection[str]
) -> str | None:
    """The first ``BOT_`` variable whose first part (before ``__``) is none of ``fields``
    (the top-level settings; ``sections`` those that are tables), said with the likely
    intended name; None when every one is a setting."""
    for name in sorted(environ):
        path = setting_path(name)
        if path is None:
            continue
        head = path.partition("__")[0].lower()
        if head and head not in fields:
            return f"environment variable {name}: no setting is named {head!r}" + _hint(
                path, fields, sections
            )
    return None


def setting_path(name: str) -> str | None:
    """What a ``BOT_`` variable names, upper case and ``__``-joined (``WEB__PORT``);
    None for any other variable, and for those read by name."""
    upper = name.upper()  # pydantic-settings reads the names in any case
    if not upper.startswith(PREFIX) or upper in OWN or upper.startswith(OWN_PREFIXES):
        return None
    return upper.removeprefix(PREFIX)


def _hint(path: str, fields: Collection[str], sections: Collection[str]) -> str:
    import difflib  # only for a mistake: not on every start

    head, sep, rest = path.partition("__")
    for section in sorted(sections, key=len, reverse=True):
        if head.lower().startswith(section + "_"):  # one underscore where a section ends
            key = path[len(section) + 1 :]
            return f"; did you mean {PREFIX}{section.upper()}__{key}?"
    close = difflib.get_close_matches(head.lower(), list(fields), n=1, cutoff=0.75)
    if close:
        return f"; did you mean {PREFIX}{close[0].upper()}{sep}{rest}?"
    return f" (a setting is {PREFIX} + its key's path joined with __, e.g. {PREFIX}LLM__MODEL)"
