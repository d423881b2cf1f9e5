"""Text every UTF-8 sink accepts.

``json.loads('"\\ud800"')`` gives a str holding a lone surrogate; Python carries it
happily until something encodes it as UTF-8 (a file write, SQLite), which raises. Text
from outside (tool output) passes through :func:`valid_unicode` before it is written.
"""

from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_unicode(text: str) -> str:
    """``text`` with each surrogate that is not half of a pair replaced by U+FFFD."""
    if not _SURROGATE.search(text):
        return text  # the common case costs one scan
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
