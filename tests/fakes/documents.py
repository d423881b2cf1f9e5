"""Real files for the media tests, made here: Office files through the libraries that
read them, PDFs byte by byte (one page, thousands of pages, encrypted, a deflate bomb),
a small PNG, a zip bomb. Nothing is downloaded or shipped as a binary fixture."""

from __future__ import annotations

import io
import os
import struct
import time
import zipfile
import zlib
from pathlib import Path

from bot.documents import Document


def pdf(*pages: str) -> bytes:
    """A PDF with one page per text (offsets computed, so pdfminer reads it)."""
    return _pdf(list(pages))


def many_page_pdf(count: int, text: str = "page") -> bytes:
    """``count`` pages sharing one content stream: a 10,000-page PDF of a few hundred KB."""
    return _pdf([text], repeat=count)


def encrypted_pdf() -> bytes:
    """A PDF whose Standard security handler needs a password (the empty one fails)."""
    return _pdf(["secret"], encrypt=True)


def pdf_bomb(inflated_mb: int) -> bytes:
    """A one-page PDF whose content stream (FlateDecode) inflates to ``inflated_mb`` MB
    of spaces: about 1 KB on disk per MB inflated. Made without compressing it all: one
    megabyte's deflate output, ended by a full flush (which resets the compressor), is
    the same for every megabyte, so it is repeated."""
    block = b" " * 1_000_000
    squeeze = zlib.compressobj(9, zlib.DEFLATED, -15)  # raw deflate: header added below
    piece = squeeze.compress(block) + squeeze.flush(zlib.Z_FULL_FLUSH)
    checksum = 1
    for _ in range(inflated_mb):
        checksum = zlib.adler32(block, checksum)
    stream = (
        b"\x78\xda"
        + piece * inflated_mb
        + squeeze.flush(zlib.Z_FINISH)
        + struct.pack(">I", checksum)
    )
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
    ]
    return _serialized(objects, b"/Size %d /Root 1 0 R" % (len(objects) + 1))


def hang(pid_file: str) -> Document:
    """A conversion that never ends (run in the conversion child: it writes its pid)."""
    Path(pid_file).write_text(str(os.getpid()))
    while True:
        time.sleep(60)


def _pdf(pages: list[str], repeat: int = 1, encrypt: bool = False) -> bytes:
    objects: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>", b""]
    font = 3
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    kids: list[int] = []
    for text in pages:
        stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        content = len(objects)
        for _ in range(repeat):
            objects.append(
                b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
                b"/Resources << /Font << /F1 %d 0 R >> >> >>" % (content, font)
            )
            kids.append(len(objects))
    refs = b" ".join(b"%d 0 R" % k for k in kids)
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (refs, len(kids))
    trailer = b"/Size %d /Root 1 0 R" % (len(objects) + 1)
    if encrypt:
        objects.append(
            b"<< /Filter /Standard /V 1 /R 2 /O <%s> /U <%s> /P -4 >>"
            % (b"11" * 32, os.urandom(32).hex().encode())
        )
        trailer += b" /Encrypt %d 0 R /ID [<%s> <%s>]" % (len(objects), b"ab" * 16, b"ab" * 16)
        trailer = trailer.replace(b"/Size %d" % len(objects), b"/Size %d" % (len(objects) + 1))
    return _serialized(objects, trailer)


def _serialized(objects: list[bytes], trailer: bytes) -> bytes:
    """``objects`` numbered from 1, with their cross-reference table and ``trailer``."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< %s >>\nstartxref\n%d\n%%%%EOF\n" % (trailer, xref)
    return bytes(out)


def docx(*paragraphs: str, heading: str = "") -> bytes:
    import docx as python_docx

    document = python_docx.Document()
    if heading:
        document.add_heading(heading, level=1)
    for text in paragraphs:
        document.add_paragraph(text)
    table = document.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text, table.rows[0].cells[1].text = "cell A", "cell B"
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def xlsx(rows: list[list[object]], title: str = "Budget") -> bytes:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = title
    for row in rows:
        sheet.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def pptx(*slides: str) -> bytes:
    import pptx as python_pptx

    deck = python_pptx.Presentation()
    for text in slides:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = text
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def zip_bomb(unpacked_mb: int = 50, name: str = "word/document.xml") -> bytes:
    """A zip (as a .docx would be) whose one member unpacks to ``unpacked_mb`` MB of
    zeros: a few tens of KB on the wire."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        with archive.open(name, "w") as member:
            block = b"\0" * 1_000_000
            for _ in range(unpacked_mb):
                member.write(block)
    return out.getvalue()


def png(width: int = 2, height: int = 2, rgb: tuple[int, int, int] = (255, 0, 0)) -> bytes:
    """A valid PNG of one colour."""
    row = b"\x00" + bytes(rgb) * width
    raw = zlib.compress(row * height)

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", raw) + chunk(b"IEND", b"")


OLE_HEADER = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 504  # an encrypted .docx starts so
