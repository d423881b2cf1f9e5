"""Every kind of document a user may send becomes text (bot/documents.py, bot/office.py),
and what cannot be read says why; the page, unpack and time caps stop hostile files."""

from __future__ import annotations

import asyncio
import functools
import io
import os
import resource
import time
from pathlib import Path

import pytest

from bot.config.media import MediaSettings
from bot.documents import UnreadableDocument, convert, convert_file, decode
from bot.media.reading import DocumentReader
from tests.fakes import documents

HTML = (
    b"<html><head><title>T</title></head><body><nav>menu</nav><article><h1>Report</h1>"
    + (b"<p>The harbour bridge reopens on Monday after repairs to the deck.</p>" * 5)
    + b"</article></body></html>"
)


@pytest.mark.parametrize(
    ("name", "data", "mime", "kind", "expected"),
    [
        ("a.pdf", documents.pdf("Hello PDF"), "application/pdf", "pdf", "Hello PDF"),
        ("b.docx", documents.docx("Para one", heading="Plan"), "", "docx", "# Plan\nPara one"),
        ("c.xlsx", documents.xlsx([["item", "cost"], ["tea", 3]]), "", "xlsx", "| tea | 3 |"),
        ("d.pptx", documents.pptx("Quarterly review"), "", "pptx", "## Slide 1\nQuarterly review"),
        ("e.html", HTML, "text/html", "html", "harbour bridge reopens on Monday"),
        ("f.md", b"# Title\n\n- item", "text/markdown", "text", "# Title\n\n- item"),
        ("g.csv", b"a,b\n1,2\n", "text/csv", "text", "a,b\n1,2"),
        ("h.py", b"def f():\n    return 1\n", "text/x-python", "text", "def f():"),
        ("i.rs", 'fn main() { println!("é"); }'.encode(), "", "text", "fn main()"),
        # Windows "Unicode" text and Excel's "CSV UTF-8": read by their byte-order mark
        ("j.csv", "Name;Menge\r\nÄpfel;3\r\n".encode("utf-16"), "text/csv", "text", "Äpfel;3"),
        ("k.txt", "Notiz: Grüße".encode("utf-16"), "", "text", "Notiz: Grüße"),
        ("l.csv", "\ufeffName,Qty\n".encode(), "text/csv", "text", "Name,Qty"),
    ],
)
def test_every_kind_becomes_text(
    name: str, data: bytes, mime: str, kind: str, expected: str
) -> None:
    document = convert_file(data, mime, name, max_pages=10, max_unpacked=10**8)
    assert document.kind == kind and expected in document.text
    assert "\x00" not in document.text and not document.text.startswith("\ufeff")


EXCEL_CSV = "Name;Stadt;Betrag\nMüller;Köln;12,50 €\nJosé;São Paulo;3\n"


@pytest.mark.parametrize(
    ("text", "encoding", "mime"),
    [
        # Excel's "CSV" on Windows, declared as CSV, as nothing in particular, or not at all
        (EXCEL_CSV, "cp1252", "text/csv"),
        (EXCEL_CSV, "cp1252", "application/octet-stream"),
        (EXCEL_CSV, "cp1252", ""),
        (EXCEL_CSV.replace("€", "EUR"), "latin-1", "text/plain"),
        ("Привет, как дела? Всё хорошо, спасибо большое.", "cp1251", "text/plain"),
        (EXCEL_CSV, "utf-8", "text/csv"),
    ],
)
def test_text_in_a_legacy_encoding_is_read_in_that_encoding(
    text: str, encoding: str, mime: str
) -> None:
    data = text.encode(encoding)
    document = convert_file(data, mime, "Kunden.csv", max_pages=1, max_unpacked=10**8)
    assert document.kind == "text" and document.text == text


@pytest.mark.parametrize(
    ("text", "mime"),
    [
        # a few bytes of cp1252 read as clean Big5 (K闤n) or UTF-16 (䯶汮) too
        ('{"city": "Köln"}', "application/json"),
        ("a;b\nKöln;1\n", "text/csv"),
        ("Köln", "text/plain"),
        ("ça va, „Öl“ à Paris", "text/plain"),
    ],
)
def test_a_short_western_text_with_no_charset_is_read_as_cp1252(text: str, mime: str) -> None:
    assert convert(text.encode("cp1252"), mime).text == text


JAPANESE = "日本語のテキストです。今日は良い天気ですね。\n明日は東京で会議があります。\n"
CHINESE = "今天天气很好，我们去公园散步吧。\n明天上午有一个重要的会议。\n"


