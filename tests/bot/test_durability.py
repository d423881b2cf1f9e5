"""Durability: the commit a platform acknowledgement waits for is fsynced.

WAL with ``synchronous=NORMAL`` may lose the last commits on power loss; that is fine for
replies (re-made) but not for the inbox journal, after which the channel tells the
platform the message arrived. So the journal commit runs under ``synchronous=FULL``
and every other write keeps ``NORMAL`` (the cost: one fsync per inbound message, or per
group of messages arriving together, see tests/bot/test_group_commit.py and ``make bench``).
"""

from __future__ import annotations

from bot.messages import ChatKey, InboundMessage, OutboundMessage
from bot.store.db import Database
from bot.store.inbox import InboxStore
from bot.store.outbox import OutboxStore

KEY = ChatKey("test", "c1")


def _between(trace: list[str], start: str, end: str) -> list[list[str]]:
    """The statements inside each start..end span of the trace."""
    spans, current = [], None
    for sql in trace:
        if sql.startswith(start):
            current = []
        elif sql.startswith(end) and current is not None:
            spans.append(current)
            current = None
        elif current is not None:
            current.append(sql)
    return spans


async def test_inbox_journal_commit_is_full_sync_and_other_writes_are_not(tmp_path) -> None:
    db = Database(tmp_path / "bot.db")
    await db.open()
    trace: list[str] = []
    await db.run(lambda c: c.set_trace_callback(trace.append))
    try:
        inbox, outbox = InboxStore(db), OutboxStore(db)
        msg = InboundMessage(KEY, "u1", "hello", message_id="m1")
        await inbox.accept(msg)
        await outbox.add(OutboundMessage(KEY, "hi", idempotency_key="r1"))
        await inbox.done(msg)
    finally:
        await db.close()
    [span] = _between(trace, "PRAGMA synchronous=FULL", "PRAGMA synchronous=NORMAL")
    # The whole transaction, its COMMIT included, ran under FULL.
    assert [" ".join(sql.split()[:5]) for sql in span] == [
        "BEGIN",
        "INSERT OR IGNORE INTO inbox",
        "COMMIT",
    ]
    outside = [sql for sql in trace if sql not in span]
    assert any(sql.startswith("INSERT OR IGNORE INTO outbox") for sql in outside)
    assert any(sql.startswith("UPDATE inbox") for sql in outside)
