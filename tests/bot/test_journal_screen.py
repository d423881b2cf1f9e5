"""What will be refused is cut before the journal writes it (strangers, oversize pastes)."""

from __future__ import annotations

from bot.messages import Attachment, ChatKey, InboundMessage
from bot.store.db import Database
from tests.fakes.channel import FakeChannel


async def _journaled(db: Database) -> list[str]:
    rows = await db.fetchall("SELECT payload FROM inbox ORDER BY id")
    return [r["payload"] for r in rows]


async def test_strangers_message_is_cut_before_journaling(daemon_factory, fake_llm) -> None:
    channel = FakeChannel("test", trusted=False)
    daemon, chat = await daemon_factory(channel=channel)
    assert chat.put_inbound is not None
    msg = InboundMessage(
        ChatKey("test", "c9"),
        "stranger",
        "s" * 50_000,
        message_id="x1",
        attachments=(Attachment("document", "f1", "secret.pdf"),),
        direct=True,
    )
    await chat.put_inbound(msg)
    notice = await chat.reply(msg)
    assert "pairing code" in notice.text and notice.key.chat_id == "c9"
    (payload,) = await _journaled(daemon.db)
    assert len(payload) < 2_000 and "secret.pdf" not in payload
    assert fake_llm.requests == []


async def test_oversize_message_is_cut_but_refused_with_its_real_length(
    daemon_factory, fake_llm
) -> None:
    daemon, chat = await daemon_factory(agent={"max_message_chars": 1000})
    reply = await chat.ask("x" * 30_000)
    assert "30,000 characters" in reply.text and "1,000" in reply.text
    (payload,) = await _journaled(daemon.db)
    assert "x" * 1000 in payload and "x" * 1001 not in payload
    assert fake_llm.requests == []
    ok = await chat.ask("short one")
    assert ok.text == "echo: short one"
