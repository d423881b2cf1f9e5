"""Three real `bot run` replicas on one PostgreSQL with the fake Telegram (long polling),
the fake Slack (Socket Mode from every replica, and signed HTTP events posted to any
replica) and a fake model that records when each chat's calls run. Twenty chats talk in
numbered messages and set reminders; one replica is SIGKILLed, another SIGSTOPped past
the lease TTL and resumed (SIGCONT). Then:

- every message is answered exactly once, in order per chat; every reminder fires once;
- no two model calls for one chat ever overlap (a zombie's turn and its successor's);
- the first answer in a chat the killed replica ran comes within ``lease_ttl_s`` + 2 s;
- the frozen replica, resumed, holds nothing it lost and rejoins under new tokens.

The kill and the freeze land while the victim's turns are in flight in the model (the
model's gate holds every call, and every earlier reply has arrived): its work must move
to another replica and its late results be refused. They never land inside a platform
send: Telegram takes no idempotency key and cannot be asked what was posted, so a post
that reached it just before a kill may come twice; tests/e2e/test_crash_soak.py bounds
that window. Slow by nature (processes, real leases): about 40 s on two loaded cores.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import re
import signal
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import pytest
from aiohttp import web

from bot.cluster.fence import NOW_MS
from bot.cluster.partitions import lease_name, partition_of
from bot.messages import ChatKey
from tests.fakes import slack_api, telegram_api
from tests.fakes.llm_server import FakeLLM, _last_user_text
from tests.fakes.pg_schema import empty_schema
from tests.fakes.process import BotProcess, bot_env
from tests.fakes.slack_api import FakeSlack, post_signed
from tests.fakes.telegram_api import FakeTelegram
from tests.fakes.waiting import PROCESS_S, PROCESS_TEST_S, until

pytestmark = pytest.mark.slow  # three processes and real leases; still run by make test

fake_telegram = telegram_api.fake_telegram
fake_slack = slack_api.fake_slack

TTL_S = 5.0
PARTITIONS = 16
TELEGRAM = [f"t{n:02d}" for n in range(10)]  # chat ids 1..10
SLACK = [f"s{n:02d}" for n in range(10)]  # DMs D00..D09: half over HTTP, half Socket Mode
CHATS = TELEGRAM + SLACK
TOKEN = re.compile(r"\b([ts]\d\d) m(\d+)\b")
WAIT_S = PROCESS_S  # for any one phase: a bound, never waited out by a passing run


class TimedModel(FakeLLM):
    """The fake model (echo), with a gate the test closes to hold every call, and per
    chat the (arrival, answer) time of each call."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.gate.set()
        self.held: set[tuple[str, int]] = set()  # (chat, message number) at the gate
        self.intervals: dict[str, list[tuple[float, float]]] = defaultdict(list)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        began = time.monotonic()
        found = TOKEN.search(_last_user_text(json.loads(await request.read())))
        call = (found[1], int(found[2])) if found else None
        try:
            if call is not None:
                self.held.add(call)
                await self.gate.wait()
                self.held.discard(call)
            await asyncio.sleep(0.1)  # the model thinks: other chats run meanwhile
            return await super()._handle(request)
        finally:
            if call is not None:
                self.intervals[call[0]].append((began, time.monotonic()))


def chat_key(chat: str) -> ChatKey:
    if chat.startswith("t"):
        return ChatKey("telegram", str(int(chat[1:]) + 1))
    return ChatKey("slack", f"D{chat[1:]}")


