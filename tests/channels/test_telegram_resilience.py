"""Nothing lost, nothing twice: offsets, restarts, flood control, 5xx, refusals."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import socket
from datetime import timedelta
from typing import Any

import pytest

import bot.store.outbox
from bot.errors import ChannelError
from bot.messages import InboundMessage
from bot.store.group import GroupCommit
from bot.store.kv import KeyValueStore
from channels.telegram.adapter import Backoff, TelegramChannel
from channels.telegram.settings import TelegramSettings
from tests.fakes import telegram_api
from tests.fakes.telegram_api import FakeTelegram
from tests.fakes.waiting import until

fake_telegram = telegram_api.fake_telegram
telegram_daemon = telegram_api.telegram_daemon


class RecordingBus:
    """The one bus method a channel uses; can fail like a full disk."""

    def __init__(self, events: list[tuple[str, Any]], fail: int = 0) -> None:
        self.events = events
        self.fail = fail
        self.got = asyncio.Event()

    async def put_inbound(self, msg: InboundMessage) -> None:
        if self.fail:
            self.fail -= 1
            raise OSError("disk full")
        self.events.append(("put", msg.message_id))
        self.got.set()


class MemoryState:
    def __init__(self, events: list[tuple[str, Any]], data: dict[str, str] | None = None):
        self.events = events
        self.data = dict(data or {})
        self.changed = asyncio.Event()

    async def get(self, key: str, default: str | None = None) -> str | None:
        return self.data.get(key, default)

    async def set(self, key: str, value: str, *, keep_for: timedelta | None = None) -> None:
        self.events.append(("commit", value))
        self.data[key] = value
        self.changed.set()


def _channel(tg: FakeTelegram, state: MemoryState, **kw: Any) -> TelegramChannel:
    settings = TelegramSettings(token=tg.token, base_url=tg.base_url, **kw)
    return TelegramChannel(settings, state=state, poll_timeout=1, backoff=Backoff(0.05, 0.4))


def _gaps(calls) -> list[float]:
    return [b.at - a.at for a, b in itertools.pairwise(calls)]


async def test_offset_is_committed_only_after_the_message_is_persisted(fake_telegram):
    events: list[tuple[str, Any]] = []
    state = MemoryState(events)
    bus = RecordingBus(events, fail=1)
    channel = _channel(fake_telegram, state)
    update = fake_telegram.message("hi", message_id=9)
    await channel.start(bus.put_inbound)
    try:
        await asyncio.wait_for(state.changed.wait(), 10)
    finally:
        await channel.stop()
    key = f"telegram:{fake_telegram.bot_id}:offset"
    assert events == [("put", "9"), ("commit", str(update["update_id"] + 1))]
    assert state.data == {key: str(update["update_id"] + 1)}
    polls = fake_telegram.calls_to("getUpdates")
    assert "offset" not in polls[1].params  # re-fetched after the failed put: not confirmed
    assert fake_telegram.calls_to("deleteWebhook")  # polling clears any webhook first


async def test_saved_offset_resumes_and_is_keyed_by_bot_id(fake_telegram):
    events: list[tuple[str, Any]] = []
    other_bot = {"telegram:999:offset": "5000"}
    state = MemoryState(events, other_bot)
    bus = RecordingBus(events)
    fake_telegram.message("for this bot", message_id=3)
    channel = _channel(fake_telegram, state)
    await channel.start(bus.put_inbound)
    try:
        await asyncio.wait_for(bus.got.wait(), 10)  # a new token starts clean
    finally:
        await channel.stop()
    assert "offset" not in fake_telegram.calls_to("getUpdates")[0].params
    saved = state.data[f"telegram:{fake_telegram.bot_id}:offset"]
    # A restart resumes from the saved offset: nothing re-fetched.
    fake_telegram.calls.clear()
    channel = _channel(fake_telegram, state)
    await channel.start(RecordingBus(events).put_inbound)
    try:
        await fake_telegram.wait_for("getUpdates", 1)
    finally:
        await channel.stop()
    assert fake_telegram.calls_to("getUpdates")[0].params["offset"] == int(saved)
    assert [e for e in events if e[0] == "put"] == [("put", "3")]


class GatedBus:
    """put_inbound that fails chosen messages once and holds others until released."""

    def __init__(self, events: list[tuple[str, Any]], *, fail: set[str], hold: set[str]) -> None:
        self.events = events
        self.fail = set(fail)
        self.hold = set(hold)
        self.released = asyncio.Event()

    async def put_inbound(self, msg: InboundMessage) -> None:
        if msg.message_id in self.fail:
            self.fail.discard(msg.message_id)
            raise OSError("disk full")
        if msg.message_id in self.hold:
            await self.released.wait()
        self.events.append(("put", msg.message_id))


def _batch(tg: FakeTelegram, *messages: tuple[int, int]) -> list[dict[str, Any]]:
    """Queue (chat id, message id) messages as one getUpdates batch."""
    return [tg.message(f"m{m}", chat_id=c, user_id=c, message_id=m) for c, m in messages]


async def test_a_batch_runs_its_chats_at_once_and_each_chat_in_order(fake_telegram):
    events: list[tuple[str, Any]] = []
    state = MemoryState(events)
    bus = GatedBus(events, fail=set(), hold={"1"})
    _, _, _, last = _batch(fake_telegram, (10, 1), (10, 2), (20, 3), (20, 4))
    channel = _channel(fake_telegram, state)
    await channel.start(bus.put_inbound)
    try:
        # Chat 10's first message is held: chat 20 goes on, chat 10's second waits.
        await until(lambda: ("put", "4") in events)
        assert ("put", "2") not in events and not state.data
        bus.released.set()
        await asyncio.wait_for(state.changed.wait(), 10)
    finally:
        await channel.stop()
    # One offset commit, after the whole batch is journaled.
    committed = ("commit", str(last["update_id"] + 1))
    assert events == [("put", "3"), ("put", "4"), ("put", "1"), ("put", "2"), committed]


async def _poll_past(
    channel: TelegramChannel, bus: Any, events: list[tuple[str, Any]], last: dict[str, Any]
) -> None:
    """Poll until the offset is committed past ``last``, then stop."""
    await channel.start(bus.put_inbound)
    try:
        await until(lambda: ("commit", str(last["update_id"] + 1)) in events)
    finally:
        await channel.stop()


async def test_unreadable_updates_are_skipped_and_the_rest_of_the_batch_answered(
    fake_telegram, caplog, monkeypatch
):
    """Updates of shapes we cannot read (a chat that is not an object, a message without
    a sender id, text that is not a string) are logged and skipped; the good ones around
    them are journaled and the offset moves past the whole batch. Updates are read as
    JSON, never through PTB's object tree (Update.de_json cost more than the rest of an
    update's way to the bus)."""
    import telegram

    def parsed(*_: object, **__: object) -> None:
        raise AssertionError("an update was parsed into PTB objects")

    monkeypatch.setattr(telegram.Update, "de_json", parsed)
    events: list[tuple[str, Any]] = []
    state = MemoryState(events)
    bus = RecordingBus(events)
    fake_telegram.message("before", message_id=1)
    bad = [
        {"message": {**fake_telegram.make_message("x", message_id=2), "chat": "42"}},
        {"message": {**fake_telegram.make_message("x", message_id=3), "from": {"is_bot": False}}},
        {"message": {**fake_telegram.make_message(None, message_id=4), "text": ["not", "text"]}},
    ]
    for update in bad:
        fake_telegram.add_update(update)
    last = fake_telegram.message("after", message_id=5)
    await _poll_past(_channel(fake_telegram, state), bus, events, last)
    assert [e for e in events if e[0] == "put"] == [("put", "1"), ("put", "5")]
    skipped = [r for r in caplog.records if "could not be read; skipped" in r.getMessage()]
    assert [r.args[0] for r in skipped] == [u["update_id"] for u in bad]  # type: ignore[index]


