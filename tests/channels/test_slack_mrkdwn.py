"""What a Slack user sees of the model's Markdown: code exactly as written (`rm *.log`
was shown as `rm _.log`, also in an indented block, now sent as a ``` block), a star
that is no emphasis left a star (``3 * 4 * 5`` became ``3 _ 4 _ 5``, ``2*3*4``
``2_3_4``: Slack shows no emphasis inside a word), a backslash-escaped character as
itself, links whole (a URL with parentheses was cut, a ``[1]`` citation before a link
swallowed it, a ``<`` in a label broke it), and a long line full of ``&`` and ``<``
split between messages without halving an ``&amp;``."""

from __future__ import annotations

import re

import pytest

from channels.slack.mrkdwn import MAX_CHARS, render_chunks, to_mrkdwn

CASES = [
    ("Delete the logs with `rm *.log *.tmp`.", "Delete the logs with `rm *.log *.tmp`."),
    ("Edit `pkg/__init__.py` and `__main__.py`", "Edit `pkg/__init__.py` and `__main__.py`"),
    ("Use ``a ` b`` here", "Use ``a ` b`` here"),
    ("Area = 3 * 4 * 5 = 60", "Area = 3 * 4 * 5 = 60"),
    ("Match files with *.py and *.txt", "Match files with *.py and *.txt"),
    ("2*3*4 = 24, a*b*c, x *y*z* w", "2*3*4 = 24, a*b*c, x _y*z_ w"),  # inside a word
    ("*a * b *c", "*a * b *c"),
    ("**bold**, *it* and a *star", "*bold*, _it_ and a *star"),
    ("* one\n* two *2*", "• one\n• two _2_"),
    (
        "See [Python (language)](https://en.wikipedia.org/wiki/Python_(programming_language)).",
        "See <https://en.wikipedia.org/wiki/Python_(programming_language)|Python (language)>.",
    ),
    (
        "Sources: [1] and [2](https://example.com/paper)",
        "Sources: [1] and <https://example.com/paper|2>",
    ),
    ("[a < b & c](https://example.com/cmp)", "<https://example.com/cmp|a &lt; b &amp; c>"),
    ("see [the notes](./notes.html)", "see the notes (./notes.html)"),
    ("~~~html\n<div>a*b*c</div>\n~~~", "```\n&lt;div&gt;a*b*c&lt;/div&gt;\n```"),
    (r"2\*3\*4 in my\_file\_v2 and \[1\]", "2*3*4 in my_file_v2 and [1]"),  # escapes
    (r"\<!here> is written so, \> too", "&lt;!here&gt; is written so, &gt; too"),
    ("Run:\n\n    x = a*b*c  # <x>\n    y = 2", "Run:\n\n```\nx = a*b*c  # &lt;x&gt;\ny = 2\n```"),
    ("1. Then:\n\n       rm *.log\n\n2. Done", "1. Then:\n\n```\nrm *.log\n```\n\n2. Done"),
    ("<details>\nRun `rm *.log`\n</details>", "&lt;details&gt;\nRun `rm *.log`\n&lt;/details&gt;"),
]


@pytest.mark.parametrize(("markdown", "shown"), CASES)
def test_the_converter_changes_only_what_is_markdown(markdown: str, shown: str) -> None:
    assert to_mrkdwn(markdown) == shown


@pytest.mark.parametrize("pad", range(12))
def test_a_long_escaped_line_is_never_cut_inside_an_entity(pad: int) -> None:
    answer = "Minified:\n\n```\n" + "x" * pad + "a&&b<c" * 600 + "\n```"
    chunks = render_chunks(answer)
    assert len(chunks) > 1 and all(len(c) <= MAX_CHARS for c in chunks)
    for chunk in chunks:
        body = chunk.removeprefix("Minified:\n\n").removeprefix("```\n").removesuffix("\n```")
        assert not re.search(r"&[a-z]{0,3}$", body), body[-12:]
        assert not re.match(r"^[a-z]{0,3};", body), body[:12]
    shown = "".join(
        c.removeprefix("Minified:\n\n").removeprefix("```\n").removesuffix("\n```") for c in chunks
    )
    assert shown.replace("&amp;", "&").replace("&lt;", "<") == "x" * pad + "a&&b<c" * 600