class Replicas:
    """The processes, their web ports, and the cluster tables they share."""

    def __init__(self, url: str, tmp: Path, env: dict[str, str]) -> None:
        self.url, self.tmp, self.env = url, tmp, env
        self.procs: dict[str, BotProcess] = {}
        self.ports: dict[str, int] = {}
        self.conn: asyncpg.Connection | None = None

    async def start(self, label: str) -> None:
        env = {**self.env, "BOT_DATA_DIR": str(self.tmp / label), "BOT_CLUSTER__REPLICA": label}
        bot = await BotProcess.start(env, self.tmp)
        ready = await bot.wait_line(": ready: ")
        self.ports[label] = int(re.search(r"web=http://127.0.0.1:(\d+)", ready)[1])  # type: ignore[index]
        self.procs[label] = bot
        # litellm is imported after ready: seconds, more on a loaded machine
        await bot.wait_line("litellm warm-up import finished", PROCESS_S)

    def signal(self, label: str, sig: int) -> None:
        os.kill(self.procs[label].proc.pid, sig)

    async def owners(self) -> dict[str, str]:
        """Live lease -> the label of the replica holding it."""
        if self.conn is None:  # one connection for the test: the server is shared
            self.conn = await asyncpg.connect(self.url)
        rows = await self.conn.fetch(
            f"SELECT name, owner FROM cluster_leases WHERE owner IS NOT NULL"
            f" AND expires_ms > {NOW_MS}"
        )
        return {r["name"]: r["owner"].split("-", 1)[0] for r in rows}

    async def chats_of(self, label: str) -> list[str]:
        held = await self.owners()
        return [
            c for c in CHATS if held.get(lease_name(partition_of(chat_key(c), PARTITIONS))) == label
        ]

    def logs(self) -> str:
        """The end of every replica's log, for a timed-out wait."""
        return "".join(f"--- {n}:\n{b.log[-3000:]}" for n, b in self.procs.items())

    async def cleanup(self) -> None:
        if self.conn is not None:
            await self.conn.close()
        for bot in self.procs.values():
            if bot.proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    bot.proc.send_signal(signal.SIGCONT)
                    bot.proc.kill()
                await bot.proc.wait()


class Chats:
    """Drives the twenty chats and reads what each was answered."""

    def __init__(self, tg: FakeTelegram, slack: FakeSlack, replicas: Replicas) -> None:
        self.tg, self.slack, self.replicas = tg, slack, replicas
        self.http_turn = 0

    async def say(self, chat: str, text: str) -> None:
        if chat.startswith("t"):
            chat_id = int(chat[1:]) + 1
            self.tg.message(text, chat_id=chat_id, user_id=chat_id)
            return
        event = self.slack.message(text, channel=f"D{chat[1:]}", user=f"U{chat}")
        if int(chat[1:]) < 5:
            await self.post_http(event)
        else:
            await self.slack.deliver(event)

    async def post_http(self, event: dict[str, Any]) -> None:
        """Signed HTTP events reach any replica (a load balancer); one that refuses or
        does not answer within Slack's 3 s is retried on the next, as Slack retries."""
        body = self.slack.body(event)
        self.http_turn += 1
        labels = sorted(self.replicas.ports)
        for attempt in range(3 * len(labels)):
            label = labels[(self.http_turn + attempt) % len(labels)]
            url = f"http://127.0.0.1:{self.replicas.ports[label]}/slack/events"
            with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                status, _ = await asyncio.wait_for(
                    post_signed(url, body, self.slack.signing_secret, retry_num=attempt or None),
                    2.5,
                )
                if status == 200:
                    return
        raise AssertionError(f"no replica accepted {event['text']!r}")

    async def round(self, *texts: str) -> None:
        """Each chat says ``texts`` in order (``{c}`` is the chat's name)."""

        async def one(chat: str) -> None:
            for text in texts:
                await self.say(chat, text.format(c=chat))

        await asyncio.gather(*(one(c) for c in CHATS))

    def said(self) -> dict[str, list[str]]:
        texts: dict[str, list[str]] = {}
        for chat in CHATS:
            if chat.startswith("t"):
                texts[chat] = [c.params["text"] for c in self.tg.sent(int(chat[1:]) + 1)]
            else:
                texts[chat] = [p["text"] for p in self.slack.posts(channel=f"D{chat[1:]}")]
        return texts

    def answered(self) -> dict[str, list[int]]:
        """Per chat, the numbers of the messages echoed, in the order they arrived."""
        return {
            chat: [int(m[2]) for t in texts if t.startswith("echo:") and (m := TOKEN.search(t))]
            for chat, texts in self.said().items()
        }

    async def until_answered(self, upto: int) -> None:
        await self.until(lambda texts: sum(t.startswith("echo:") for t in texts) >= upto)

    async def until(self, each: Callable[[list[str]], bool]) -> None:
        """Until ``each`` holds for every chat's texts; on a timeout, what each has and
        the end of every replica's log."""
        try:
            await until(lambda: all(each(texts) for texts in self.said().values()), WAIT_S)
        except TimeoutError:
            raise AssertionError(f"timed out: {self.said()}\n{self.replicas.logs()}") from None


