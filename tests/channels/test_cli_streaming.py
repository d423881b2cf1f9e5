"""The terminal prints a streamed answer as it is written: each growth adds only the new
words, a rewrite starts a fresh line, and the final answer completes the line once."""

from __future__ import annotations

import io

from bot.messages import ChatKey, OutboundMessage
from channels.base import can_preview
from channels.cli import CLIChannel

KEY = ChatKey("cli", "local")


async def test_the_answer_grows_on_one_line_and_the_final_completes_it() -> None:
    out = io.StringIO()
    terminal = CLIChannel(io.StringIO(), out, interactive=True)
    assert can_preview(terminal) and terminal.preview_interval(KEY, 1.0) == 0.0
    status = await terminal.post_preview(KEY, "⏳ get weather…", None)
    await terminal.edit_preview(KEY, status, "It is sunny")  # the answer replaces it
    await terminal.edit_preview(KEY, status, "It is sunny in Paris")
    final = OutboundMessage(KEY, "It is sunny in Paris today.", preview_id=status)
    await terminal.send(final)
    assert out.getvalue() == ("bot> ⏳ get weather…\nbot> It is sunny in Paris today.\n")


async def test_piped_output_stays_one_line_per_answer() -> None:
    out = io.StringIO()
    terminal = CLIChannel(io.StringIO(), out, interactive=False)
    preview = await terminal.post_preview(KEY, "It is sunny", None)
    await terminal.edit_preview(KEY, preview, "It is sunny in Paris")
    await terminal.send(OutboundMessage(KEY, "It is sunny in Paris.", preview_id=preview))
    assert out.getvalue() == "It is sunny in Paris.\n"
