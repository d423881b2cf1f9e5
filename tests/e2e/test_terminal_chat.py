"""`bot chat` at a real terminal (a pseudo-terminal): the log stays off the screen, a
reminder that arrives while the user types is printed above the prompt, which comes
back with the half-typed line, the arrow keys recall history, a slow turn says
"thinking…", and a streamed answer is printed as the model writes it, on one line.
(Piped input is tests/e2e/test_cli_process.py.)"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from tests.fakes.llm_server import FINAL_RESULT, FakeLLM, tool_calls_reply
from tests.fakes.process import bot_env
from tests.fakes.waiting import PROCESS_S, until

pytestmark = pytest.mark.slow  # a subprocess on a pseudo-terminal, and real time

_CSI = re.compile(r"\x1b\[([0-9;?]*)([A-Za-z])|\x1b[()][0-9A-Za-z]|\x1b[=>]|\x07")


def screen(raw: str) -> list[str]:
    """The screen's lines (scrollback included) after ``raw``: cursor moves, erases and
    overwrites applied, as a terminal would, so text written into another line shows."""
    rows, row, col, at = [""], 0, 0, 0
    for found in [*_CSI.finditer(raw), None]:
        for char in raw[at : found.start() if found else len(raw)]:
            if char == "\r":
                col = 0
            elif char == "\n":
                row += 1
                rows += [""] * (row + 1 - len(rows))
            elif char >= " ":
                line = rows[row].ljust(col)
                rows[row] = line[:col] + char + line[col + 1 :]
                col += 1
        if found is None:
            break
        at = found.end()
        n = int(found[1]) if found[1] and found[1].isdigit() else 1
        code = found[2]
        if code == "C":
            col += n
        elif code == "D":
            col = max(0, col - n)
        elif code == "A":
            row = max(0, row - n)
        elif code == "B":
            row += n
            rows += [""] * (row + 1 - len(rows))
        elif code in "KJ" and found[1] in ("", "0"):
            rows[row] = rows[row][:col]
            if code == "J":
                del rows[row + 1 :]
        elif code == "K" and found[1] == "2":
            rows[row] = ""
    return [r.rstrip() for r in rows]


class Terminal:
    """A pseudo-terminal with ``bot chat`` on it; what it printed, as screen segments."""

    def __init__(self, data: Path, llm: FakeLLM, command: str = "chat", **env: str) -> None:
        self.master, slave = os.openpty()
        env = bot_env(data, llm, TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1", COLUMNS="120", **env)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "bot", command],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            cwd=data.parent,
            start_new_session=True,
        )
        os.close(slave)
        self.raw = ""
        os.set_blocking(self.master, False)

    def lines(self) -> list[str]:
        return [line for line in screen(self.raw) if line]

    async def expect(self, needle: str, timeout: float = 30.0, *, last: bool = False) -> None:
        """Until a line holds ``needle`` (``last``: the last line is ``needle``)."""

        def seen() -> bool:
            shown = self.lines()
            return shown[-1:] == [needle] if last else any(needle in line for line in shown)

        try:
            async with asyncio.timeout(timeout):
                while not seen():
                    if not self.read():
                        await asyncio.sleep(0.05)
        except (TimeoutError, OSError):  # OSError: the process ended
            raise AssertionError(f"{needle!r} not seen: {self.lines()} {self.raw!r}") from None

    def read(self) -> bool:
        """What the terminal printed since the last read; False when nothing was."""
        try:
            self.raw += os.read(self.master, 65536).decode(errors="replace")
        except BlockingIOError:
            return False
        return True

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    async def close(self) -> int:
        self.type("\x04")  # Ctrl-D at an empty prompt
        code = await asyncio.wait_for(asyncio.to_thread(self.proc.wait), timeout=30)
        os.close(self.master)
        return code


async def test_the_terminal_chat_keeps_its_prompt_whole(tmp_path: Path, fake_llm: FakeLLM):
    data = tmp_path / "data"
    term = Terminal(data, fake_llm)
    try:
        await term.expect("you>")
        term.type("/remind in 3 seconds tea\r")
        await term.expect("OK, #1 reminder")
        term.type("hel")  # typing, not sent, when the reminder arrives
        await term.expect("Reminder: tea")
        await term.expect("you> hel")
        lines = term.lines()
        assert [s for s in lines if "Reminder: tea" in s] == ["bot> ⏰ Reminder: tea"], lines
        assert lines[-1] == "you> hel", lines  # the prompt is back, the typing kept

        term.type("\x15")  # Ctrl-U: the line emptied
        fake_llm.reply(tool_calls_reply([("final_result", {"answer": "slow answer"})], delay=2.5))
        term.type("slow one\r")
        await term.expect("thinking…")
        term.type("ahead")  # typed while the turn runs: shown once, on the next prompt
        await term.expect("bot> slow answer")
        await term.expect("you> ahead", last=True)
        lines = term.lines()
        assert [s for s in lines if "ahead" in s] == ["you> ahead"], lines
        assert "bot> slow answer" in lines, lines  # not behind the keys typed ahead
        term.type("\x15")
        term.type("\x1b[A")  # Up: the last line sent comes back
        await term.expect("you> slow one")
        assert "^[[A" not in term.raw
        term.type("\x15")
        await _streams_as_written(term, fake_llm)
        await _ctrl_c_stops_the_answer_awaited(term, fake_llm)
        assert await term.close() == 0
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    shown = term.lines()
    assert not [s for s in shown if " INFO " in s or " WARNING " in s], shown
    assert shown[0].startswith(f"(logs: {data / 'bot.log'}")
    assert (data / "bot.log").is_file()  # `bot chat` logs warnings only; `bot run` all


async def _ctrl_c_stops_the_answer_awaited(term: Terminal, fake_llm: FakeLLM) -> None:
    """Ctrl-C while an answer is awaited (the terminal, in its normal mode between two
    prompts, sends SIGINT) stops that answer and prompts again; the chat stays."""
    release = fake_llm.held_answer("too late")
    asked = len(fake_llm.requests)
    term.type("a long one\r")
    await fake_llm.wait_requests(asked + 1)  # the turn is waiting on the model
    term.proc.send_signal(signal.SIGINT)
    await term.expect("bot> Stopped.")
    await term.expect("you>", last=True)
    release.set()
    term.type("still here?\r")
    await term.expect("bot> echo: still here?")
    assert "too late" not in term.raw


async def _ctrl_d_typed_ahead_leaves_after_the_answer(term: Terminal, fake_llm: FakeLLM) -> None:
    """Ctrl-D pressed while an answer is awaited leaves once it is printed. The terminal
    was in its line mode between two prompts, where Ctrl-D is no key but an end of file
    the line discipline consumed: the prompt came back and the chat stayed."""
    release = fake_llm.held_answer("last words")
    asked = len(fake_llm.requests)
    term.type("one more\r")
    await fake_llm.wait_requests(asked + 1)  # the turn is waiting on the model
    term.type("\x04")
    release.set()
    code = await asyncio.wait_for(asyncio.to_thread(term.proc.wait), timeout=30)
    term.read()
    assert code == 0, term.lines()
    assert "bot> last words" in term.lines(), term.lines()


STORY = " ".join(f"word{n}" for n in range(60))  # 60 distinct words, about 400 characters


async def _streams_as_written(term: Terminal, fake_llm: FakeLLM) -> None:
    """The model writes the answer over about 2 s: its first words are on screen while
    the rest is still being written, the line grows several times before the model is
    done, and the whole answer ends up on one ``bot>`` line, printed once."""
    reply = tool_calls_reply([(FINAL_RESULT, {"answer": STORY})])
    fake_llm.reply(replace(reply, pace=2.0 / (len(STORY) // 8 + 6), piece=8))
    finished = len(fake_llm.streamed)  # one (first, last) event per stream written
    printed = len(term.raw)
    term.type("tell me a story\r")
    await term.expect("word5 ")
    grown = await _growth_while_written(term, fake_llm, finished)
    assert all(f"bot> {STORY}".startswith(line) for line in grown), grown
    partial = [line for line in grown if "word59" not in line]
    assert len(partial) >= 3, grown  # several chunks on screen before the answer was whole
    await term.expect("you>", last=True)  # the final answer came: the prompt is back
    assert f"bot> {STORY}" in term.lines(), "\n".join(term.lines())
    assert not [line for line in term.lines() if "word59" in line and "word0 " not in line]
    answer = _CSI.sub("", term.raw[printed:])  # every byte printed, the escapes cut out
    assert answer.count("word59") == answer.count("word0 ") == 1, answer  # never twice


async def _growth_while_written(term: Terminal, fake_llm: FakeLLM, finished: int) -> list[str]:
    """The answer's line each time it changed, until the model finished writing."""
    grown: list[str] = []
    async with asyncio.timeout(30):
        while len(fake_llm.streamed) == finished:
            if not term.read():
                await asyncio.sleep(0.02)
                continue
            line = next((li for li in term.lines() if li.startswith("bot> word0")), "")
            if line and line not in grown:
                grown.append(line)
    return grown