@pytest.mark.parametrize(
    ("text", "encoding"),
    [
        (JAPANESE, "shift_jis"),
        (JAPANESE, "euc_jp"),
        (CHINESE, "gbk"),
        ("今天天氣很好，我們去公園散步吧。\n明天上午有一個重要的會議。\n", "big5"),
        ("テキスト", "shift_jis"),
    ],
)
def test_east_asian_text_keeps_its_encoding_beside_the_cp1252_preference(
    text: str, encoding: str
) -> None:
    assert convert(text.encode(encoding), "text/plain").text == text


def test_a_declared_charset_is_kept_and_binary_is_still_refused() -> None:
    declared = convert("Grüße".encode("cp1252"), "text/plain", charset="mac_roman")
    assert declared.text == "Grüße".encode("cp1252").decode("mac_roman")
    with pytest.raises(UnreadableDocument, match="cannot read this kind of file"):
        convert_file(
            bytes(range(1, 256)) * 4,
            "application/octet-stream",
            "blob",
            max_pages=1,
            max_unpacked=10**8,
        )


def _thread(posts: int, script: int = 0) -> bytes:
    """A forum thread of ``posts`` replies, each about 190 characters of markup."""
    replies = "".join(
        f"<div class='post'><a href='/u/{i % 97}'>user{i % 97}</a><div class='body'><p>"
        f"Reply {i}: an ordinary answer with <a href='/t/{i}'>a link</a> and <code>code</code>"
        ", quoting the post above.</p></div></div>\n"
        for i in range(posts)
    )
    return (
        "<html><head><title>Big thread</title>"
        f"<script>{'var x = 1;' * script}</script></head><body><nav>menu</nav>"
        f"<main><h1>Thread</h1>{replies}</main></body></html>"
    ).encode()


