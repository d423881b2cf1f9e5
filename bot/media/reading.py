"""A document as text: a file a user sent, or a page web_fetch downloaded, converted in a
child process, one at a time, within [media]'s limits.

The converters are CPU-bound and a hostile file may make them slow or huge (a PDF whose
stream inflates to gigabytes), so each conversion runs in a child the OS confines
(bot/conversion.py): an address space of twice ``max_unpacked_mb`` plus a fixed margin,
killed at ``convert_timeout_s``. Conversions run one at a time across uploads and
web_fetch, so the daemon holds at most one such child; a killed one frees the slot at
once. PDF pages read and the unpacked size of an Office file are capped before
conversion starts (bot/documents.py, bot/office.py).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable

from bot.config.media import MediaSettings
from bot.conversion import Limits, convert_in_child, memory_for
from bot.documents import Document, convert, convert_file, label_of


class DocumentReader:
    def __init__(self, settings: MediaSettings) -> None:
        self._max_pages = settings.max_pdf_pages
        self._max_unpacked = int(settings.max_unpacked_mb * 1_000_000)
        self.limits = Limits(memory_for(self._max_unpacked), settings.convert_timeout_s)
        self._one_at_a_time = asyncio.Semaphore(1)

    async def read(self, data: bytes, mime: str, name: str) -> Document:
        """A file's text; :class:`~bot.documents.UnreadableDocument` (a ToolError) with a
        reason the user can read when it is encrypted, damaged, unknown, too large once
        unpacked or too slow."""
        job = functools.partial(
            convert_file,
            data,
            mime,
            name,
            max_pages=self._max_pages,
            max_unpacked=self._max_unpacked,
        )
        return await self.convert(job, label_of(data, mime, name))

    async def read_page(
        self, data: bytes, content_type: str, *, charset: str | None, url: str
    ) -> Document:
        """A downloaded page's text (HTML, PDF up to ``max_pdf_pages``, text), as
        :meth:`read` refuses and reports."""
        job = functools.partial(
            convert, data, content_type, charset=charset, url=url, max_pages=self._max_pages
        )
        return await self.convert(job, label_of(data, content_type))

    async def convert(self, job: Callable[[], Document], what: str) -> Document:
        """``job`` (picklable: a module-level function and its arguments) in a child, once
        the one slot is free; ``what`` names the document in a refusal."""
        async with self._one_at_a_time:
            return await convert_in_child(job, self.limits, what)
