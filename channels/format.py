"""Platform-neutral splitting of long Markdown replies into sendable chunks.

Every platform caps a message (Telegram 4,096 UTF-16 units, Discord 2,000, Slack 40,000)
and renders each message on its own, so a chunk should be valid Markdown by itself: it
ends at a paragraph or line boundary where possible, closes a fenced code block it
cuts and reopens it in the next chunk (same fence and language), and avoids cutting
inline markup (`code`, **bold**, [links](...)) in two.

What the splitter may change, and nothing else: the whitespace at a cut is dropped,
a cut inside a fenced block adds that fence's closing line to the end of one part
and its opening line to the start of the next, and a cut among a GFM table's rows
repeats the table's header and delimiter lines at the start of the next part (rows
without them are plain text to every converter: half a table came as raw pipes).
The work is linear in the text (one pass to measure and classify positions, then a
binary search per part), and the parts number at most ``ceil(len/limit) + 1``
(``len`` and ``limit`` in the measure's units, ``len`` counting each repeated table
header; with UTF-16 an astral character cannot be halved, so ``limit - 1`` there):
the nicer breaks and the reopened fences may together cost at most one part's worth
of room over the whole reply, after which parts are cut full. A fence or table
header whose lines would take more than a quarter of a part (a line of 2,500
backticks) is never repeated.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from itertools import accumulate

from bot.errors import DeliveryRejected
from channels.base import IN_FLIGHT_KEEP, Sent, StateStore
from channels.markdown_table import is_delimiter

Measure = Callable[[str], int]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
# Inline spans a cut should not fall inside (approximate, line-local Markdown). Every
# repetition is bounded, so one pass over any line is linear (an unbounded pattern
# backtracks quadratically on a line of backticks or brackets).
_INLINE = re.compile(
    r"(?<!`)(`{1,8})(?!`)[^`\n]{1,200}?(?<!`)\1(?!`)"  # code span
    r"|!?\[[^\]\n]{0,200}\]\([^)\n]{0,300}\)"  # link / image
    r"|\*\*[^\n]{1,200}?\*\*|__[^\n]{1,200}?__|~~[^\n]{1,200}?~~|\|\|[^\n]{1,200}?\|\|"
    r"|(?<![*\w])\*(?=\S)[^*\n]{1,200}?(?<=\S)\*(?![*\w])"
)
_TOGGLES = ("**", "~~", "||")
_JOINERS = "\u200d\ufe0f\ufe0e"


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units: how Telegram (and JavaScript) count characters."""
    return len(text) if text.isascii() else len(text.encode("utf-16-le", "surrogatepass")) // 2


@dataclass(frozen=True, slots=True)
class _Fence:
    opening: str  # the full opening line, e.g. "```python"
    closing: str  # the marker that closes it, e.g. "```"
    line: int  # the index of its opening line
    reopenable: bool  # its two lines fit in a quarter of a part

    @property
    def head(self) -> str:
        return self.opening + "\n"

    @property
    def tail(self) -> str:
        return "\n" + self.closing


@dataclass(frozen=True, slots=True)
class _Table:
    head: str  # its header and delimiter lines, each ending in a newline
    reopenable: bool  # they fit in a quarter of a part
    tail: str = ""  # a part that ends among its rows adds nothing


@dataclass(frozen=True, slots=True)
class Part:
    """One chunk: ``prefix + text[start:end] + suffix`` (the prefix and suffix are the
    opening and closing lines of a fence the cut went through; the prefix may instead
    be a table's header and delimiter lines)."""

    start: int
    end: int
    prefix: str = ""
    suffix: str = ""


def _unbalanced(line: str) -> bool:
    """True when the line opens (or closes) an inline span that it does not finish."""
    if line.count("`") % 2:
        return True
    return any(line.count(tok) % 2 for tok in _TOGGLES)


def _closes(line: str, fence: _Fence) -> bool:
    stripped = line.strip()
    char = fence.closing[0]
    return len(stripped) >= len(fence.closing) and stripped == char * len(stripped)


def _grapheme_safe(text: str, pos: int) -> bool:
    """A cut at ``pos`` separates no combining mark, joiner, modifier or surrogate pair."""
    here, before = text[pos], text[pos - 1]
    return not (
        unicodedata.combining(here)
        or here in _JOINERS
        or before == "\u200d"
        or 0x1F3FB <= ord(here) <= 0x1F3FF  # skin-tone modifier
        or ("\ud800" <= before <= "\udbff" and "\udc00" <= here <= "\udfff")
    )