async def test_a_failed_message_holds_the_offset_and_its_chat_not_the_others(fake_telegram):
    events: list[tuple[str, Any]] = []
    state = MemoryState(events)
    bus = GatedBus(events, fail={"2"}, hold=set())
    first, failed, _, last = _batch(fake_telegram, (20, 1), (10, 2), (20, 3), (10, 4))
    await _poll_past(_channel(fake_telegram, state), bus, events, last)
    # The batch: chat 20 journaled; chat 10 stopped at its failed message; the offset
    # stops there, so it and what follows are fetched again; what was journaled already
    # is not put again (an album held in one chat must not re-journal the others' at
    # every poll).
    assert events[:3] == [("put", "1"), ("put", "3"), ("commit", str(failed["update_id"]))]
    assert failed["update_id"] == first["update_id"] + 1
    again = events[3:]
    assert again.index(("put", "2")) < again.index(("put", "4"))  # chat 10 kept its order
    assert sorted(again[:-1]) == [("put", "2"), ("put", "4")]
    assert "4" not in [m for _, m in events[:3]]  # never before the message ahead of it


async def test_a_batch_of_chats_shares_journal_commits(
    telegram_daemon, fake_telegram, fake_llm, monkeypatch
):
    groups: list[int] = []  # the messages of each journal commit
    commit = GroupCommit._commit

    def counted(self, conn, group):
        outcome = commit(self, conn, group)  # sealed now: no item joins any more
        if not callable(group.items[0]):  # the inbox journal's rows, not a turn's pieces
            groups.append(len(group.items))
        return outcome

    monkeypatch.setattr(GroupCommit, "_commit", counted)
    for chat in range(1, 31):
        fake_telegram.message(f"hello from {chat}", chat_id=chat, user_id=chat)
    await telegram_daemon()
    await fake_telegram.wait_sent(30)
    assert sum(groups) == 30
    assert len(groups) <= 10, groups  # one at a time, the batch cost 30 commits


