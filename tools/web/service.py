"""The web service both tools share (``WebAccess``): search and fetch, formatted,
framed as external content, and counted by outcome.

Every expected failure is a ``ToolError`` the model can explain to the user; each call
is counted under ``(tool, outcome)`` for ``bot_web_calls_total`` (ok, refused, timeout,
rate_limited, http_error, unsupported, error). At most ``_SLOTS`` fetches and as many
searches run at once; more wait their turn. A fetched page becomes text through the
``PageReader`` the daemon shares with the files users send (bot/media/reading.py): in a
child process with a memory cap and a deadline, one conversion at a time.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from typing import Protocol

from bot.config.webtools import FetchSettings, SearchSettings
from bot.documents import Document, UnreadableDocument, kind_of
from bot.errors import ToolError
from tools.web.errors import WebError
from tools.web.fetch import Fetched, Fetcher, too_large
from tools.web.frame import frame
from tools.web.reasons import shown_url
from tools.web.search import SearchBackend, SearchHit, make_backend
from tools.web.search.base import HttpGetter

log = logging.getLogger(__name__)

SEARCH, FETCH = "web_search", "web_fetch"
MAX_TITLE, MAX_URL, MAX_SNIPPET = 200, 500, 400
MAX_QUERY = 400
DEFAULT_RESULT_CHARS = 16_000  # [context] max_tool_result_chars' default
RESULT_OVERHEAD = 1_500  # frame lines, the URL, a title, notes, the runner's label
_SLOTS = 4


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def format_hits(query: str, backend: str, hits: list[SearchHit]) -> str:
    if not hits:
        return f'No results for "{query}" ({backend}).'
    lines = []
    for n, hit in enumerate(hits, 1):
        lines.append(f"{n}. {_clip(hit.title, MAX_TITLE) or '(no title)'}")
        lines.append(f"   {_clip(hit.url, MAX_URL)}")
        if hit.snippet:
            lines.append(f"   {_clip(hit.snippet, MAX_SNIPPET)}")
    return frame(f'web search results for "{query}" ({backend})', "\n".join(lines))


def format_page(fetched: Fetched, document: Document, start: int, limit: int) -> str:
    """Characters ``start`` to ``start + limit`` of the page's text, framed; when that is
    not the whole text, a last line says which part it is and how to read on."""
    text = document.text
    total = len(text)
    if total and start >= total:
        raise WebError(
            f"start={start} is past the end of the page: it has {total:,} characters "
            "(start=0 reads it from the beginning)"
        )
    part = text[start : start + limit]
    notes = []
    if fetched.truncated:
        notes.append(f"[the page was cut at {len(fetched.body)} bytes ([fetch] max_bytes)]")
    if part != text:
        notes.append(_range_note(start, start + len(part), total))
    head = f"Title: {_clip(document.title, MAX_TITLE)}\n\n" if document.title else ""
    body = head + (part or "(the page has no readable text)")
    return frame(f"the page {shown_url(fetched.url)}", "\n\n".join([body, *notes]))


def _range_note(start: int, end: int, total: int) -> str:
    shown = f"[characters {start:,}-{end:,} of {total:,}"
    if end >= total:
        return f"{shown}: the end of the page]"
    return f"{shown}; call web_fetch with start={end} for more]"


def page_chars(result_chars: int) -> int:
    """The most page text one web_fetch result holds: what fits in a tool result that
    is not offloaded ([context] max_tool_result_chars), less room for the frame, title
    and notes, so the model reads every character it is given."""
    return max(result_chars - RESULT_OVERHEAD, result_chars // 2)


class PageReader(Protocol):
    """Converts a downloaded page to text (DocumentReader fits); raises
    ``UnreadableDocument`` with the reason when it cannot or may not."""

    async def read_page(
        self, data: bytes, content_type: str, *, charset: str | None, url: str
    ) -> Document: ...


class WebTools:
    """``web_search`` and ``web_fetch`` behind the ``WebAccess`` protocol."""

    def __init__(
        self,
        search: SearchSettings,
        fetch: FetchSettings,
        http: HttpGetter,
        *,
        reader: PageReader,
        backend: SearchBackend | None = None,
        fetcher: Fetcher | None = None,
        result_chars: int = DEFAULT_RESULT_CHARS,
    ) -> None:
        self._max_results = search.max_results
        self._backend = backend or make_backend(search, http)
        self._fetcher = fetcher or Fetcher(fetch)
        self._reader = reader
        self._page_chars = page_chars(result_chars)
        self._search_slots = asyncio.Semaphore(_SLOTS)
        self._fetch_slots = asyncio.Semaphore(_SLOTS)
        self._counts: Counter[tuple[str, ...]] = Counter()

    def counts(self) -> Mapping[tuple[str, ...], float]:
        """Calls so far by (tool, outcome)."""
        return {key: float(n) for key, n in self._counts.items()}

    async def search(self, query: str, count: int | None = None) -> str:
        query = " ".join(query.split())[:MAX_QUERY]
        if not query:
            raise ToolError("query is empty: say what to search for")
        wanted = count or self._max_results
        backend = self._backend

        async def run() -> str:
            async with self._search_slots:
                hits = await backend.search(query, wanted)
            return format_hits(query, backend.name, hits[:wanted])

        return await self._counted(SEARCH, run)

    async def fetch(self, url: str, max_chars: int | None = None, start: int = 0) -> str:
        """The page at ``url`` as framed text, ``max_chars`` of it at most from ``start``
        (never more than one result holds: the rest is read by calling again)."""
        limit = min(max_chars or self._page_chars, self._page_chars)
        start = max(0, start)

        async def run() -> str:
            async with self._fetch_slots:
                fetched = await self._fetcher.fetch(url)
            if fetched.truncated and kind_of(fetched.body, fetched.content_type) == "pdf":
                raise too_large(fetched.url, len(fetched.body))  # a cut PDF is unreadable
            document = await self._reader.read_page(
                fetched.body, fetched.content_type, charset=fetched.charset, url=fetched.url
            )
            return format_page(fetched, document, start, limit)

        return await self._counted(FETCH, run)

    async def _counted(self, tool: str, run: Callable[[], Awaitable[str]]) -> str:
        outcome = "error"
        try:
            text = await run()
            outcome = "ok"
            return text
        except WebError as exc:
            outcome = exc.outcome
            raise
        except UnreadableDocument as exc:  # unsupported, or its conversion timed out / too big
            outcome = exc.outcome
            raise
        finally:
            self._counts[(tool, outcome)] += 1
