"""Documents as text for the model: HTML as Markdown of its main content, PDF as its
text, Office files (DOCX, XLSX, PPTX: bot/office.py) as text, JSON, CSV, Markdown,
source code and other text as they are.

One converter for every document the assistant reads (a fetched page, an attachment),
so they all read the same. HTML goes through trafilatura, which keeps the article and
drops navigation, footers and cookie banners (readability-lxml keeps HTML; markitdown
converts the whole page and needs onnxruntime and numpy for its file-type model). PDF
goes through pdfminer.six (pure Python). Both are imported on first use. The work is
CPU-bound and a hostile file makes it slow or huge (a PDF stream is inflated whole), so
the daemon runs :func:`convert` and :func:`convert_file` in a child process with a
memory cap and a deadline (bot/conversion.py, through bot/media/reading.py); the page and
unpacked-size caps bound the work itself. A MemoryError is let through, for that child
to report.
"""

from __future__ import annotations

import codecs
import io
import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from bot.errors import ToolError
from bot.office import OfficeUnreadable, office_kind, office_text, old_format, old_office_kind

if TYPE_CHECKING:
    from lxml.html import HtmlElement  # type: ignore[import-untyped]

log = logging.getLogger(__name__)

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})
TEXT_TYPES = frozenset(
    {
        "application/json",
        "application/ld+json",
        "application/xml",
        "application/rss+xml",
        "application/atom+xml",
        "application/javascript",
        "application/x-ndjson",
        "application/yaml",
        "application/toml",
        "application/csv",
    }
)
# Files read as text (or HTML) by their name whatever type the platform declares: Windows
# browsers send a CSV as application/vnd.ms-excel, TypeScript's .ts is video/mp2t, and
# scripts and configs come as application/x-sh, application/x-yaml or application/sql.
_TEXT_EXTENSIONS = """txt text md markdown rst adoc org tex bib log csv tsv psv json jsonl ndjson
    geojson xml yaml yml toml ini cfg conf env properties sql graphql gql proto diff patch srt
    vtt sh bash zsh fish ps1 psm1 bat cmd py pyi pyw rb pl pm php js mjs cjs ts mts cts tsx
    jsx java kt kts scala groovy gradle go rs c h cc cpp cxx hpp hh cs fs vb swift m mm r jl
    lua dart ex exs erl hrl hs ml mli clj cljs elm nim zig nix tf hcl css scss sass less vue
    svelte astro ipynb svg"""
TEXT_SUFFIXES = frozenset(_TEXT_EXTENSIONS.split())
HTML_SUFFIXES = frozenset({"html", "htm", "xhtml"})
_MEDIA = ("image/", "audio/", "video/")
_SNIFF = 512
_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),  # the codec reads the mark and drops it
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_BOMS_16 = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
# Characters of a page's markup read (scripts and styles aside): the extraction of a
# page this size takes about a second, of a 2 MB one most of a minute.
HTML_CAP = 512 * 1024
_CHAOS_MARGIN = 0.1  # how much messier than the best guess cp1252 may read and still win
_SHORT = 64  # fewer bytes than this: too few for a detector to tell code pages apart
_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")
# What Western text holds beyond ASCII: Latin-1's letters, cp1252's few more, the euro,
# quotes, dashes and the common signs (no ƒ, † or ‰: Shift_JIS lead bytes read as those).
_WESTERN = frozenset(
    "ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖØÙÚÛÜÝÞßàáâãäåæçèéêëìíîïðñòóôõöøùúûüýþÿŒœŠšŽžŸ"
    "€‚„…–—‘’“”•™«»°£¥§©®¿¡·²³µ¢½¼¾´±\xa0"
)


@dataclass(frozen=True, slots=True)
class Document:
    """A converted document: ``kind`` is html, pdf or text; ``title`` may be empty."""

    kind: str
    text: str
    title: str = ""


class UnreadableDocument(ToolError):
    """The bytes are no document this converter reads (an image, an archive, junk).
    ``outcome``: the label the web tools count it under in ``bot_web_calls_total``."""

    outcome: ClassVar[str] = "unsupported"