async def test_restart_after_crash_before_commit_answers_once(
    telegram_daemon, fake_telegram, fake_llm, monkeypatch
):
    async def never(self, key, value):  # the process "dies" before the commit
        await asyncio.Event().wait()

    monkeypatch.setattr(KeyValueStore, "set", never)
    daemon, _ = await telegram_daemon()
    update = fake_telegram.message("answer me once", message_id=11)
    await fake_telegram.wait_sent(1)
    await daemon.stop(timeout=2)
    assert any(u["update_id"] == update["update_id"] for u in fake_telegram.updates)
    monkeypatch.undo()
    await telegram_daemon()  # re-fetches the update; the inbox drops it
    fake_telegram.message("barrier", message_id=12)
    await fake_telegram.wait_sent(2)
    await fake_telegram.wait_confirmed(update["update_id"])
    texts = [c.params["text"] for c in fake_telegram.sent()]
    assert texts == ["echo: answer me once", "echo: barrier"]
    assert len(fake_llm.requests) == 2


async def test_flood_control_storm_on_send_is_waited_out(telegram_daemon, fake_telegram):
    await telegram_daemon()
    fake_telegram.fail("sendMessage", 429, retry_after=0.2, times=4)
    fake_telegram.message("storm")
    sent = await fake_telegram.wait_sent(1)
    assert sent[0].params["text"] == "echo: storm"
    attempts = fake_telegram.calls_to("sendMessage")
    assert len(attempts) == 5
    assert all(gap >= 0.18 for gap in _gaps(attempts))


async def test_flood_control_on_get_updates_is_honoured(telegram_daemon, fake_telegram):
    fake_telegram.fail("getUpdates", 429, retry_after=0.5)
    await telegram_daemon()
    fake_telegram.message("after the flood")
    await fake_telegram.wait_sent(1)
    polls = fake_telegram.calls_to("getUpdates")
    assert polls[1].at - polls[0].at >= 0.45


async def test_get_updates_502_backs_off_and_recovers(telegram_daemon, fake_telegram):
    fake_telegram.fail("getUpdates", 502, times=3)
    await telegram_daemon()
    fake_telegram.message("still there?")
    sent = await fake_telegram.wait_sent(1)
    assert sent[0].params["text"] == "echo: still there?"
    gaps = _gaps(fake_telegram.calls_to("getUpdates")[:4])
    for gap, expected in zip(gaps, (0.05, 0.1, 0.2), strict=True):
        assert gap >= expected * 0.9


def test_backoff_is_exponential_and_capped():
    backoff = Backoff(base=1.0, cap=30.0)
    assert [backoff.delay(n) for n in range(1, 8)] == [1, 2, 4, 8, 16, 30, 30]


async def test_server_errors_on_send_retry_from_the_outbox(
    telegram_daemon, fake_telegram, monkeypatch
):
    monkeypatch.setattr(bot.store.outbox, "BACKOFF_BASE_S", 0.05)
    daemon, _ = await telegram_daemon()
    fake_telegram.fail("sendMessage", 502, times=2)
    fake_telegram.message("eventually")
    sent = await fake_telegram.wait_sent(1)
    assert sent[0].params["text"] == "echo: eventually"
    assert len(fake_telegram.calls_to("sendMessage")) == 3
    assert daemon.delivery.failed == 2


