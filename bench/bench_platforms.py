"""Turns through each platform adapter as users run it: Telegram (long polling), Slack
over the HTTP Events API and over Socket Mode, and Discord (gateway + REST), each
against a fake of the platform in its own process (bench/fake_*_server.py) that the
platform's real client library talks to, and the real daemon with that one channel
configured. 20 chats x 50 messages, zero-latency fake model, a short session and one
of 999 stored messages, CPU per message against the bare litellm floor segments that
take turns with the scenario's (bench/bench_turns.py), and the platform calls each
answered message cost, counted by the fake.

At the default ``streaming = true`` a private chat's model call is streamed (a slow
answer shows as a preview), so the floor those rows are held to is the bare streamed
call; litellm's stream costs about twice its plain call on its own (the turns table's
streamed floor row). The short session is run again with ``streaming = false`` against
the plain bare call, which shows the adapter's own path without it.
"""

from __future__ import annotations

from typing import Any

from bench.bench_turns import LONG_SESSION, WARMUP, take_turns, turn_rows
from bench.common import Row
from bench.procs import (
    DrivingFakeProcess,
    FakeDiscordProcess,
    FakeLLMProcess,
    FakeSlackProcess,
    FakeTelegramProcess,
)

CHATS = 20
PER_CHAT = 50


async def _runs(urls: dict[str, str], fake: DrivingFakeProcess, channel: str,
                label: str, deliver: str = "") -> list[dict[str, Any]]:  # fmt: skip
    """Through ``fake`` as users run it (``streaming`` at its default, on: a private
    chat's model call is streamed, as a preview may show it; the floor streams too), the
    short session and the 999-message one; then the short session with ``streaming =
    false`` against the plain bare call: the adapter's own path without litellm's stream."""
    found = []
    for stored, size, stream in ((0, "short", True), (LONG_SESSION, "long", True),
                                 (0, "plain", False)):  # fmt: skip
        section = fake.section() if stream else {**fake.section(), "streaming": False}
        found.append(
            await take_turns(
                urls,
                "platform_turns:platform",
                f"{label}-{size}",
                PER_CHAT,
                inflight=CHATS,
                stream=stream,
                control_url=fake.control_url,
                channel=channel,
                section=section,
                chat_ids=fake.chat_ids(CHATS),
                warmup=WARMUP,
                stored=stored,
                deliver=deliver,
            )
        )
    return found


def calls_row(scenario: str, r: dict[str, Any]) -> Row:
    per_message = sorted(r["bot_api_calls"].items(), key=lambda kv: (-kv[1], kv[0]))
    calls = ", ".join(f"{k} {v / r['messages']:.2f}" for k, v in per_message)
    return Row(
        scenario,
        "platform calls per answered message",
        calls,
        "counted by the fake; a streamed answer (a model slower than the 1 s preview"
        " interval) adds its preview's post/edits, at most one per interval",
    )


async def run() -> list[Row]:
    rows: list[Row] = []
    async with FakeLLMProcess(delay=0.0) as llm:
        urls = {"url": llm.url, "stats_url": llm.stats_url}
        runs: list[tuple[str, list[dict[str, Any]]]] = []
        async with FakeTelegramProcess() as tg:
            runs.append(("Telegram (long polling)", await _runs(urls, tg, "telegram", "tg")))
        async with FakeSlackProcess() as slack:
            slack.socket = False
            http = await _runs(urls, slack, "slack", "slack-http", deliver="http")
            runs.append(("Slack HTTP Events API", http))
        async with FakeSlackProcess() as slack:
            runs.append(("Slack Socket Mode", await _runs(urls, slack, "slack", "slack-socket")))
        async with FakeDiscordProcess() as dc:
            runs.append(("Discord (gateway + REST)", await _runs(urls, dc, "discord", "discord")))
    for name, found in runs:
        for r in found:
            size = "short session" if not r["seeded"] else f"session of {r['seeded']:,} messages"
            size += "" if r["stream"] else ", streaming = false"
            scenario = f"platforms: {name}, {CHATS} chats x {PER_CHAT}, {size}"
            rows += [row for row in turn_rows(scenario, r) if row.metric != "latency p99"]
            rows.append(calls_row(scenario, r))
    return rows
