"""Per-user rate limit: a token bucket on an injected clock, answered once per flood."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.bus.base import InProcessBus
from bot.dispatcher.ratelimit import TokenBuckets
from bot.messages import TO_ANY_BOT, ChatKey, InboundMessage, MessageKind, OutboundKind
from tests.fakes.channel import FakeChannel


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_burst_then_one_per_refill() -> None:
    clock = Clock()
    buckets = TokenBuckets(burst=3, refill_s=3, clock=clock)
    assert [buckets.take("a") for _ in range(4)] == [True, True, True, False]
    assert buckets.take("b")  # another user has their own bucket
    clock.now += 2.9
    assert not buckets.take("a")
    clock.now += 0.2  # 3.1 s since the bucket ran dry: one token back
    assert buckets.take("a")
    assert not buckets.take("a")
    clock.now += 3600  # refills up to the burst, not beyond
    assert [buckets.take("a") for _ in range(4)] == [True, True, True, False]


def test_zero_refill_means_no_limit() -> None:
    buckets = TokenBuckets(burst=1, refill_s=0)
    assert all(buckets.take("a") for _ in range(100))


def test_idle_full_buckets_are_forgotten(monkeypatch) -> None:
    monkeypatch.setattr("bot.dispatcher.ratelimit.MAX_TRACKED", 10)
    clock = Clock()
    buckets = TokenBuckets(burst=2, refill_s=1, clock=clock)
    for n in range(10):
        buckets.take(f"u{n}")
    clock.now += 10  # all full again
    buckets.take("new")
    assert len(buckets._buckets) == 1


async def _filter(burst: int = 2):
    from bot.dispatcher.ratelimit import RateLimit

    bus = InProcessBus()
    clock = Clock()
    limit = RateLimit(
        bus,
        TokenBuckets(burst, 3, clock=clock),
        exempt=lambda m: m.user_id == "admin",
        may_answer=lambda m: m.direct,
    )
    return limit, bus, clock


def _msg(user: str = "u1", *, direct: bool = True, kind=MessageKind.USER) -> InboundMessage:
    return InboundMessage(ChatKey("telegram", "c"), user, "hi", kind=kind, direct=direct)


async def test_over_the_limit_is_answered_once_per_flood() -> None:
    limit, bus, clock = await _filter()
    assert [await limit(_msg()) for _ in range(5)] == [True, True, False, False, False]
    assert bus.outbound_depth() == 1
    notice = bus._outbound.get_nowait()
    assert "faster than I can take them" in notice.text and "3 seconds" in notice.text
    clock.now += 3
    assert await limit(_msg())  # the flood is over ...
    assert not await limit(_msg())  # ... and the next one is answered once again
    assert bus.outbound_depth() == 1


async def test_exempt_admins_and_silent_in_groups() -> None:
    limit, bus, _ = await _filter(burst=1)
    assert all([await limit(_msg("admin")) for _ in range(5)])
    assert all([await limit(_msg("admin", kind=MessageKind.SCHEDULED)) for _ in range(5)])
    assert await limit(_msg("g", direct=False))
    assert not await limit(_msg("g", direct=False))
    assert bus.outbound_depth() == 0  # not welcome to answer: nothing said


async def _open_daemon(daemon_factory, **limits: float) -> FakeChannel:
    """A daemon answering everyone on a platform channel (boss: its admin)."""
    channel = FakeChannel("test", trusted=False)
    _, chat = await daemon_factory(
        channel=channel, admins=["test:boss"], access={"dm_policy": "open"}, limits=limits
    )
    return chat


async def test_rate_limit_through_the_daemon_costs_no_model_call(daemon_factory, fake_llm):
    chat = await _open_daemon(daemon_factory, user_burst=2, user_refill_s=3600)
    assert (await chat.ask("one")).text == "echo: one"
    assert (await chat.ask("two")).text == "echo: two"
    slow = await chat.ask("three")
    assert "faster than I can take them" in slow.text
    dropped = await chat.say("four")
    for n in range(3):  # the admin is not limited; this also orders after "four"
        assert (await chat.ask(f"boss {n}", user="boss")).text == f"echo: boss {n}"
    assert chat.replies_to(dropped) == []
    assert len(fake_llm.requests) == 5  # two of the user's, three of the admin's


async def test_a_stranger_flooding_a_direct_chat_gets_one_code_and_no_promise(
    daemon_factory, fake_llm
):
    """Each of a stranger's messages was answered with the same pairing code (20 of
    them), and then 'Please wait 3 seconds ...; I'll answer again then', which only
    another code would follow."""
    channel = FakeChannel("test", trusted=False)
    _, chat = await daemon_factory(
        channel=channel, admins=["test:boss"], limits={"user_burst": 3, "user_refill_s": 3600}
    )
    for n in range(8):
        await chat.say(f"hi {n}", user="mallory", chat="dm-m")
    barrier = await chat.say("/help", user="boss", chat="dm-m")  # one lane: after the flood
    await chat.reply(barrier)
    told = [m.text for m in channel.sent if m.reply_to != barrier.message_id]
    assert len(told) == 1 and "pairing code" in told[0], told
    assert fake_llm.requests == []


async def test_a_chat_has_a_bucket_over_all_its_members() -> None:
    """Twenty accounts each within their own limit made 400 turns in one group; the
    chat is told once per window (its bucket's refill), its admins pass."""
    from bot.dispatcher.ratelimit import RateLimit

    bus, clock = InProcessBus(), Clock()
    limit = RateLimit(
        bus,
        TokenBuckets(20, 3, clock=clock),
        exempt=lambda m: m.user_id == "admin",
        may_answer=lambda m: True,
        chats=TokenBuckets(3, 2, clock=clock),  # a window of 6 s
    )

    def said(user: str, n: int, chat: str = "g", thread: str | None = None) -> InboundMessage:
        key = ChatKey("telegram", chat, thread)
        return InboundMessage(key, user, "hi", message_id=f"{user}-{n}", direct=False)

    verdicts = [await limit(said(f"raider{u}", n)) for n in range(2) for u in range(5)]
    assert verdicts == [True] * 3 + [False] * 7
    assert not await limit(said("raider9", 0, thread="topic"))  # its threads share it
    assert await limit(said("someone", 0, chat="other"))  # another chat has its own
    assert await limit(said("admin", 0))
    [notice] = [bus._outbound.get_nowait() for _ in range(bus.outbound_depth())]
    assert notice.key.chat_id == "g" and "Too many messages in this chat" in notice.text
    clock.now += 2  # one token back: one message through, the window not yet over
    assert await limit(said("raider0", 9))
    assert not await limit(said("raider1", 9))
    assert bus.outbound_depth() == 0
    clock.now += 6
    assert [await limit(said("raider2", 9 + n)) for n in range(5)] == [True] * 3 + [False] * 2
    assert bus.outbound_depth() == 1  # the next window's one notice


async def test_a_chats_bucket_counts_only_what_the_bot_would_answer_in_a_group() -> None:
    """The chat bucket ran before access: strangers the bot ignores in silence drained it
    and its members were told 'too many messages'; it also held direct chats (where
    user_refill_s = 0 means no limit) and skipped follow-ups with a notice nobody asked
    for. It counts a group's messages from people the bot answers, not follow-ups."""
    from bot.dispatcher.ratelimit import RateLimit

    bus, clock = InProcessBus(), Clock()
    limit = RateLimit(
        bus,
        TokenBuckets(100, 0.001, clock=clock),
        exempt=lambda m: False,
        may_answer=lambda m: m.user_id != "stranger",
        chats=TokenBuckets(2, 3600, clock=clock),
    )

    def said(user: str, n: int, *, direct: bool = False, kind: MessageKind = MessageKind.USER):
        key = ChatKey("telegram", "dm" if direct else "g")
        return InboundMessage(key, user, "hi", message_id=f"{user}-{n}", direct=direct, kind=kind)

    assert [await limit(said("stranger", n)) for n in range(10)] == [True] * 10
    assert [await limit(said("me", n, direct=True)) for n in range(10)] == [True] * 10
    follow_ups = [await limit(said("alice", n, kind=MessageKind.SCHEDULED)) for n in range(5)]
    assert follow_ups == [True] * 5
    assert [await limit(said("alice", 10 + n)) for n in range(3)] == [True, True, False]
    [notice] = [bus._outbound.get_nowait() for _ in range(bus.outbound_depth())]
    assert "Too many messages in this chat" in notice.text


async def test_a_crowd_in_one_group_costs_a_capped_number_of_turns(daemon_factory, fake_llm):
    chat = await _open_daemon(daemon_factory, chat_burst=4, chat_refill_s=3600)
    for n in range(3):
        for u in range(6):
            await chat.say(f"spam {u}-{n}", user=f"raider{u}", chat="g1", direct=False)
    await chat.ask("/help", user="boss", chat="g1", direct=False)  # one lane: after them
    assert len(fake_llm.requests) == 4
    told = [m for m in chat.sent if "Too many messages in this chat" in m.text]
    assert len(told) == 1


async def test_a_chat_told_of_its_limit_is_not_told_of_each_senders(daemon_factory, fake_llm):
    """Raiders past their own limit each got 'You are sending messages faster...' in
    the group (twenty of them) beside the chat's one notice."""
    chat = await _open_daemon(daemon_factory, user_burst=2, chat_burst=3, chat_refill_s=3600)
    for n in range(4):
        for u in range(3):
            await chat.say(f"spam {u}-{n}", user=f"raider{u}", chat="g1", direct=False)
    await chat.ask("/help", user="boss", chat="g1", direct=False)  # one lane: after them
    notices = [m.text for m in chat.sent if m.kind is OutboundKind.NOTICE]
    assert len(notices) == 1 and "Too many messages in this chat" in notices[0], notices


async def test_scheduled_turns_spend_their_owners_tokens() -> None:
    """A follow-up is a paid turn: it shares its owner's bucket with their messages."""
    limit, bus, clock = await _filter(burst=2)
    assert await limit(_msg())
    assert await limit(_msg(kind=MessageKind.SCHEDULED))
    assert not await limit(_msg(kind=MessageKind.SCHEDULED))
    assert not await limit(_msg())
    notice = bus._outbound.get_nowait()
    assert notice.text.startswith("A scheduled follow-up was skipped")
    assert bus.outbound_depth() == 0  # once per episode
    clock.now += 3
    assert await limit(_msg(kind=MessageKind.SCHEDULED))


def test_a_message_is_charged_when_it_was_sent_not_when_it_is_read() -> None:
    """Thirty messages written four minutes apart while the daemon was down arrive at
    once at its start: no flood. Thirty written within a minute still are one."""
    clock = Clock()
    slow = TokenBuckets(burst=20, refill_s=3, clock=clock)
    assert all(slow.take("a", ago=300 + (29 - n) * 240) for n in range(30))
    burst = TokenBuckets(burst=20, refill_s=3, clock=clock)
    assert sum(burst.take("a", ago=300 + (29 - n)) for n in range(30)) < 30
    quick = TokenBuckets(burst=20, refill_s=3, clock=clock)
    assert sum(quick.take("a", ago=300) for n in range(30)) == 20
    # read out of order: an older message never refills the bucket backwards
    late = TokenBuckets(burst=1, refill_s=3, clock=clock)
    assert late.take("a") and not late.take("a", ago=3600)


async def test_a_message_looked_at_twice_is_charged_once() -> None:
    limit, bus, _ = await _filter(burst=2)
    first, second, third = _msg(), _msg(), _msg()
    assert await limit(first) and await limit(first)  # a retried admission
    assert await limit(second)
    assert not await limit(third) and not await limit(third)
    assert bus.outbound_depth() == 1  # told once


async def test_a_backlog_written_over_hours_is_answered_whole(daemon_factory, fake_llm):
    channel = FakeChannel("test", trusted=False)
    _, chat = await daemon_factory(
        channel=channel,
        access={"dm_policy": "open"},
        limits={"user_burst": 2, "user_refill_s": 600},
    )
    now = datetime.now(UTC)
    backlog = [
        InboundMessage(
            ChatKey("test", "c1"),
            "u1",
            f"note {n}",
            direct=True,
            received_at=now - timedelta(minutes=5 + (5 - n) * 20),
        )
        for n in range(6)
    ]
    assert chat.put_inbound is not None
    for msg in backlog:
        await chat.put_inbound(msg)
    replies = [(await chat.reply(msg)).text for msg in backlog]
    assert all(f"echo: note {n}" in text for n, text in enumerate(replies)), replies
    assert "faster" not in "".join(replies)
    for n in range(3):  # a live burst still is one
        await chat.say(f"again {n}")
    await chat.wait_for(lambda sent: any("faster than I" in m.text for m in sent))


async def test_another_bots_bare_command_in_a_group_is_not_charged() -> None:
    """A game with a dice bot (/roll, /roll, ...) spent the players' tokens here: their
    next question to this bot was dropped and the group told they were too fast. A
    command of ours (/help) and a /command naming this bot are charged as before."""
    from bot.dispatcher.ratelimit import RateLimit
    from bot.handlers.commands import CommandRouter

    bus = InProcessBus()
    limit = RateLimit(
        bus,
        TokenBuckets(1, 3600, clock=Clock()),
        exempt=lambda m: False,
        may_answer=lambda m: True,
        not_ours=CommandRouter().for_another_bot,
    )
    key = ChatKey("test", "g")

    def said(text: str, **extras: object) -> InboundMessage:
        return InboundMessage(key, "u1", text, extras=extras, direct=False)

    assert all([await limit(said("/roll", **{TO_ANY_BOT: True})) for _ in range(21)])
    assert await limit(said("what's the weather like on Mars?"))
    assert not await limit(said("/roll"))  # not marked as every bot's: one of ours, charged
    assert not await limit(said("/help", **{TO_ANY_BOT: True}))
    assert bus.outbound_depth() == 1  # told once, for the charged ones only