class _Planner:
    """Classifies every position once, then cuts greedily (see the module docstring)."""

    def __init__(self, text: str, limit: int, measure: Measure) -> None:
        self.text, self.limit, self.measure = text, limit, measure
        n = len(text)
        self.m: range | list[int] = (
            range(n + 1) if measure is len else [0, *accumulate(measure(c) for c in text)]
        )
        self.lines = text.split("\n")
        self.starts = [0, *accumulate(len(line) + 1 for line in self.lines[:-1])]
        self.fence_before: list[_Fence | None] = []
        self.mid_fence: list[_Fence | None] = []
        self.fence_line: list[bool] = []
        self.parity_before: list[bool] = []
        self.table_row: list[_Table | None] = [None] * len(self.lines)
        self.glued = [False] * (len(self.lines) + 1)  # a cut before it parts a table's head
        self._scan_lines()
        self._scan_tables()
        inside = self._inside_spans()
        self.cands = self._candidates(inside)

    def _scan_lines(self) -> None:
        fence: _Fence | None = None
        parity = False
        for i, line in enumerate(self.lines):
            self.fence_before.append(fence)
            self.parity_before.append(parity)
            found = _FENCE.match(line) if fence is None else None
            if found is not None:
                opening, closing = line.strip(), found.group(1)
                cost = self.measure(opening + "\n") + self.measure("\n" + closing)
                fence = _Fence(opening, closing, i, cost <= self.limit // 4)
                self.mid_fence.append(fence)
                self.fence_line.append(True)
            elif fence is not None:
                self.mid_fence.append(fence)
                self.fence_line.append(_closes(line, fence))
                fence = None if self.fence_line[-1] else fence
            else:
                self.mid_fence.append(None)
                self.fence_line.append(False)
                parity ^= _unbalanced(line)

    def _scan_tables(self) -> None:
        """Marks each table's rows (the lines with a pipe after its delimiter, outside
        fences) and the two line breaks its header must not be cut from."""
        lines, table = self.lines, None
        for i, line in enumerate(lines):
            outside = self.mid_fence[i] is None
            if table is not None and outside and "|" in line:
                self.table_row[i] = table
                continue
            table = None
            if i and outside and self.mid_fence[i - 1] is None and is_delimiter(line, lines[i - 1]):
                start = self.starts[i - 1]
                end = min(self.starts[i] + len(line) + 1, len(self.text))
                cost = self.m[end] - self.m[start]
                table = _Table(f"{lines[i - 1]}\n{line}\n", cost <= self.limit // 4)
                self.glued[i : i + 2] = [True, True]

    def _inside_spans(self) -> list[bool]:
        """Per position: a cut there would fall inside an inline span."""
        depth = [0] * (len(self.text) + 2)
        for found in _INLINE.finditer(self.text):
            depth[found.start() + 1] += 1
            depth[found.end()] -= 1
        return [d > 0 for d in accumulate(depth)]

    def _candidates(self, inside: list[bool]) -> list[list[int]]:
        """Cut positions by preference: paragraph, line outside code, line in code,
        whitespace, a hard cut outside inline spans, any hard cut (graphemes whole)."""
        text = self.text
        para: list[int] = []
        line_out: list[int] = []
        line_code: list[int] = []
        space: list[int] = []
        hard_out: list[int] = []
        hard: list[int] = []
        for i, line in enumerate(self.lines):
            start = self.starts[i]
            if i and self.fence_before[i] is None and not (self.parity_before[i] or self.glued[i]):
                line_out.append(start - 1)
                if not line.strip():
                    para.append(start - 1)
            elif i and self.fence_before[i] is not None and not self.fence_line[i]:
                line_code.append(start - 1)
            if self.fence_line[i]:
                continue
            code = self.mid_fence[i] is not None
            for pos in range(start + 1, start + len(line)):
                if not code and line[pos - start] in " \t" and not inside[pos]:
                    space.append(pos)
                if _grapheme_safe(text, pos):
                    hard.append(pos)
                    if not inside[pos]:
                        hard_out.append(pos)
        return [para, line_out, line_code, space, hard_out, hard]

    # -- cutting ---------------------------------------------------------------------

    def _line_of(self, pos: int) -> int:
        return bisect_right(self.starts, pos) - 1

    def _context(self, pos: int) -> _Fence | None:
        """The fence open at a cut before ``text[pos]``."""
        line = self._line_of(pos)
        if self.text[pos] == "\n":
            return self.fence_before[line + 1]
        return self.mid_fence[line]

    def _table(self, cut: int) -> _Table | None:
        """The table among whose rows the part after a cut at ``cut`` starts."""
        start = self._skip(cut)
        return self.table_row[self._line_of(start)] if start < len(self.text) else None

    def _end(self, start: int, cap: int) -> int:
        """The furthest cut whose part fits ``cap`` (at least one character)."""
        end = bisect_right(self.m, self.m[start] + cap) - 1
        return max(start + 1, min(end, len(self.text)))

    def _pick(self, start: int, prev: int, end: int, waste: int) -> int:
        """The best cut up to ``end`` that keeps at least half a part and the budget."""
        floor = max(waste, self.limit // 2)
        for cands in self.cands:
            i = bisect_right(cands, end) - 1
            if i >= 0 and cands[i] > start and self.m[cands[i]] - self.m[prev] >= floor:
                return cands[i]
        return end

    def _cut(
        self, start: int, prev: int, cap: int, waste: int, reopened: _Fence | _Table | None
    ) -> tuple[int, _Fence | _Table | None]:
        """Where this part ends, and the fence or table it cuts (to reopen in the next)."""
        end = self._end(start, cap)
        cut = self._pick(start, prev, end, waste)
        fence = self._context(cut)
        if fence is None:
            table = self._table(cut)
            return cut, table if table is not None and table.reopenable else None
        if not fence.reopenable:
            return cut, None
        if fence is not reopened and self.starts[fence.line] < start:
            return cut, None  # this part never opened it (budget spent): nothing to close
        closing = self.measure("\n" + fence.closing)
        if self.m[cut] - self.m[start] + closing > cap:
            shorter = self._pick(start, prev, self._end(start, cap - closing), waste)
            if self._context(shorter) is not fence:
                return cut, None
            cut = shorter
        reopening = self.measure(fence.opening + "\n")
        if waste + self.limit - (self.m[cut] - self.m[prev]) + reopening > self.limit:
            return self._pick(start, prev, end, waste), None
        return cut, fence

    def _skip(self, cut: int) -> int:
        """Where the next part starts: past the cut's whitespace (one newline in code)."""
        text, n = self.text, len(self.text)
        if cut < n and self._context(cut) is not None:
            return cut + 1 if text[cut] == "\n" else cut
        while cut < n and text[cut].isspace():
            cut += 1
        return cut

    def plan(self) -> list[Part]:
        parts: list[Part] = []
        n, text, limit = len(self.text), self.text, self.limit
        start = prev = waste = 0
        reopened: _Fence | _Table | None = None
        while start < n:
            prefix = reopened.head if reopened is not None else ""
            cap = limit - (self.measure(prefix) if prefix else 0)
            # A repeated table header is paid for apart from the budget (the docstring).
            free = limit - cap if isinstance(reopened, _Table) else 0
            if self.m[n] - self.m[start] <= cap:
                cut, closed = n, None
            else:
                cut, closed = self._cut(start, prev, cap, waste - free, reopened)
                waste += limit - free - (self.m[cut] - self.m[prev])
            end = cut
            if self._context(cut) is None if cut < n else True:
                while end > start and text[end - 1].isspace():
                    end -= 1
            if text[start:end].strip():
                parts.append(Part(start, end, prefix, closed.tail if closed is not None else ""))
            prev, start, reopened = cut, self._skip(cut), closed
        return parts


def split_plan(text: str, limit: int, *, measure: Measure = len) -> tuple[str, list[Part]]:
    """The normalized text and its parts (``split_message`` renders them); [] if blank."""
    if limit < 32:
        raise ValueError("limit must be at least 32 to hold a fenced chunk")
    text = text.replace("\r\n", "\n").strip("\n").rstrip()
    if not text.strip():
        return text, []
    if measure(text) <= limit:
        return text, [Part(0, len(text))]
    return text, _Planner(text, limit, measure).plan()


def split_message(text: str, limit: int, *, measure: Measure = len) -> list[str]:
    """Split ``text`` into chunks of at most ``limit`` (by ``measure``); [] if blank.

    Prefers paragraph breaks, then line breaks, then whitespace; a fenced code block is
    kept whole when it fits a chunk, else closed and reopened across chunks.
    """
    normalized, parts = split_plan(text, limit, measure=measure)
    return [p.prefix + normalized[p.start : p.end] + p.suffix for p in parts]


class PartsProgress:
    """The ids of the parts of each delivery already posted, so an outbox retry resumes.

    A long answer is posted as several messages; when one part fails, the outbox retries
    the whole delivery, and this skips the parts that already reached the chat instead
    of posting them twice. With a ``state`` store the progress of a multi-part delivery
    also survives a restart (the outbox retries it in the next process). A permanent
    refusal forgets the delivery; the oldest entries are dropped past ``limit``.
    """

    def __init__(
        self, limit: int = 1000, *, state: StateStore | None = None, prefix: str = ""
    ) -> None:
        self._limit = limit
        self._done: OrderedDict[str, list[str]] = OrderedDict()
        self._state = state
        self._prefix = f"{prefix}:parts:"

    async def post(
        self, delivery_key: str, count: int, post_part: Callable[[int], Awaitable[str]]
    ) -> Sent:
        done = self._done.get(delivery_key)
        if done is None:
            done = await self._load(delivery_key) if count > 1 else []
            self._done[delivery_key] = done
        while len(self._done) > self._limit:
            self._done.popitem(last=False)
        try:
            for i in range(len(done), count):
                done.append(await post_part(i))
                if i + 1 < count:
                    await self._save(delivery_key, done)
        except DeliveryRejected:
            await self._forget(delivery_key, count)
            raise
        await self._forget(delivery_key, count)
        return Sent(tuple(done))

    async def _load(self, delivery_key: str) -> list[str]:
        if self._state is None:
            return []
        raw = await self._state.get(self._prefix + delivery_key)
        return raw.split(",") if raw else []

    async def _save(self, delivery_key: str, ids: list[str]) -> None:
        if self._state is not None:
            await self._state.set(
                self._prefix + delivery_key, ",".join(ids), keep_for=IN_FLIGHT_KEEP
            )

    async def _forget(self, delivery_key: str, count: int) -> None:
        self._done.pop(delivery_key, None)
        if count > 1 and self._state is not None:
            await self._state.delete(self._prefix + delivery_key)