async def test_bot_run_at_a_terminal_keeps_its_log_off_the_screen(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    """`make run` at a terminal is `bot run` with the terminal channel: it logs every
    INFO line (ready:, the web app), all of them into data/bot.log, none on screen."""
    data = tmp_path / "data"
    term = Terminal(data, fake_llm, "run")
    try:
        await term.expect("you>")
        term.type("hello there\r")
        await term.expect("bot> echo: hello there")
        await _streams_as_written(term, fake_llm)  # the whole daemon streams to the terminal
        await _ctrl_d_typed_ahead_leaves_after_the_answer(term, fake_llm)
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    shown = term.lines()
    assert shown[0].startswith(f"(logs: {data / 'bot.log'}"), shown
    assert not [s for s in shown if " INFO " in s or "ready:" in s], shown
    assert " INFO bot.daemon: ready: channels=cli " in (data / "bot.log").read_text()


MCP_SERVER = str(Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py")


async def test_a_chatty_mcp_servers_stderr_stays_off_the_screen(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    """A stdio MCP server's stderr was the daemon's: its lines landed in the prompt. They
    go to data/bot.log now, under the server's logger."""
    data = tmp_path / "data"
    loud = {"command": sys.executable, "args": [MCP_SERVER]}
    config = json.dumps({"servers": {"loud": loud}})
    term = Terminal(data, fake_llm, "run", BOT_MCP=config)
    log = data / "bot.log"
    try:
        await term.expect("you>", PROCESS_S)
        connected = "MCP server loud: connected"
        await until(lambda: log.is_file() and connected in log.read_text(), PROCESS_S)
        fake_llm.reply(tool_calls_reply([("mcp_loud_chatty", {"lines": 500})]))
        fake_llm.reply(tool_calls_reply([(FINAL_RESULT, {"answer": "all done"})]))
        term.type("be loud\r")
        await term.expect("bot> all done")
        assert await term.close() == 0
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    assert "stderr line" not in term.raw
    assert " INFO tools.mcp.stderr.loud: stderr line 0 stderr line 0 " in log.read_text()