@contextlib.asynccontextmanager
async def cluster(
    tmp_path: Path, model: TimedModel, tg: FakeTelegram, slack: FakeSlack
) -> AsyncIterator[tuple[Replicas, Chats]]:
    async with empty_schema() as url:
        env = bot_env(tmp_path, model, tg)
        env.update(
            BOT_STORE__URL=url,
            BOT_CLUSTER__LEASE_TTL_S=str(TTL_S),
            BOT_CLUSTER__RENEW_EVERY_S="0.5",
            BOT_CLUSTER__PARTITIONS=str(PARTITIONS),
            BOT_CLUSTER__POLL_S="0.5",
            BOT_STREAMING__ENABLED="false",
            BOT_CHANNELS__SLACK__BOT_TOKEN=slack.bot_token,
            BOT_CHANNELS__SLACK__APP_TOKEN=slack.app_token,
            BOT_CHANNELS__SLACK__SIGNING_SECRET=slack.signing_secret,
            BOT_CHANNELS__SLACK__API_URL=slack.api_url,
            BOT_CHANNELS__SLACK__ALLOW_FROM='["*"]',
        )
        replicas = Replicas(url, tmp_path, env)
        try:
            await asyncio.gather(*(replicas.start(label) for label in ("r1", "r2", "r3")))
            await slack.wait_until(lambda: len(slack.sockets) == 3, WAIT_S)  # one each
            yield replicas, Chats(tg, slack, replicas)
        finally:
            await replicas.cleanup()


async def held_at_gate(model: TimedModel, number: int) -> None:
    await until(lambda: {(c, number) for c in CHATS} <= model.held, WAIT_S)


async def first_answer_after(chats: Chats, among: list[str], number: int) -> float:
    """Seconds until any of ``among`` has its answer to message ``number``."""
    began = time.monotonic()
    await until(lambda: any(number in chats.answered()[c] for c in among), WAIT_S)
    return time.monotonic() - began


async def kill_the_poller(replicas: Replicas, chats: Chats, model: TimedModel) -> float:
    """SIGKILL the replica polling Telegram while its turns wait on the model; returns
    the seconds from the kill to the first answer in a chat it ran."""
    killed = (await replicas.owners())["telegram:poll"]
    model.gate.clear()
    await chats.round("{c} m3")
    await held_at_gate(model, 3)
    orphans = await replicas.chats_of(killed)
    assert orphans, f"{killed} ran no chat"
    replicas.procs[killed].proc.kill()
    await replicas.procs[killed].proc.wait()
    del replicas.ports[killed]
    model.gate.set()
    taking_over = asyncio.create_task(first_answer_after(chats, orphans, 3))
    await chats.round("{c} m4")  # journaled while the killed one's chats have no owner
    return await taking_over


