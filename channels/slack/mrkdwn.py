"""Markdown (what the model writes) -> Slack mrkdwn, in chunks Slack accepts.

markdown-to-mrkdwn does the conversion: it is maintained and handles what the model
actually writes (links to ``<url|text>``, bold, lists, headings, tables). Its patterns
are line regexes that know fenced blocks but nothing else of Markdown, so three things
are taken out before it runs and put back after: code (found as CommonMark finds it,
:mod:`channels.markdown_code`: `rm *.log` became `rm _.log`), links (a URL with
parentheses, a label after a ``[1]`` citation or with a ``<`` in it came out broken),
and a ``*`` that cannot be emphasis by CommonMark's rules (``3 * 4 * 5`` became
``3 _ 4 _ 5``). Splitting happens on the Markdown first, measured as it will be once
escaped (channels.format keeps code fences closed and reopened per chunk), then each
chunk is converted and escaped; one that still grew past the limit is split again as
Markdown, never as escaped text (a cut there could halve an ``&amp;``).
"""

from __future__ import annotations

import logging
import re

from markdown_to_mrkdwn import SlackMarkdownConverter  # type: ignore[import-untyped]

from channels.format import split_message
from channels.slack.kept import Kept, escape_text
from channels.slack.mentions import is_ping, plain_mentions

log = logging.getLogger(__name__)

# Slack refuses text over 40,000 characters and folds anything over ~4,000 behind
# "Show more"; 3,900 keeps every chunk readable and far from the hard limit.
MAX_CHARS = 3900
MARKDOWN_BUDGET = 3500  # conversion may grow a chunk a little (<url|text>, bullets)
MIN_BUDGET = 256  # the smallest Markdown part a converted part that grew is split into

# Control sequences Slack reads inside text: links, user/channel mentions, !here.
# Only links, channel references and dates are passed through (see mentions.py).
_CONTROL = re.compile(r"<(?:https?://|mailto:|[@#!])[^<>\s][^<>]*>")
_FENCE_LANG = re.compile(r"^(\s*```)[\w+#.-]+\s*$", re.M)

_converter = SlackMarkdownConverter()


def escape(text: str) -> str:
    """Escape ``& < >`` as Slack requires, keeping links, channel references and quote
    markers; a mention (``<!channel>``, ``<@U...>``) becomes plain words that ping no one."""
    out: list[str] = []
    pos = 0
    for found in _CONTROL.finditer(text):
        out.append(escape_text(text[pos : found.start()]))
        sequence = found.group()
        out.append(escape_text(plain_mentions(sequence)) if is_ping(sequence) else sequence)
        pos = found.end()
    out.append(escape_text(text[pos:]))
    return "".join(out)


def escaped_len(text: str) -> int:
    """``text``'s length once escaped for Slack (``&amp;``, ``&lt;``, ``&gt;``)."""
    return len(text) + 4 * text.count("&") + 3 * (text.count("<") + text.count(">"))


def to_mrkdwn(markdown: str) -> str:
    """One chunk of Markdown as mrkdwn; the escaped original when conversion fails. What
    was held (code, links) goes back after the escaping, escaped as it was held: a
    ``<!here>`` in code is shown as written, not turned into words."""
    kept = Kept()
    try:
        converted = kept.restore(escape(str(_converter.convert(kept.take(markdown)))))
    except Exception:  # a converter bug must not lose the reply
        log.exception("markdown conversion failed; sending the text as written")
        converted = escape(markdown)
    return _FENCE_LANG.sub(r"\1", converted)  # Slack shows a language tag as code


def render_chunks(markdown: str, limit: int = MAX_CHARS, budget: int | None = None) -> list[str]:
    """The mrkdwn messages for one answer, each at most ``limit`` characters."""
    budget = min(MARKDOWN_BUDGET, limit) if budget is None else budget
    chunks: list[str] = []
    for part in split_message(markdown, budget, measure=escaped_len):
        rendered = to_mrkdwn(part)
        smaller = min(budget - 1, budget * limit * 9 // (10 * max(1, len(rendered))))
        if len(rendered) > limit and smaller >= MIN_BUDGET:
            chunks += render_chunks(part, limit, smaller)
        elif len(rendered) > limit:  # cannot happen with a sane converter
            chunks += split_message(rendered, limit)
        else:
            chunks.append(rendered)
    return [c for c in chunks if c.strip()]