async def _outbox(daemon) -> list[tuple[str, str | None]]:
    rows = await daemon.db.fetchall("SELECT status, last_error FROM outbox ORDER BY id")
    return [(r["status"], r["last_error"]) for r in rows]


@pytest.mark.parametrize(
    ("status", "description"),
    [(403, "Forbidden: bot was blocked by the user"), (400, "Bad Request: chat not found")],
)
async def test_permanent_refusal_is_given_up(telegram_daemon, fake_telegram, status, description):
    daemon, _ = await telegram_daemon()
    fake_telegram.fail("sendMessage", status, description)
    fake_telegram.message("refused")
    await fake_telegram.wait_for("sendMessage", 1)
    fake_telegram.message("barrier")  # same chat: delivered in order after the refusal
    await fake_telegram.wait_sent(1)
    assert len(fake_telegram.calls_to("sendMessage")) == 2  # the refused one not retried
    # Sent deliveries are marked in batches just after the send: await that state.
    async with asyncio.timeout(5):
        while (rows := await _outbox(daemon))[1][0] != "sent":  # noqa: ASYNC110 (db state)
            await asyncio.sleep(0.01)
    assert rows[0][0] == "failed"
    assert description.split(": ")[1].lower() in (rows[0][1] or "").lower()
    assert rows[1][0] == "sent"


async def test_markdown_is_sent_as_entities(telegram_daemon, fake_telegram, fake_llm):
    await telegram_daemon()
    fake_llm.reply_tool_calls([("final_result", {"answer": "**bold** and `code` 👋 _it_"})])
    fake_telegram.message("format please")
    # The answer as it reads once delivered (on a loaded machine a streamed preview of the
    # raw Markdown may come first and be edited into it).
    await fake_telegram.wait_until(lambda: fake_telegram.visible(42) == ["bold and code 👋 it"])
    [(_, entities)] = fake_telegram.shown(42)
    types = {(e["type"], e["offset"], e["length"]) for e in entities}
    assert types == {("bold", 0, 4), ("code", 9, 4), ("italic", 17, 2)}  # UTF-16 offsets


async def test_rejected_formatting_falls_back_to_plain_text(
    telegram_daemon, fake_telegram, fake_llm
):
    await telegram_daemon()
    fake_llm.reply_tool_calls([("final_result", {"answer": "**bold** reply"})])
    fake_telegram.fail(
        "sendMessage", 400, "Bad Request: can't parse entities: Can't find end of Bold entity"
    )
    update = fake_telegram.message("format please")
    sent = await fake_telegram.wait_sent(1)
    first, second = fake_telegram.calls_to("sendMessage")
    assert first.params["text"] == "bold reply" and first.params["entities"]
    assert second.params["text"] == "**bold** reply" and "entities" not in second.params
    assert sent[0].params["reply_parameters"]["message_id"] == update["message"]["message_id"]


async def test_retried_long_reply_does_not_repeat_sent_chunks(
    telegram_daemon, fake_telegram, fake_llm, monkeypatch
):
    monkeypatch.setattr(bot.store.outbox, "BACKOFF_BASE_S", 0.05)
    await telegram_daemon()
    answer = "A" * 3000 + "\n\n" + "B" * 3000
    fake_llm.reply_tool_calls([("final_result", {"answer": answer})])
    fake_telegram.fail("sendMessage", 502, match=lambda p: p["text"].startswith("B"))
    fake_telegram.message("long please")
    sent = await fake_telegram.wait_sent(2)
    assert [c.params["text"][0] for c in sent] == ["A", "B"]
    assert len(fake_telegram.calls_to("sendMessage")) == 3


async def test_polling_errors_never_log_the_token(telegram_daemon, fake_telegram, caplog):
    caplog.set_level("DEBUG", logger="channels.health")  # one failure: a debug line only
    fake_telegram.fail("getUpdates", 502, f"Bad Gateway for /bot{fake_telegram.token}/getUpdates")
    await telegram_daemon()
    fake_telegram.message("hi")
    await fake_telegram.wait_sent(1)
    assert "polling failed (1 in a row): NetworkError: Bad Gateway for /bot<token>/getUpdates" in (
        caplog.text
    )
    assert fake_telegram.token not in caplog.text


