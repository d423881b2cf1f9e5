"""A document a user sent, as text: converted on a thread, one at a time, within a time cap.

The converters are CPU-bound and a hostile file may make them slow, so each runs off the
event loop and is awaited at most ``convert_timeout_s``. A thread cannot be stopped, so
the work itself is bounded too: PDF pages read and the unpacked size of an Office file
are capped before conversion starts (bot/documents.py, bot/office.py), and conversions
run one at a time, so a slow one holds one thread, never many.
"""

from __future__ import annotations

import asyncio
import logging

from bot.config.media import MediaSettings
from bot.documents import Document, UnreadableDocument, convert_file

log = logging.getLogger(__name__)


class DocumentReader:
    def __init__(self, settings: MediaSettings) -> None:
        self._timeout_s = settings.convert_timeout_s
        self._max_pages = settings.max_pdf_pages
        self._max_unpacked = int(settings.max_unpacked_mb * 1_000_000)
        self._one_at_a_time = asyncio.Semaphore(1)

    async def read(self, data: bytes, mime: str, name: str) -> Document:
        """The document's text; :class:`UnreadableDocument` (a ToolError) with a reason
        the user can read when it is encrypted, damaged, unknown or too slow."""
        await self._one_at_a_time.acquire()
        work = asyncio.ensure_future(
            asyncio.to_thread(
                convert_file,
                data,
                mime,
                name,
                max_pages=self._max_pages,
                max_unpacked=self._max_unpacked,
            )
        )
        # Released when the thread ends, not when we stop waiting for it.
        work.add_done_callback(lambda _: self._one_at_a_time.release())
        try:
            return await asyncio.wait_for(asyncio.shield(work), self._timeout_s)
        except TimeoutError:
            log.warning("converting %r took over %gs; given up", name, self._timeout_s)
            work.add_done_callback(_retrieve)
            raise UnreadableDocument(
                f"reading it took longer than {self._timeout_s:g} s, so I stopped"
            ) from None


def _retrieve(work: asyncio.Future[Document]) -> None:
    """An abandoned conversion's outcome, taken so asyncio logs no unretrieved error."""
    if not work.cancelled():
        work.exception()