class DocumentTimeout(UnreadableDocument):
    """Reading it took past the conversion's deadline (the child was killed)."""

    outcome = "timeout"


class DocumentTooLarge(UnreadableDocument):
    """Unpacked, it would need more memory than a conversion gets."""

    outcome = "too_large"


def suffix_of(name: str) -> str:
    """The file name's extension, lower case, without its dot ("" when it has none)."""
    return name.lower().rsplit(".", 1)[-1] if "." in name else ""


def kind_of(data: bytes, content_type: str, name: str = "") -> str | None:
    """html, pdf or text from the declared type, else (no NUL in the first bytes) from
    the name's extension, else, unless it is declared a picture, sound or video, from
    whether those bytes read as text; None: none of them."""
    mime = content_type.split(";", 1)[0].strip().lower()
    if mime in HTML_TYPES:
        return "html"
    if mime in PDF_TYPES or data.startswith(b"%PDF-"):
        return "pdf"
    if mime.startswith("text/") or mime in TEXT_TYPES or mime.endswith(("+json", "+xml")):
        return "text"
    if data.startswith(_BOMS_16):  # UTF-16 text: NULs between its letters
        return "text"
    head = data[:_SNIFF]
    if head.lstrip().lower().startswith((b"<!doctype html", b"<html")):
        return "html"
    if b"\x00" in head:
        return None
    suffix = suffix_of(name)
    if suffix in HTML_SUFFIXES or suffix in TEXT_SUFFIXES:
        return "html" if suffix in HTML_SUFFIXES else "text"
    if mime.startswith(_MEDIA):
        return None
    return "text" if reads_as_text(head) else None


def reads_as_text(head: bytes) -> bool:
    """No NUL, and UTF-8 (a character cut at the end aside) or another encoding
    charset_normalizer finds: a CSV Excel saved in cp1252 is text, a zip or an image is not."""
    if b"\x00" in head:
        return False
    if _utf8(head) is not None:
        return True
    from charset_normalizer import from_bytes

    return from_bytes(head).best() is not None


def decode(data: bytes, charset: str | None) -> str:
    """Text in its declared charset; undecodable bytes become U+FFFD. A byte-order mark
    decides first, as browsers let it: a text or CSV file saved by a Windows program as
    UTF-16 ("Unicode") was read as UTF-8, every other byte a NUL, and a UTF-8 one kept its
    BOM as the text's first character. With no charset (or an unknown one): UTF-8 when the
    bytes are UTF-8, else the legacy encoding :func:`legacy_charset` finds (Excel's
    cp1252 CSV read as UTF-8 was ``M\ufffdller;K\ufffdln``)."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return data.decode(codec, errors="replace")
    if charset:
        try:
            return data.decode(charset, errors="replace")
        except LookupError:  # an unknown charset name
            pass
    text = _utf8(data)
    return text if text is not None else data.decode(legacy_charset(data), errors="replace")


def _utf8(data: bytes) -> str | None:
    """``data`` as UTF-8, None when it is not; a character cut at the end (a sniffed
    block, a download stopped at its cap) becomes U+FFFD."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.reason != "unexpected end of data":
            return None
        return data.decode("utf-8", errors="replace")


def legacy_charset(data: bytes) -> str:
    """The encoding of text that is not UTF-8, by charset_normalizer (the detector
    requests and pdfminer already bring; chardet is slower and LGPL). Among single-byte
    code pages it ranks by a few letters and often puts a Baltic or Mac one first for
    German or French (``K\u00f7ln`` for Köln), so cp1252, what Windows and Excel write in
    the West, wins whenever it reads the text about as cleanly; cp1252 when nothing fits,
    and when a short text or one guessed as a multi-byte encoding (Big5, UTF-16 without
    its mark) reads as Western text in it (``{"city": "Köln"}`` was ``K闤n``)."""
    from charset_normalizer import from_bytes
    from charset_normalizer.utils import is_multi_byte_encoding

    matches = from_bytes(data)
    best = matches.best()
    if best is None:
        return "cp1252"
    for match in matches:
        if "cp1252" in match.could_be_from_charset and match.chaos <= best.chaos + _CHAOS_MARGIN:
            return "cp1252"
    unsure = len(data) < _SHORT or is_multi_byte_encoding(best.encoding)
    return "cp1252" if unsure and _reads_as_cp1252(data) else best.encoding


