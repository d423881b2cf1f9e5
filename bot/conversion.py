"""One document conversion in a child process, under limits the OS enforces.

A converter inflates what the file tells it to: pdfminer decompresses a PDF stream
whole, so a 500 KB PDF may unpack to 500 MB, and a thread stuck in a hostile file cannot
be stopped. So every conversion runs in a child process: its address space is capped
(``RLIMIT_AS``: an allocation past the cap is a MemoryError, reported as "too large to
read once unpacked"), and it is killed at its deadline, so the daemon's memory never grows
with a document and a stuck conversion frees its slot at once.

The children are forked by multiprocessing's fork server: a fresh interpreter (not a fork
of the daemon, so no thread, socket or lock of it is inherited) that imports the
converters once, when the first document arrives. A child then costs a fork and the
hand-over of the bytes, not the converters' imports (~0.5 s): see :data:`PRELOAD`.
Linux only for the memory cap (it reads /proc); elsewhere the deadline still holds.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import multiprocessing
import os
import resource
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.context import ForkServerContext
from multiprocessing.process import BaseProcess

from bot.documents import Document, DocumentTimeout, DocumentTooLarge, UnreadableDocument

log = logging.getLogger(__name__)

# Imported once by the fork server, so a child starts with them: ~60 MB resident there,
# shared by every child (copy on write). bot.cli.launch is what the `bot` script imports:
# multiprocessing runs a main script again in each child (its __name__ guard keeps it
# from starting anything), so that costs nothing either.
PRELOAD = [
    "bot.conversion",
    "bot.documents",
    "pdfminer.high_level",
    "trafilatura",
    "docx",
    "openpyxl",
    "pptx",
    "bot.cli.launch",
]
# A conversion's own needs (the parse, the text) over the document's unpacked size.
MEMORY_MARGIN_MB = 256
_ENDED_S = 5  # a child that said its last word and still runs after this is killed


@dataclass(frozen=True, slots=True)
class Limits:
    """``memory_mb``: what the child may add to the address space it starts with;
    ``timeout_s``: its wall-clock time, from the moment it runs."""

    memory_mb: float
    timeout_s: float


def memory_for(max_unpacked: int) -> float:
    """The memory a conversion gets, in MB: twice the unpacked size allowed (a stream
    and its parse, or the parts of an inflation and their join) plus the margin."""
    return 2 * max_unpacked / 1e6 + MEMORY_MARGIN_MB


async def convert_in_child(job: Callable[[], Document], limits: Limits, what: str) -> Document:
    """``job()`` run in a child under ``limits``; :class:`UnreadableDocument` saying so
    (naming the document as ``what``) when it passes one, or when it raised that itself."""
    context = _context()
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(send, job, limits), daemon=True)
    answered, exitcode = False, None
    try:
        await _start(child, send)
        async with asyncio.timeout(limits.timeout_s):
            raw = await _read_to_end(receive)
        answered = True
    except TimeoutError:
        log.warning("converting a %s took over %gs; killed", what, limits.timeout_s)
        raise DocumentTimeout(
            f"reading it took longer than {limits.timeout_s:g} s, so I stopped"
        ) from None
    finally:
        receive.close()
        exitcode = await _end(child, answered)
    return _outcome(raw, exitcode, limits, what)


def _context() -> ForkServerContext:
    context = multiprocessing.get_context("forkserver")
    assert isinstance(context, ForkServerContext)
    context.set_forkserver_preload(PRELOAD)  # read when the server starts, once
    return context


async def _start(child: BaseProcess, send: Connection) -> None:
    """``child`` started on a thread (the fork server's first start imports the
    converters); cancelled, it still waits for the start, so the child can be killed."""
    starting = asyncio.ensure_future(asyncio.to_thread(child.start))
    try:
        await asyncio.shield(starting)
    finally:
        if not starting.done():
            await asyncio.wait([starting])
        send.close()  # the child holds the writing end now


async def _read_to_end(receive: Connection) -> bytes:
    """Everything the child writes, until it closes its end (it exits right after)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    pipe = os.fdopen(os.dup(receive.fileno()), "rb", buffering=0)
    receive.close()
    transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    try:
        return await reader.read()
    finally:
        transport.close()


async def _end(child: BaseProcess, answered: bool) -> int | None:
    """The child gone: killed unless it answered (then given a moment to exit), reaped;
    its exit code."""
    if child.pid is None:  # never started
        return None
    if answered:
        await asyncio.to_thread(child.join, _ENDED_S)
    if child.exitcode is None:
        child.kill()
        await asyncio.to_thread(child.join)
    exitcode = child.exitcode
    child.close()
    return exitcode


def _outcome(raw: bytes, exitcode: int | None, limits: Limits, what: str) -> Document:
    """The child's answer as a document, or the refusal it stands for. JSON, not pickle:
    the child parsed a stranger's file, so what it says is data, never code."""
    said = json.loads(raw.decode("utf-8", "surrogatepass")) if raw else {}
    kind = said.get("outcome", "died")
    if kind == "ok":
        return Document(str(said["kind"]), str(said["text"]), str(said["title"]))
    if kind == "unreadable":
        raise UnreadableDocument(str(said["reason"]))
    if kind == "memory":
        log.warning("a %s needed over %g MB to convert; refused", what, limits.memory_mb)
        raise DocumentTooLarge(
            f"the {what} is too large to read once unpacked (it would need over "
            f"{limits.memory_mb:,.0f} MB of memory)"
        )
    log.warning("converting a %s failed: %s", what, said.get("reason", f"exit {exitcode}"))
    raise UnreadableDocument(f"the {what} could not be read (its conversion failed)")


def _child(answer: Connection, job: Callable[[], Document], limits: Limits) -> None:
    """In the child: the limits, the job, its outcome written back as one JSON object."""
    _confine(limits)
    said: dict[str, str]
    try:
        document = job()
        said = {"outcome": "ok", "kind": document.kind, "text": document.text}
        said["title"] = document.title
    except MemoryError:
        said = {"outcome": "memory"}
    except UnreadableDocument as exc:
        said = {"outcome": "unreadable", "reason": str(exc)}
    except Exception as exc:  # a converter's bug: named in the daemon's log
        said = {"outcome": "failed", "reason": type(exc).__name__}
    try:
        data = json.dumps(said, ensure_ascii=False).encode("utf-8", "surrogatepass")
    except MemoryError:  # the text does not fit twice
        data = b'{"outcome": "memory"}'
    with open(answer.fileno(), "wb", closefd=False) as out:
        out.write(data)
    answer.close()


def _confine(limits: Limits) -> None:
    """The address-space cap over what the child holds now, and a CPU-time cap that ends
    it should the daemon die before its deadline."""
    cpu = math.ceil(limits.timeout_s) + 1
    _lower(resource.RLIMIT_CPU, cpu)
    try:
        with open("/proc/self/statm", encoding="ascii") as statm:
            size = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # no /proc: the deadline alone bounds the work
        return
    _lower(resource.RLIMIT_AS, size + int(limits.memory_mb * 2**20))


def _lower(limit: int, value: int) -> None:
    """Soft and hard ``limit`` set to ``value``, never above a hard limit already set."""
    _, hard = resource.getrlimit(limit)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(limit, (value, value))
