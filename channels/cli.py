"""The terminal channel: `bot chat`, and `bot run` when stdin is a terminal.

It goes through the same bus, dispatcher and agent as every platform. Lines are sent
one at a time and each waits for its final answer, so a piped script gets answers in
order and the process can exit exactly when the last one is printed.

At a terminal the prompt is prompt_toolkit's (imported only there): line editing,
history (the arrow keys, kept in a file across sessions), and ``patch_stdout``, which
prints a reminder or an answer that arrives while the user types above the prompt and
then redraws the prompt with the half-typed line intact. readline cannot redraw its
line after output from another task; prompt_toolkit is built for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from bot.messages import ChatKey, InboundMessage, OutboundMessage
from channels.base import PutInbound, Sent

log = logging.getLogger(__name__)

CLI_KEY = ChatKey("cli", "local")
PROMPT = "you> "
THINKING = "bot> thinking…"


class CLIChannel:
    name = "cli"
    trusted = True

    def __init__(
        self,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        *,
        interactive: bool | None = None,
        user_id: str = "local",
        history: Path | None = None,
        files: Path | None = None,
    ) -> None:
        self._files = files  # where files sent to the terminal are saved
        self._in = stdin or sys.stdin
        self._out = stdout  # None: sys.stdout at each write (patched under the prompt)
        self._interactive = self._in.isatty() if interactive is None else interactive
        self._user = user_id
        self._history = history
        self._pending: dict[str, asyncio.Event] = {}
        self._thinking: set[str] = set()  # turns whose "thinking…" line was printed
        self._task: asyncio.Task[None] | None = None
        self._put: PutInbound | None = None
        self._stopping: set[asyncio.Future[None]] = set()  # /stop messages being put
        self._shown: dict[str, str] = {}  # streamed previews: id -> the text printed
        self._previews = itertools.count(1)
        self.finished = asyncio.Event()

    @property
    def interactive(self) -> bool:
        return self._interactive

    @property
    def connected(self) -> bool:
        return self._task is not None and not self._task.done()

    async def start(self, put_inbound: PutInbound) -> None:
        self._put = put_inbound
        loop = self._prompt_loop if self._interactive else self._read_loop
        self._task = asyncio.create_task(loop(put_inbound), name="cli-reader")

    def _reader(self, loop: asyncio.AbstractEventLoop, lines: asyncio.Queue[str]) -> None:
        # A daemon thread: a blocked readline() must never keep the process alive.
        while True:
            try:
                line = self._in.readline()
            except (OSError, ValueError):
                line = ""
            with contextlib.suppress(RuntimeError):  # loop already closed
                loop.call_soon_threadsafe(lines.put_nowait, line)
            if not line:
                return

    async def _read_loop(self, put_inbound: PutInbound) -> None:
        """Piped input: every line answered in order, no prompt."""
        lines: asyncio.Queue[str] = asyncio.Queue()
        loop = asyncio.get_running_loop()
        threading.Thread(target=self._reader, args=(loop, lines), daemon=True).start()
        try:
            while True:
                line = await lines.get()
                if not line:
                    break
                await self._say(put_inbound, line.rstrip("\r\n"))
        finally:
            self.finished.set()

    async def _prompt_loop(self, put_inbound: PutInbound) -> None:
        """A terminal: prompt_toolkit's prompt, with output kept above it."""
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory, History, InMemoryHistory
        from prompt_toolkit.patch_stdout import patch_stdout

        history: History = InMemoryHistory()
        if self._history is not None:
            self._history.parent.mkdir(parents=True, exist_ok=True)
            trim_history(self._history)
            history = FileHistory(str(self._history))
        session: PromptSession[str] = PromptSession(history=history)
        try:
            with patch_stdout(), _keys_as_typed(self._in):
                while True:
                    try:
                        # Ctrl-C at the prompt is a key here (raw mode), so the
                        # daemon's SIGINT handler is left in place: prompt_toolkit's
                        # own would remove it on return, and a Ctrl-C while an answer
                        # is awaited would then be swallowed.
                        text = await session.prompt_async(PROMPT, handle_sigint=False)
                    except (EOFError, KeyboardInterrupt):  # Ctrl-D, Ctrl-C: leave
                        break
                    await self._say(put_inbound, text)
        finally:
            self.finished.set()

    async def _say(self, put_inbound: PutInbound, text: str) -> None:
        """One message in, and wait for its final answer."""
        if not text.strip():
            return
        msg = InboundMessage(
            key=CLI_KEY, user_id=self._user, text=text, user_name="you", direct=True
        )
        done = asyncio.Event()
        self._pending[msg.message_id] = done
        await put_inbound(msg)
        await done.wait()
        self._thinking.discard(msg.message_id)

    def interrupt(self) -> bool:
        """Ctrl-C while an answer is awaited at the terminal (between two prompts the
        terminal is in its normal mode, so the key arrives as SIGINT): /stop that answer
        and prompt again at once; "Stopped." follows above the prompt. False when no
        answer is awaited: Ctrl-C then leaves, as at the prompt."""
        if not self._interactive or not self._pending or self._put is None:
            return False
        stop = InboundMessage(
            key=CLI_KEY, user_id=self._user, text="/stop", user_name="you", direct=True
        )
        task: asyncio.Future[None] = asyncio.ensure_future(self._put(stop))
        self._stopping.add(task)
        task.add_done_callback(self._stopping.discard)
        for done in self._pending.values():
            done.set()
        self._pending.clear()
        return True

    async def typing(self, key: ChatKey, message_id: str | None = None) -> None:
        """A turn is taking a while: say so once (at a terminal only), unless its answer
        is already being printed as it is written (the line would land inside it)."""
        if not self._interactive:
            return
        waiting = [m for m in self._pending if m not in self._thinking]
        if waiting:
            self._thinking.update(waiting)
            if not any(self._shown.values()):  # an answer being written says it already
                self._write(THINKING)

    # -- streamed previews: at a terminal the answer is printed as it is written ------

    def preview_limit(self, key: ChatKey) -> int:
        return 1 << 30

    def preview_interval(self, key: ChatKey, configured: float) -> float:
        return 0.0  # no platform to spare: every growth is printed as it comes

    async def post_preview(self, key: ChatKey, text: str, reply_to: str | None) -> str:
        message_id = f"preview-{next(self._previews)}"
        self._shown[message_id] = ""
        await self.edit_preview(key, message_id, text)
        return message_id

    async def edit_preview(self, key: ChatKey, message_id: str, text: str) -> None:
        """The new words after what is on screen; a rewrite (a status line replaced, a
        retried answer) starts a fresh line. Piped output stays one line per answer."""
        if not self._interactive:
            return
        self._write(self._continue(message_id, text), end="")

    async def delete_preview(self, key: ChatKey, message_id: str) -> None:
        if self._shown.pop(message_id, ""):
            self._write("")

    def _continue(self, message_id: str, text: str) -> str:
        shown = self._shown.get(message_id, "")
        self._shown[message_id] = text
        if shown and text.startswith(shown):
            return text[len(shown) :]
        return ("\n" if shown else "") + "bot> " + text

    async def send(self, msg: OutboundMessage) -> Sent:
        prefix = "bot> " if self._interactive else ""
        if msg.preview_id is not None and self._interactive:
            self._write(self._continue(msg.preview_id, msg.text))
            self._shown.pop(msg.preview_id, None)
        else:
            self._write(f"{prefix}{msg.text}")
        if msg.final and msg.reply_to is not None:
            event = self._pending.pop(msg.reply_to, None)
            if event is not None:
                event.set()
        return Sent()

    def upload_limit(self) -> int:
        return 1 << 40  # a file on this machine's disk: no platform in between

    async def upload(self, key: ChatKey, name: str, data: bytes, caption: str = "") -> Sent:
        """A file sent to the terminal is saved (owner-only) and its path printed."""
        prefix = "bot> " if self._interactive else ""
        if self._files is None:
            self._write(f"{prefix}[file not shown in the terminal: {name}]")
            return Sent()
        path = await asyncio.to_thread(_save, self._files, name, data)
        self._write(f"{prefix}[file saved: {path}]" + (f" {caption}" if caption else ""))
        return Sent((str(path),))

    def _write(self, text: str, end: str = "\n") -> None:
        out = self._out or sys.stdout
        out.write(text + end)
        out.flush()

    async def stop(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


@contextlib.contextmanager
def _keys_as_typed(stream: TextIO) -> Iterator[None]:
    """The terminal's echo and line mode off while the chat runs. Between two prompts
    (a turn running) the terminal is in this mode, not prompt_toolkit's raw one. With
    echo on, keys typed ahead were echoed where the cursor is, in front of the answer,
    and drawn again by prompt_toolkit, which reads them at the next prompt. In line
    mode, Ctrl-D typed ahead was no key but an end of file the line discipline
    consumed, so the chat stayed. Now both reach the next prompt as keys. Signals
    stay on: Ctrl-C is SIGINT here (see ``CLIChannel.interrupt``). prompt_toolkit's
    raw mode saves and restores this."""
    try:
        import termios
    except ImportError:  # not POSIX: nothing to do
        yield
        return
    try:
        fd = stream.fileno()
        saved = termios.tcgetattr(fd)
    except (OSError, ValueError, termios.error):  # not a terminal after all
        yield
        return
    quiet = list(saved)
    quiet[3] &= ~(termios.ECHO | termios.ICANON)  # lflag
    quiet[6] = list(saved[6])  # cc: a read returns each key as it comes
    quiet[6][termios.VMIN], quiet[6][termios.VTIME] = 1, 0
    termios.tcsetattr(fd, termios.TCSANOW, quiet)
    try:
        yield
    finally:
        with contextlib.suppress(termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, saved)


def _save(folder: Path, name: str, data: bytes) -> Path:
    """``data`` as ``folder/name`` (``name-2`` and so on when taken), mode 0600."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    base = Path(name).name or "file"
    stem, suffix = Path(base).stem, Path(base).suffix
    for n in itertools.count(1):
        path = folder / (base if n == 1 else f"{stem}-{n}{suffix}")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        return path.resolve()
    raise AssertionError("unreachable")


HISTORY_KEPT = 1000  # lines typed at the terminal that up-arrow can bring back


def trim_history(path: Path, keep: int = HISTORY_KEPT) -> None:
    """Keep the newest ``keep`` entries of prompt_toolkit's history file, which it only
    ever appends to (each entry: a ``# <time>`` line, then its lines prefixed ``+``)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return
    entries = text.split("\n# ")
    if len(entries) - 1 <= keep:
        return
    path.write_text("".join("\n# " + e for e in entries[-keep:]), encoding="utf-8")
