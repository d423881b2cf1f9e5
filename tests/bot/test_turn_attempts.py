"""A message whose turn kills the process is not replayed forever; one whose turn a
graceful restart cut off is answered however often the daemon restarts meanwhile.

Each start of a turn is counted on its inbox row before the turn runs. A crash (SIGKILL,
the OOM killer) leaves the row started and unfinished; here each crash is the database
put back as it stood mid-turn (what a killed process leaves on disk: every commit is
written) under a daemon stopped since. After three such attempts the next start retires
the message, apologizes once, and the chat answers again. A graceful stop (SIGTERM) past
``shutdown_timeout_s`` gives the start back instead.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from bot.dispatcher.dispatcher import GAVE_UP, MAX_ATTEMPTS
from bot.messages import OutboundKind, OutboundMessage
from tests.fakes.channel import FakeChannel


def _row(data: Path, message_id: str) -> tuple[str, int]:
    with sqlite3.connect(data / "bot.db") as db:
        row = db.execute(
            "SELECT status, attempts FROM inbox WHERE message_id = ?", (message_id,)
        ).fetchone()
    assert row is not None
    return str(row[0]), int(row[1])


async def _replies(chat, message_id: str) -> list[OutboundMessage]:
    await chat.wait_for(lambda sent: any(m.reply_to == message_id for m in sent))
    return [m for m in chat.sent if m.reply_to == message_id]


async def _crash_mid_turn(daemon, fake_llm, requests: int) -> None:
    """Wait until the turn is at the model, then crash: the database as it stands now
    outlives the daemon, whatever its stop writes after."""
    await fake_llm.wait_requests(requests)
    db = Path(daemon.settings.data_dir) / "bot.db"
    left = db.with_name("crashed.db")
    with (
        contextlib.closing(sqlite3.connect(db)) as live,
        contextlib.closing(sqlite3.connect(left)) as copy,
    ):
        live.backup(copy)
    await daemon.stop(timeout=0)
    for side in ("-wal", "-shm"):
        db.with_name(db.name + side).unlink(missing_ok=True)
    left.replace(db)


async def test_message_that_keeps_killing_its_turn_is_retired_after_three(
    daemon_factory, fake_llm, tmp_path
) -> None:
    data = tmp_path / "data"
    for _ in range(MAX_ATTEMPTS):
        fake_llm.reply_text("never arrives", delay=30)
    daemon, chat = await daemon_factory(data)
    await chat.say("poison", message_id="p1")
    await _crash_mid_turn(daemon, fake_llm, 1)
    assert _row(data, "p1") == ("pending", 1)  # started, never finished
    for attempt in range(2, MAX_ATTEMPTS + 1):
        daemon, chat = await daemon_factory(data)  # replayed at start
        await _crash_mid_turn(daemon, fake_llm, attempt)
        assert _row(data, "p1") == ("pending", attempt)

    daemon, chat = await daemon_factory(data)
    [sorry] = await _replies(chat, "p1")
    assert (sorry.kind, sorry.text) == (OutboundKind.ERROR, GAVE_UP)
    assert len(fake_llm.requests) == MAX_ATTEMPTS  # no fourth model call
    # The chat moves on, and the retired message's text is gone from its history: the
    # model gets only the new message.
    assert (await chat.ask("hello again")).text == "echo: hello again"
    assert "poison" not in str(fake_llm.requests[-1].json["messages"])
    await daemon.stop(timeout=1)
    assert _row(data, "p1") == ("failed", MAX_ATTEMPTS + 1)

    channel = FakeChannel()
    daemon, chat = await daemon_factory(data, channel=channel)  # told once, not again
    assert (await chat.ask("and again")).text == "echo: and again"
    assert [m for m in channel.sent if m.reply_to == "p1"] == []


async def test_turns_that_finish_are_not_counted_against_later_replays(
    daemon_factory, fake_llm, tmp_path
) -> None:
    data = tmp_path / "data"
    fake_llm.reply_text("never arrives", delay=30)
    daemon, chat = await daemon_factory(data)
    await chat.say("slow", message_id="s1")
    await _crash_mid_turn(daemon, fake_llm, 1)
    daemon, chat = await daemon_factory(data)  # the replay answers this time
    [answer] = await _replies(chat, "s1")
    assert answer.text == "echo: slow"
    await daemon.stop(timeout=1)
    assert _row(data, "s1") == ("done", 2)


async def test_graceful_restarts_mid_turn_never_retire_its_message(
    daemon_factory, fake_llm, tmp_path
) -> None:
    """A slow model's turn outlasts shutdown_timeout_s at every restart: each SIGTERM
    cuts it off, none counts, and the start after them answers it once."""
    data = tmp_path / "data"
    for _ in range(MAX_ATTEMPTS + 1):
        fake_llm.reply_text("never arrives", delay=30)
    daemon, chat = await daemon_factory(data)
    await chat.say("summarise this long report", message_id="r1")
    for attempt in range(1, MAX_ATTEMPTS + 2):
        await fake_llm.wait_requests(attempt)
        await daemon.stop(timeout=0)  # what SIGTERM does, the turn past its time
        assert _row(data, "r1") == ("pending", 0)
        daemon, chat = await daemon_factory(data)

    [answer] = await _replies(chat, "r1")
    assert answer.text == "echo: summarise this long report"
    await daemon.stop(timeout=1)
    assert _row(data, "r1") == ("done", 1)


async def test_a_stop_gives_back_its_own_start_once_and_a_crash_still_counts(
    daemon_factory, fake_llm, tmp_path
) -> None:
    """The stop gives the running turn's start back as it begins, and the timeout then
    cuts the turn: given back once, so the crash before it still counts."""
    data = tmp_path / "data"
    for _ in range(2):
        fake_llm.reply_text("never arrives", delay=30)
    daemon, chat = await daemon_factory(data)
    await chat.say("heavy", message_id="h1")
    await _crash_mid_turn(daemon, fake_llm, 1)
    daemon, chat = await daemon_factory(data)  # replayed: its second start
    await fake_llm.wait_requests(2)
    assert _row(data, "h1") == ("pending", 2)
    await daemon.stop(timeout=0)  # what SIGTERM does, the turn past its time
    assert _row(data, "h1") == ("pending", 1)