def _spy_extract(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Records the ``fast`` flag of each trafilatura.extract call."""
    import trafilatura

    calls: list[bool] = []
    real = trafilatura.extract

    def extract(*args: object, **kwargs: object) -> str | None:
        calls.append(bool(kwargs.get("fast")))
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(trafilatura, "extract", extract)
    return calls


def test_a_page_past_the_markup_cap_is_cut_read_fast_and_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A page near the 2 MB fetch cap took about a minute (trafilatura's extraction grows
    faster than the page), holding the one conversion slot uploads share."""
    calls = _spy_extract(monkeypatch)
    page = convert(_thread(4000), "text/html", charset="utf-8")
    assert calls == [True]
    assert page.title == "Thread" and "Reply 0: an ordinary answer" in page.text
    assert "Reply 3999:" not in page.text
    assert page.text.endswith("… [only the first 512 KB of the page's 751 KB of markup were read]")


def test_a_page_within_the_cap_is_read_whole_with_the_full_extraction(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = _spy_extract(monkeypatch)
    small = convert(_thread(300), "text/html", charset="utf-8")
    # over the cap in bytes, but most of it a script, which extraction drops anyway
    scripted = convert(_thread(300, script=60_000), "text/html", charset="utf-8")
    assert calls == [False, False]
    for page in (small, scripted):
        assert page.title == "Thread" and "Reply 299:" in page.text
        assert "markup were read" not in page.text


@pytest.mark.parametrize(
    ("name", "mime", "data"),
    [
        ("Kunden.csv", "application/vnd.ms-excel", "Name;Stadt\nMüller;Köln\n".encode("cp1252")),
        ("deploy.sh", "application/x-sh", b"#!/bin/sh\necho hi\n"),
        ("config.yaml", "application/x-yaml", b"port: 8080\n"),
        ("q.sql", "application/sql", b"SELECT 1;\n"),
        ("app.ts", "video/mp2t", b"export const x: number = 1;\n"),
        ("notes", "application/x-unknown", b"plain words, no name to go by\n"),
    ],
)
def test_a_text_file_is_read_whatever_type_was_declared(name: str, mime: str, data: bytes) -> None:
    document = convert_file(data, mime, name, max_pages=1, max_unpacked=10**8)
    assert document.kind == "text" and document.text == decode(data, None)


@pytest.mark.parametrize(
    ("name", "mime", "said"),
    [
        ("old.xls", "application/vnd.ms-excel", "the XLS file is in the old Excel 97-2003"),
        ("old.xls", "application/octet-stream", "the XLS file is in the old Excel 97-2003"),
        ("letter.doc", "", "the DOC file is in the old Word 97-2003 format"),
        ("attachment", "application/vnd.ms-powerpoint", "saved as .pptx it can be read"),
    ],
)
def test_an_old_office_file_is_named_as_one(name: str, mime: str, said: str) -> None:
    with pytest.raises(UnreadableDocument, match=said):
        convert_file(documents.OLE_HEADER, mime, name, max_pages=1, max_unpacked=10**8)


def test_a_picture_or_a_video_is_no_text_even_where_it_has_no_nul() -> None:
    for mime in ("image/png", "video/mp4"):
        with pytest.raises(UnreadableDocument, match=f"cannot read this kind of file \\({mime}"):
            convert_file(b"GIF89a\x40\x01", mime, "clip", max_pages=1, max_unpacked=10**8)


def test_docx_tables_stay_where_they_stand_as_markdown_tables() -> None:
    import docx

    document = docx.Document()
    document.add_paragraph("Supplier A's prices:")
    table = document.add_table(rows=2, cols=2)
    for (row, col), text in {(0, 0): "Item", (0, 1): "Price", (1, 0): "Desk"}.items():
        table.cell(row, col).text = text
    table.cell(1, 1).text = "120 | 130 EUR"
    document.add_paragraph("Q1, one heading over three months:")
    table = document.add_table(rows=2, cols=3)
    table.cell(0, 0).merge(table.cell(0, 2)).text = "Q1 totals"
    for col, month in enumerate(("Jan", "Feb", "Mar")):
        table.cell(1, col).text = month
    document.add_paragraph("Choose the cheaper one.")
    out = io.BytesIO()
    document.save(out)
    text = convert_file(out.getvalue(), "", "offers.docx", max_pages=1, max_unpacked=10**8).text
    assert text == (
        "Supplier A's prices:\n\n"
        "| Item | Price |\n| --- | --- |\n| Desk | 120 \\| 130 EUR |\n\n"
        "Q1, one heading over three months:\n\n"
        "| Q1 totals |  |  |\n| --- | --- | --- |\n| Jan | Feb | Mar |\n\n"
        "Choose the cheaper one."
    )


def test_a_ten_thousand_page_pdf_is_read_up_to_the_page_cap() -> None:
    document = convert_file(
        documents.many_page_pdf(10_000), "application/pdf", "x.pdf", max_pages=3, max_unpacked=1
    )
    assert document.text.count("page\n") == 3
    assert document.text.endswith("[only the first 3 of its 10,000 pages were read]")


def test_an_office_zip_bomb_is_refused_before_it_is_opened() -> None:
    with pytest.raises(UnreadableDocument, match="would unpack to 50 MB, over the 1 MB limit"):
        convert_file(documents.zip_bomb(50), "", "x.xlsx", max_pages=1, max_unpacked=1_000_000)


async def test_a_slow_conversion_is_killed_at_its_deadline_and_frees_the_slot_at_once() -> None:
    reader = DocumentReader(MediaSettings(convert_timeout_s=0.01, max_pdf_pages=300))
    slow = documents.many_page_pdf(300)
    with pytest.raises(UnreadableDocument, match=r"took longer than 0\.01 s"):
        await reader.read(slow, "application/pdf", "slow.pdf")
    # One at a time, and its child is gone (not still converting): the slot is free.
    assert not reader._one_at_a_time.locked()
    quick = DocumentReader(MediaSettings(convert_timeout_s=30))
    quick._one_at_a_time = reader._one_at_a_time
    document = await asyncio.wait_for(quick.read(b"hi", "text/plain", "a.txt"), 30)
    assert document.text == "hi"


async def test_a_pdf_bomb_is_refused_in_its_child_and_this_process_does_not_grow() -> None:
    """300 KB that inflate to 300 MB: the child's address space (twice max_unpacked_mb
    plus the margin, 258 MB here) runs out; the refusal says so, and the next file reads."""
    reader = DocumentReader(MediaSettings(max_unpacked_mb=1))
    bomb = documents.pdf_bomb(300)
    assert len(bomb) < 400_000
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(UnreadableDocument) as refused:
        await reader.read(bomb, "application/pdf", "bomb.pdf")
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert str(refused.value) == (
        "the PDF is too large to read once unpacked (it would need over 258 MB of memory)"
    )
    assert grown_mb < 100
    document = await reader.read(documents.pdf("Hello PDF"), "application/pdf", "a.pdf")
    assert document.text == "Hello PDF"


async def test_a_conversion_that_hangs_is_killed_at_its_timeout(tmp_path: Path) -> None:
    reader = DocumentReader(MediaSettings(convert_timeout_s=1))
    pid_file = tmp_path / "pid"
    started = time.monotonic()
    with pytest.raises(UnreadableDocument, match=r"took longer than 1 s, so I stopped"):
        await reader.convert(functools.partial(documents.hang, str(pid_file)), "file")
    assert time.monotonic() - started < 15  # the fork server's first start included
    assert not reader._one_at_a_time.locked()
    pid = int(pid_file.read_text())
    for _ in range(100):  # killed; its parent, the fork server, reaps it right away
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        await asyncio.sleep(0.05)
    else:
        pytest.fail(f"the hanging conversion (pid {pid}) is still running")
    document = await asyncio.wait_for(reader.read(b"hi", "text/plain", "a.txt"), 30)
    assert document.text == "hi"