async def freeze_the_poller(replicas: Replicas, chats: Chats, model: TimedModel) -> str:
    """SIGSTOP the replica polling Telegram now while its turns wait on the model
    (their answers reach its sockets while it is stopped); SIGCONT it once the other
    holds every lease. Returns the frozen one's label."""
    owners = await replicas.owners()
    frozen = owners.get("telegram:poll") or min(replicas.ports)
    other = next(label for label in replicas.ports if label != frozen)
    model.gate.clear()
    await chats.round("{c} m5")
    await held_at_gate(model, 5)
    replicas.signal(frozen, signal.SIGSTOP)
    model.gate.set()
    sending = asyncio.create_task(chats.round("{c} m6"))
    everything = {lease_name(p) for p in range(PARTITIONS)} | {"telegram:poll"}
    await wait_async(replicas, lambda: owned_by(replicas, other, everything))
    replicas.signal(frozen, signal.SIGCONT)  # it resumes with its turns' answers in hand
    await sending
    return frozen


@pytest.mark.timeout(PROCESS_TEST_S)
async def test_three_replicas_survive_a_kill_and_a_freeze_answering_each_message_once(
    tmp_path: Path, fake_telegram: FakeTelegram, fake_slack: FakeSlack
) -> None:
    async with (
        TimedModel() as model,
        cluster(tmp_path, model, fake_telegram, fake_slack) as (replicas, chats),
    ):
        await chats.round("{c} m1", "{c} m2")  # in order within a chat
        await chats.until_answered(2)
        await chats.round("/remind in 8 seconds | {c} r")  # due after the kill
        await chats.until(lambda texts: any(t.startswith("OK") for t in texts))
        takeover_s = await kill_the_poller(replicas, chats, model)
        await chats.until_answered(4)
        await chats.until(lambda texts: any(t.startswith("⏰") for t in texts))
        frozen = await freeze_the_poller(replicas, chats, model)
        await chats.until_answered(6)
        rejoined = await wait_async(replicas, lambda: partitions_of(replicas, frozen))
        await chats.round("{c} m7")
        await chats.until_answered(7)
        codes = [await replicas.procs[label].stop() for label in sorted(replicas.ports)]
        frozen_log = replicas.procs[frozen].log

    said = chats.said()
    assert chats.answered() == {c: list(range(1, 8)) for c in CHATS}, said
    for mark in ("OK", "⏰"):  # each reminder set once and fired once
        assert {c: sum(t.startswith(mark) for t in s) for c, s in said.items()} == dict.fromkeys(
            CHATS, 1
        ), said
    overlapping = {c: calls for c, calls in model.intervals.items() if overlaps(calls)}
    assert not overlapping, overlapping
    assert takeover_s <= TTL_S + 2, f"first answer in a taken-over chat after {takeover_s:.2f} s"
    assert "no longer running it" in frozen_log  # it found its leases gone on resuming
    assert rejoined and codes == [0, 0]
    print(f"takeover after SIGKILL: {takeover_s:.2f} s (lease_ttl_s {TTL_S})")


def overlaps(calls: list[tuple[float, float]]) -> bool:
    ordered = sorted(calls)
    return any(b[0] < a[1] for a, b in itertools.pairwise(ordered))


async def owned_by(replicas: Replicas, label: str, leases: set[str]) -> bool:
    held = await replicas.owners()
    return all(held.get(name) == label for name in leases)


async def partitions_of(replicas: Replicas, label: str) -> set[str]:
    return {
        n
        for n, owner in (await replicas.owners()).items()
        if owner == label and n.startswith("chats:")
    }


async def wait_async(replicas: Replicas, check: Any) -> Any:
    """Poll an awaitable condition (the lease table) until it holds; returns its value.
    On a timeout, the leases and the end of every replica's log."""

    async def poll() -> Any:
        while not (value := await check()):  # noqa: ASYNC110 (another process's state)
            await asyncio.sleep(0.05)
        return value

    try:
        return await asyncio.wait_for(poll(), WAIT_S)
    except TimeoutError:
        leases = await replicas.owners()
        raise AssertionError(f"timed out; leases {leases}\n{replicas.logs()}") from None