def _reads_as_cp1252(data: bytes) -> bool:
    """Whether ``data`` reads as Western text in cp1252: every non-ASCII character a
    Latin letter or common punctuation, in runs of at most three, each letter touching
    an ASCII letter or standing alone (``Köln``, ``Grüße``, ``à``, ``„Öl“``). A few bytes
    of cp1252 read as clean Big5 or UTF-16 too (``K闤n``, ``䯶汮``), which charset_normalizer
    cannot tell apart; real Shift_JIS, GBK or Big5 text reads in cp1252 as long runs of
    symbols (``“ú–{Œê`` for 日本語) or as ``ƒeƒLƒXƒg``, and keeps its encoding."""
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:  # 0x81, 0x8D, 0x8F, 0x90, 0x9D: no character in cp1252
        return False
    for run in _NON_ASCII_RUN.finditer(text):
        chars = run.group()
        if len(chars) > 3 or not all(c in _WESTERN for c in chars):
            return False
        before = text[run.start() - 1] if run.start() else " "
        after = text[run.end()] if run.end() < len(text) else " "
        alone = len(chars) == 1 and not before.isalpha() and not after.isalpha()
        for i, char in enumerate(chars):
            touches = (i == 0 and before.isalpha()) or (i == len(chars) - 1 and after.isalpha())
            if char.isalpha() and not (touches or alone):
                return False
    return True


def convert(
    data: bytes,
    content_type: str,
    *,
    charset: str | None = None,
    url: str = "",
    max_pages: int = 0,
    name: str = "",
) -> Document:
    """``data`` as text (a PDF read up to ``max_pages``, 0: all);
    :class:`UnreadableDocument` when it is no document read here."""
    kind = kind_of(data, content_type, name)
    if kind == "html":
        return html_document(decode(data, charset) if charset else data, url)
    if kind == "pdf":
        return pdf_document(data, max_pages)
    if kind == "text":
        return Document("text", decode(data, charset))
    shown = content_type.split(";", 1)[0].strip() or "unknown"
    raise UnreadableDocument(
        f"cannot read content of type {shown}: only web pages, PDF, JSON and text are read"
    )


def html_document(html: str | bytes, url: str = "") -> Document:
    """The main content as Markdown (links and tables kept); the whole text when
    trafilatura finds no main content (a page that is all navigation). The page is
    parsed once for its title and its text. Extraction grows faster than the page (a
    2 MB forum thread took a minute), so markup past :data:`HTML_CAP` (scripts and
    styles aside) is cut, read without trafilatura's second opinion (``fast``), and
    the text says so."""
    import trafilatura

    tree = trafilatura.load_html(html)
    if tree is None:  # nothing an HTML parser makes a page of
        return Document("html", "")
    title = _title(tree)
    tree, size = _capped(tree) if len(html) > HTML_CAP else (tree, 0)
    text = trafilatura.extract(
        tree,
        url=url or None,
        fast=size > 0,
        output_format="markdown",
        include_links=True,
        include_tables=True,
        include_comments=False,
    )
    if not text:
        text = trafilatura.html2txt(tree) or ""
    text = text.strip()
    if size:
        text += (
            f"\n\n… [only the first {HTML_CAP // 1024:,} KB of the page's "
            f"{size // 1024:,} KB of markup were read]"
        )
    return Document("html", text, title)


def _title(tree: HtmlElement) -> str:
    """The title trafilatura's extract_metadata finds (meta tags, JSON-LD, else the
    title element or the one h1), without its author, date and category searches,
    which took seconds on a large page for fields no one reads."""
    from trafilatura.metadata import examine_meta, extract_meta_json, extract_title

    meta = examine_meta(tree)
    try:
        meta = extract_meta_json(tree, meta)
    except Exception as exc:  # extract_metadata forgives its JSON-LD reader the same way
        log.debug("JSON-LD metadata not read: %s", exc)
    return (meta.title or extract_title(tree) or "").strip()


