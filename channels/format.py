"""Platform-neutral splitting of long Markdown replies into sendable chunks.

Every platform caps a message (Telegram 4,096 UTF-16 units, Discord 2,000, Slack 40,000)
and renders each message on its own, so a chunk must be valid Markdown by itself: it
ends at a paragraph or line boundary where possible, never leaves a fenced code block
open (a block longer than the limit is closed and reopened with the same fence and
language), and never cuts inline markup (`code`, **bold**, [links](...)) in two.
"""

from __future__ import annotations

import re
import unicodedata
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.errors import DeliveryRejected
from channels.base import Sent, StateStore

Measure = Callable[[str], int]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
# Inline spans a cut must not fall inside (approximate, line-local Markdown).
_INLINE = re.compile(
    r"(`+)[^`]*?\1"  # code span
    r"|!?\[[^\]\n]*\]\([^)\n]*\)"  # link / image
    r"|\*\*[^\n]+?\*\*|__[^\n]+?__|~~[^\n]+?~~|\|\|[^\n]+?\|\|"
    r"|(?<![*\w])\*(?=\S)[^*\n]+?(?<=\S)\*(?![*\w])"
)
_TOGGLES = ("**", "~~", "||")


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units: how Telegram (and JavaScript) count characters."""
    return len(text) if text.isascii() else len(text.encode("utf-16-le", "surrogatepass")) // 2


@dataclass(frozen=True, slots=True)
class _Fence:
    opening: str  # the full opening line, e.g. "```python"
    closing: str  # the marker that closes it, e.g. "```"


def _fence_of(line: str) -> _Fence | None:
    found = _FENCE.match(line)
    if found is None:
        return None
    marker = found.group(1)
    return _Fence(line.strip(), marker)


def _closes(line: str, fence: _Fence) -> bool:
    stripped = line.strip()
    char = fence.closing[0]
    return len(stripped) >= len(fence.closing) and stripped == char * len(stripped)


def _unbalanced(line: str) -> bool:
    """True when the line opens (or closes) an inline span that it does not finish."""
    if line.count("`") % 2:
        return True
    return any(line.count(tok) % 2 for tok in _TOGGLES)


def _safe_cut(text: str, cut: int) -> int:
    """Move a cut left so it does not separate combining marks, ZWJ or variation selectors."""
    while 0 < cut < len(text) and (
        unicodedata.combining(text[cut])
        or text[cut] in "\u200d\ufe0f\ufe0e"
        or text[cut - 1] == "\u200d"
        or 0x1F3FB <= ord(text[cut]) <= 0x1F3FF  # skin-tone modifier
    ):
        cut -= 1
    return cut


def _fit(text: str, budget: int, measure: Measure) -> int:
    """Largest prefix length of ``text`` whose measure is within ``budget`` (at least 1)."""
    lo, hi = 1, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if measure(text[:mid]) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _split_line(line: str, budget: int, measure: Measure, code: bool) -> list[str]:
    """Cut one over-long line at whitespace outside inline spans, else hard."""
    pieces: list[str] = []
    rest = line
    while measure(rest) > budget:
        most = _fit(rest, budget, measure)
        spans = [] if code else [m.span() for m in _INLINE.finditer(rest)]

        def inside(pos: int, spans: list[tuple[int, int]] = spans) -> bool:
            return any(start < pos < end for start, end in spans)

        cut = next(
            (p for p in range(most, most // 2, -1) if rest[p - 1].isspace() and not inside(p)),
            0,
        )
        if not cut:
            cut = next((p for p in range(most, 0, -1) if not inside(p)), most)
            cut = _safe_cut(rest, cut) or cut
        head, rest = rest[:cut], rest[cut:]
        pieces.append(head if code else head.rstrip())
        if not code:
            rest = rest.lstrip()
    pieces.append(rest)
    return pieces


class _Splitter:
    """Greedy line packer; ``measure`` must be additive over concatenation."""

    def __init__(self, limit: int, measure: Measure) -> None:
        self.limit = limit
        self.measure = measure
        self.chunks: list[str] = []
        self.cur: list[str] = []
        self.size = 0
        self.fence: _Fence | None = None  # open fence at the end of ``cur``
        self.parity = False  # inline markup left open at the end of ``cur``
        # Per break position i (chunk = cur[:i]): inside code before cur[i]; markup open.
        self.code_at: list[bool] = []
        self.open_at: list[bool] = []

    def _reset(self, fence: _Fence | None) -> None:
        self.cur, self.size, self.fence, self.parity = [], 0, fence, False
        self.code_at, self.open_at = [], []
        if fence is not None:
            self._append(fence.opening, fence)

    def _append(self, line: str, after: _Fence | None) -> None:
        self.code_at.append(self.fence is not None)
        self.open_at.append(self.parity)
        if self.fence is None and after is None:
            self.parity ^= _unbalanced(line)
        self.size += self.measure(line) + (1 if self.cur else 0)
        self.cur.append(line)
        self.fence = after

    def _emit(self, lines: list[str]) -> None:
        chunk = "\n".join(lines).rstrip()
        if chunk.strip():
            self.chunks.append(chunk)

    def _next_fence(self, line: str) -> _Fence | None:
        if self.fence is not None:
            return None if _closes(line, self.fence) else self.fence
        return _fence_of(line)

    def _reserve(self, fence: _Fence | None) -> int:
        return self.measure("\n" + fence.closing) if fence is not None else 0

    def run(self, lines: list[str]) -> list[str]:
        pending = list(reversed(lines))  # a stack: pop() takes the next line
        while pending:
            line = pending.pop()
            if self.fence is None and not self.cur and not line.strip():
                continue  # no leading blank lines in a chunk
            if self.fence is not None and _closes(line, self.fence):
                line = self.fence.closing  # always fits: its room was reserved
            after = self._next_fence(line)
            grown = self.size + self.measure(line) + (1 if self.cur else 0)
            if grown + self._reserve(after) <= self.limit:
                self._append(line, after)
                continue
            fresh = not self.cur or (self.fence is not None and len(self.cur) == 1)
            if fresh:
                pending.extend(reversed(self._split_long(line, after)))
            else:
                pending.append(line)
                pending.extend(reversed(self._flush()))
        if any(part.strip() for part in self.cur[1 if self.code_at[:1] == [True] else 0 :]):
            self._emit(self.cur)
        return self.chunks

    def _split_long(self, line: str, after: _Fence | None) -> list[str]:
        """Emit full chunks of an over-long line; return its tail to process normally."""
        fence = self.fence
        head = self.measure(fence.opening) + 1 if fence is not None else 0
        budget = self.limit - head - self._reserve(after if fence is None else fence)
        pieces = _split_line(line, max(1, budget), self.measure, code=fence is not None)
        for piece in pieces[:-1]:
            if fence is not None:
                self._emit([fence.opening, piece, fence.closing])
            else:
                self._emit([piece])
        return pieces[-1:]

    def _flush(self) -> list[str]:
        """Emit ``cur`` up to the best break; return the lines to process again."""
        n = len(self.cur)
        if self.fence is not None:
            starts = [i for i in range(n) if not self.code_at[i]]
            opened = starts[-1] if starts else 0
            if opened > 0:  # keep the code block whole: break before it
                return self._cut(opened)
            fence = self.fence
            self._emit([*self.cur, fence.closing])
            self._reset(fence)
            return []
        paragraphs = [
            i
            for i in range(1, n)
            if not self.cur[i].strip()
            and not self.code_at[i]
            and not self.open_at[i]
            and self._size_of(i) >= self.limit // 2
        ]
        if paragraphs:
            return self._cut(paragraphs[-1])
        if not self.parity:
            return self._cut(n)
        balanced = [i for i in range(1, n) if not self.code_at[i] and not self.open_at[i]]
        return self._cut(balanced[-1] if balanced else n)

    def _size_of(self, i: int) -> int:
        return self.measure("\n".join(self.cur[:i]))

    def _cut(self, i: int) -> list[str]:
        rest = self.cur[i:]
        self._emit(self.cur[:i])
        self._reset(None)
        return rest


def split_message(text: str, limit: int, *, measure: Measure = len) -> list[str]:
    """Split ``text`` into chunks of at most ``limit`` (by ``measure``); [] if blank.

    Prefers paragraph breaks, then line breaks, then whitespace; a fenced code block is
    kept whole when it fits a chunk, else closed and reopened across chunks.
    """
    if limit < 32:
        raise ValueError("limit must be at least 32 to hold a fenced chunk")
    text = text.replace("\r\n", "\n").strip("\n").rstrip()
    if not text.strip():
        return []
    if measure(text) <= limit:
        return [text]
    return _Splitter(limit, measure).run(text.split("\n"))


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
            await self._state.set(self._prefix + delivery_key, ",".join(ids))

    async def _forget(self, delivery_key: str, count: int) -> None:
        self._done.pop(delivery_key, None)
        if count > 1 and self._state is not None:
            await self._state.delete(self._prefix + delivery_key)