async def test_a_refused_token_fails_the_start_with_a_clear_message(fake_telegram):
    """A revoked or mistyped token: the channel refuses to start (the daemon logs it and
    runs on without it), naming the cause and never the token."""
    token = "999999:WRONG-token"
    settings = TelegramSettings(token=token, base_url=fake_telegram.base_url)
    channel = TelegramChannel(settings, state=MemoryState([]), poll_timeout=1)
    with pytest.raises(ChannelError, match="telegram token refused") as refused:
        await channel.start(RecordingBus([]).put_inbound)
    assert token not in str(refused.value) and "WRONG" not in str(refused.value)
    assert not channel.connected
    assert not fake_telegram.calls_to("getUpdates")  # nothing polled with a bad token
    await channel.stop()


async def test_an_unreachable_api_at_start_is_retried_in_the_background(caplog):
    """The Bot API down at start (network, outage): the daemon still comes up, the channel
    says so once, and it keeps trying instead of giving up."""
    with socket.socket() as sock:  # a port that was free a moment ago: connections refused
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    token = "123456:DOWN-token"
    settings = TelegramSettings(token=token, base_url=f"http://127.0.0.1:{port}/bot")
    channel = TelegramChannel(settings, state=MemoryState([]), poll_timeout=1,
                              backoff=Backoff(0.05, 0.1))  # fmt: skip
    with caplog.at_level("WARNING"):
        await channel.start(RecordingBus([]).put_inbound)
        try:
            assert not channel.connected
            assert "retrying in the background" in caplog.text
            await until(lambda: "telegram degraded: polling failing since" in caplog.text)
            assert caplog.text.count("telegram degraded") == 1
        finally:
            await channel.stop()
    assert token not in caplog.text and "DOWN" not in caplog.text


class _HeldSends(FakeTelegram):
    """Holds every sendMessage until ``wanted`` of them are in flight at once."""

    def __init__(self, wanted: int) -> None:
        super().__init__()
        self.wanted = wanted
        self.in_flight = 0
        self.most = 0
        self.all_in = asyncio.Event()

    async def _m_sendMessage(self, params: dict[str, Any]):  # type: ignore[no-untyped-def]
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        if self.in_flight >= self.wanted:
            self.all_in.set()
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.all_in.wait(), 5)
            return await super()._m_sendMessage(params)
        finally:
            self.in_flight -= 1


async def test_replies_to_many_chats_go_out_at_once_not_through_a_narrow_pool():
    """Each real sendMessage is a round trip to Telegram: replies to 40 chats are all in
    flight together (a pool of 16 connections made most of them wait their turn)."""
    from bot.messages import ChatKey, OutboundMessage

    async with _HeldSends(wanted=40) as tg:
        channel = _channel(tg, MemoryState([]))
        await channel.start(RecordingBus([]).put_inbound)
        try:
            sends = [
                channel.send(OutboundMessage(ChatKey("telegram", str(100 + i)), f"reply {i}"))
                for i in range(40)
            ]
            sent = await asyncio.wait_for(asyncio.gather(*sends), 30)
        finally:
            await channel.stop()
    assert tg.most == 40 and len({s.ids[0] for s in sent}) == 40


async def test_parts_of_a_long_answer_already_out_are_not_posted_again_after_a_restart(
    telegram_daemon, fake_telegram, fake_llm
):
    """Telegram cannot be asked what was posted: the parts of a long answer that went
    out are recorded in the channel's state, so a restart posts only the rest."""
    answer = "\n\n".join(f"part {n} " + "x" * 3000 for n in range(3))  # three messages
    fake_llm.reply_tool_calls([("final_result", {"answer": answer})])
    fake_telegram.fail("sendMessage", 502, times=1, match=lambda p: "part 1" in p["text"])
    daemon, _ = await telegram_daemon()
    fake_telegram.message("tell me a long story", message_id=11)
    await fake_telegram.wait_for("sendMessage", 2)  # part 0 out, part 1 refused
    await daemon.stop(timeout=2)  # the retry is left in the outbox for the next start

    await telegram_daemon()
    await fake_telegram.wait_sent(3)
    fake_telegram.message("barrier", message_id=12)
    await fake_telegram.wait_sent(4)
    heads = [c.params["text"][:6] for c in fake_telegram.sent()]
    assert heads == ["part 0", "part 1", "part 2", "echo: "], heads
