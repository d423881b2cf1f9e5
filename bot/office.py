"""Office files as text for the model: DOCX (python-docx), XLSX (openpyxl, read-only),
PPTX (python-pptx).

Each library is the maintained reader of its format, pure Python on lxml (which
trafilatura already brings) and imported on first use. markitdown would cover all
three, but it pulls onnxruntime and numpy for its file-type model (see documents.py).
An Office file is a zip: its declared unpacked size is checked before any library
opens it, so a zip bomb is refused without inflating a byte of it.
"""

from __future__ import annotations

import io
import logging
import zipfile
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from bot.errors import ToolError

if TYPE_CHECKING:
    from docx.table import Table

log = logging.getLogger(__name__)

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
OFFICE_TYPES = {DOCX: "docx", XLSX: "xlsx", PPTX: "pptx"}
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # encrypted OOXML and old .doc/.xls/.ppt
OLD_FORMATS = {"doc": "Word", "xls": "Excel", "ppt": "PowerPoint"}  # 97-2003: no reader here
OLD_TYPES = {
    "application/msword": "doc",
    "application/vnd.ms-excel": "xls",
    "application/vnd.ms-powerpoint": "ppt",
}
MAX_CELLS = 200_000  # a sheet's cells read at most; the rest is left out with a note


class OfficeUnreadable(ToolError):
    """Encrypted, damaged or too large to unpack."""


def office_kind(data: bytes, content_type: str, name: str) -> str | None:
    """docx, xlsx or pptx from the declared type or the file name; None: none of them."""
    mime = content_type.split(";", 1)[0].strip().lower()
    kind = OFFICE_TYPES.get(mime)
    suffix = _suffix(name)
    if kind is None and suffix in ("docx", "xlsx", "pptx"):
        kind = suffix
    if kind is not None and data.startswith(OLE_MAGIC):
        raise OfficeUnreadable(
            f"the {kind.upper()} file is password-protected (encrypted) or in an old format"
        )
    return kind


def old_office_kind(content_type: str, name: str) -> str | None:
    """doc, xls or ppt (Office 97-2003) from the file name, else the declared type; the
    caller asks only of a file that is no text (a CSV is declared vnd.ms-excel too)."""
    suffix = _suffix(name)
    if suffix in OLD_FORMATS:
        return suffix
    return OLD_TYPES.get(content_type.split(";", 1)[0].strip().lower())


def old_format(kind: str) -> str:
    """Why a doc, xls or ppt file is not read, and what the user can do."""
    return (
        f"the {kind.upper()} file is in the old {OLD_FORMATS[kind]} 97-2003 format (or "
        f"password-protected), which I cannot read: saved as .{kind}x it can be read"
    )


def _suffix(name: str) -> str:
    return name.lower().rsplit(".", 1)[-1] if "." in name else ""


def check_unpacked(data: bytes, max_bytes: int) -> None:
    """Refuse a zip that would unpack past ``max_bytes`` (sizes as its directory says)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            total = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise OfficeUnreadable(f"the file is damaged (not a valid Office file: {exc})") from None
    if total > max_bytes:
        raise OfficeUnreadable(
            f"the file would unpack to {total / 1e6:,.0f} MB, over the "
            f"{max_bytes / 1e6:,.0f} MB limit (a zip bomb, or simply too large)"
        )


def office_text(data: bytes, kind: str, max_unpacked: int) -> str:
    """The text of a docx, xlsx or pptx file."""
    check_unpacked(data, max_unpacked)
    read = {"docx": _docx, "xlsx": _xlsx, "pptx": _pptx}[kind]
    try:
        return "\n".join(read(io.BytesIO(data))).strip()
    except (OfficeUnreadable, MemoryError):
        raise
    except Exception as exc:  # each library raises its own kinds on a damaged file
        log.info("%s not readable: %s: %s", kind, type(exc).__name__, exc)
        raise OfficeUnreadable(
            f"the {kind.upper()} file could not be read ({type(exc).__name__})"
        ) from None


def _docx(source: io.BytesIO) -> Iterator[str]:
    """Paragraphs and tables in the order they stand (all tables used to come last, away
    from the text that explains them), each table as a Markdown table."""
    import docx
    from docx.table import Table

    for block in docx.Document(source).iter_inner_content():
        if isinstance(block, Table):
            yield ""  # Markdown wants a table set apart from the text around it
            yield from _docx_table(block)
            yield ""
            continue
        style = (block.style.name or "") if block.style is not None else ""
        level = style.removeprefix("Heading ").strip()
        prefix = "#" * int(level) + " " if style.startswith("Heading ") and level.isdigit() else ""
        yield prefix + block.text


def _docx_table(table: Table) -> Iterator[str]:
    """Rows of a Markdown table: the separator after the first, a merged cell's text once
    (python-docx hands it out once per column it spans: ``| Q1 | Q1 | Q1 |``)."""
    rows: list[list[str]] = []
    for row in table.rows:
        texts, previous = [], None
        for cell in row.cells:
            texts.append("" if cell is previous else _cell(cell.text.strip()))
            previous = cell
        rows.append(texts)
    width = max((len(texts) for texts in rows), default=0)
    for number, texts in enumerate(rows):
        yield "| " + " | ".join(texts + [""] * (width - len(texts))) + " |"
        if number == 0:
            yield "|" + " --- |" * width


def _xlsx(source: io.BytesIO) -> Iterator[str]:
    import openpyxl

    book = openpyxl.load_workbook(source, read_only=True, data_only=True)
    cells = 0
    try:
        for sheet in book.worksheets:
            yield f"## Sheet: {sheet.title}"
            for row in sheet.iter_rows(values_only=True):
                cells += len(row)
                if cells > MAX_CELLS:
                    yield f"… [only the first {MAX_CELLS:,} cells were read]"
                    return
                if any(value is not None for value in row):
                    yield "| " + " | ".join(_cell(v) for v in row) + " |"
    finally:
        book.close()


def _cell(value: Any) -> str:
    return "" if value is None else str(value).replace("\n", " ").replace("|", "\\|")


def _pptx(source: io.BytesIO) -> Iterator[str]:
    import pptx

    presentation = pptx.Presentation(source)
    for number, slide in enumerate(presentation.slides, 1):
        yield f"## Slide {number}"
        for shape in slide.shapes:
            if getattr(shape, "has_text_frame", False) and shape.text_frame.text.strip():
                yield shape.text_frame.text
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            notes = slide.notes_slide.notes_text_frame.text.strip()
            if notes:
                yield f"Notes: {notes}"