def _capped(tree: HtmlElement) -> tuple[HtmlElement, int]:
    """The page cut to its first :data:`HTML_CAP` characters of markup once scripts,
    styles and inline SVG (which extraction drops anyway) are gone, and the size it had
    then; the same tree and 0 when it fits."""
    import trafilatura
    from lxml import etree  # type: ignore[import-untyped]

    etree.strip_elements(tree, "script", "style", "noscript", "svg", with_tail=False)
    markup: str = etree.tostring(tree, encoding="unicode", method="html")
    if len(markup) <= HTML_CAP:
        return tree, 0
    end = markup.rfind("<", 0, HTML_CAP)  # no half tag at the end
    capped = trafilatura.load_html(markup[: end if end > 0 else HTML_CAP])
    return (capped, len(markup)) if capped is not None else (tree, 0)


def label_of(data: bytes, content_type: str, name: str = "") -> str:
    """How a refusal names the document: PDF, DOCX, XLSX, PPTX, page, text or file."""
    try:
        office = office_kind(data, content_type, name)
    except OfficeUnreadable:
        office = None
    if office is not None:
        return office.upper()
    return {"pdf": "PDF", "html": "page", "text": "text"}.get(
        kind_of(data, content_type, name) or "", "file"
    )


def convert_file(
    data: bytes, content_type: str, name: str, *, max_pages: int, max_unpacked: int
) -> Document:
    """A file a user sent as text: Office files by type or name, else :func:`convert`
    (a PDF read up to ``max_pages``; a text file by its name or its bytes, whatever
    type was declared); an old .doc, .xls or .ppt is named as such."""
    try:
        kind = office_kind(data, content_type, name)
        if kind is not None:
            return Document(kind, office_text(data, kind, max_unpacked))
    except OfficeUnreadable as exc:
        raise UnreadableDocument(str(exc)) from None
    if kind_of(data, content_type, name) is None:
        old = old_office_kind(content_type, name)
        if old is not None:
            raise UnreadableDocument(old_format(old))
        shown = content_type.split(";", 1)[0].strip() or "unknown"
        raise UnreadableDocument(
            f"I cannot read this kind of file ({shown}): PDF, Word, Excel, PowerPoint, "
            "HTML, Markdown, CSV, plain text and source code are read"
        )
    return convert(data, content_type, max_pages=max_pages, name=name)


def pdf_document(data: bytes, max_pages: int = 0) -> Document:
    """The text of at most ``max_pages`` pages (0: all), with a note when more exist;
    an encrypted PDF is named as such."""
    from pdfminer.high_level import extract_text
    from pdfminer.pdfdocument import PDFEncryptionError, PDFPasswordIncorrect

    try:
        pages = _page_count(data)
        text = extract_text(io.BytesIO(data), maxpages=max_pages)
    except (PDFPasswordIncorrect, PDFEncryptionError):
        raise UnreadableDocument("the PDF is encrypted (it needs a password)") from None
    except MemoryError:
        raise
    except Exception as exc:  # pdfminer raises many kinds on a damaged or cut file
        log.info("PDF not readable: %s: %s", type(exc).__name__, exc)
        raise UnreadableDocument(f"the PDF could not be read ({type(exc).__name__})") from None
    text = text.strip()
    if max_pages and pages > max_pages:
        text += f"\n\n… [only the first {max_pages:,} of its {pages:,} pages were read]"
    return Document("pdf", text)


def _page_count(data: bytes) -> int:
    """The page count the document's page tree declares (0 when it declares none)."""
    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdfparser import PDFParser
    from pdfminer.pdftypes import resolve1

    document = PDFDocument(PDFParser(io.BytesIO(data)))
    pages = resolve1(document.catalog.get("Pages"))
    count = resolve1(pages.get("Count")) if isinstance(pages, dict) else None
    return count if isinstance(count, int) else 0
