"""Streamed answers (issue 40, issue 45 point 3) through each platform adapter, as users
run them: how soon the model's first words show in a private chat, what the preview
costs in platform calls, and the CPU per message with streaming on against the bare
streaming litellm call.

The daemon (bench/platform_turns.py: ``build_daemon`` as ``bot run`` builds it, every
setting at its default, so streaming is on at the 1 s DM interval) talks through the
platform's real client library to a fake of the platform in its own process
(bench/fake_*_server.py), and to a fake model in another (bench/fake_llm_server.py
``--stream-s``) that writes each answer, the echo and a tail, over ``STREAM_S`` seconds
in 8-character pieces from the moment it is asked (no think time: the first words come
at once, so the preview's first interval is all theirs to wait). The model stamps when
it wrote an answer's first characters, the platform fake when it was first sent answer
text (a post, an edit, a stream's start or append, or the final answer): both
``time.monotonic()``, CLOCK_MONOTONIC, one clock for every process on the machine.

One private chat at a time (a DM; the Slack one also as a thread, where Slack streams
natively): Slack's preview budget is per workspace, so previews running at once in
other chats would stretch the interval on purpose (channels/slack/preview.py). The CPU
ratio takes turns (bench/bench_turns.py ``interleaved``): bare streaming calls on the
same fake model, each read to its end, before and after each of the daemon's segments.
"""

from __future__ import annotations

from typing import Any

import aiohttp

from bench.bench_platforms import calls_row
from bench.bench_turns import floor_cpu_ms, interleaved
from bench.common import Row, Target, percentile
from bench.fake_llm_server import STREAMED_TAIL
from bench.procs import (
    DAEMON_LOOP,
    DrivingFakeProcess,
    FakeDiscordProcess,
    FakeLLMProcess,
    FakeSlackProcess,
    FakeTelegramProcess,
    Segments,
)

STREAM_S = 2.0  # how long the model takes to write an answer
INTERVAL_S = 1.0  # [streaming] private_interval_s, the default
CHATS = 1  # one private chat: Slack's budget is the workspace's (see above)
ROUNDS = 3
PER_SEGMENT = 6  # answers per daemon segment
FLOOR_CALLS = 4  # bare streaming calls per floor segment, one at a time as the chat's:
# a stream's CPU depends on its pace (a wake-up per piece; three at once share them and
# cost a third less per call), so the floor streams as the daemon's one chat does
VISIBLE_P50_S = 1.2
VISIBLE_P95_S = 1.5
CPU_RATIO_LIMIT = 1.3
# The writes an answer may cost: a post or edit per interval while it is written, and
# the final (the 12 for a 10-s answer at a 1 s interval).
WRITES_LIMIT = STREAM_S / INTERVAL_S + 2


async def _first_tokens(url: str) -> dict[str, float]:
    async with aiohttp.ClientSession() as http, http.get(url) as resp:
        found: dict[str, float] = await resp.json()
        return found


async def _through(
    llm: FakeLLMProcess, fake: DrivingFakeProcess, channel: str, label: str, **drive: Any
) -> dict[str, Any]:
    """The daemon's segments through ``fake`` taking turns with the streaming floor's;
    with each answered message's wait (first answer token -> first visible text)."""
    urls: dict[str, Any] = {"url": llm.url, "stats_url": llm.stats_url}
    async with (
        Segments("bench_turns:floor", inflight=CHATS, label=f"stream-{label}",
                 stream=True, warmup=2, **urls) as floor,
        Segments("platform_turns:platform", label=f"stream-{label}", loop=DAEMON_LOOP,
                 control_url=fake.control_url, channel=channel, section=fake.section(),
                 chat_ids=fake.chat_ids(CHATS), warmup=1, stored=0,
                 drive={"tail": STREAMED_TAIL, **drive}, **urls) as daemon,
    ):  # fmt: skip
        r = await interleaved(floor, daemon, ROUNDS * PER_SEGMENT, rounds=ROUNDS,
                              floor_calls=FLOOR_CALLS, same_size=False)  # fmt: skip
    first = await _first_tokens(llm.first_tokens_url)
    shown = {q: t for s in r["segments"] for q, t in s["shown"].items()}
    missing = sorted(set(shown) - set(first))
    assert not missing, f"no first token stamped for {missing[:3]}"
    r["waits"] = [shown[q] - first[q] for q in shown]
    r["writes"] = [n for s in r["segments"] for n in s["writes"].values()]
    return r


def _rows(name: str, r: dict[str, Any]) -> list[Row]:
    scenario = f"streaming: {name}"
    waits, writes = r["waits"], r["writes"]
    p50, p95 = percentile(waits, 50), percentile(waits, 95)
    cpu_ms = r["cpu_s"] / r["messages"] * 1000
    floor_ms = floor_cpu_ms(r)
    spread = f"{min(r['ratios']):.2f}-{max(r['ratios']):.2f}x"
    note = (
        f"{len(waits)} answers written over {STREAM_S:.0f} s, {INTERVAL_S:.0f} s interval;"
        f" {r['failed']} wrong; model and platform stamp CLOCK_MONOTONIC"
    )
    return [
        Row(scenario, "first answer token to first visible text p50", f"{p50 * 1000:.0f} ms",
            note, Target(round(p50, 3), VISIBLE_P50_S, " s")),
        Row(scenario, "first answer token to first visible text p95", f"{p95 * 1000:.0f} ms",
            f"max {max(waits) * 1000:.0f} ms", Target(round(p95, 3), VISIBLE_P95_S, " s")),
        Row(scenario, "preview calls per answer", f"{sum(writes) / len(writes) - 1:.2f}",
            f"post/start + edits/appends, the final not counted; with it at most"
            f" {max(writes)}", Target(max(writes), WRITES_LIMIT, " calls",
                                      name="writes per answer (previews + the final)")),
        Row(scenario, "CPU per message, streaming on", f"{cpu_ms:.2f} ms",
            f"{cpu_ms / floor_ms:.2f}x the bare streaming litellm call ({floor_ms:.2f} ms over"
            f" the {len(r['floor_segments'])} bare segments taking turns with its {ROUNDS};"
            f" segment by segment {spread}); platform I/O included",
            Target(round(cpu_ms / floor_ms, 3), CPU_RATIO_LIMIT, "x",
                   name="CPU per message over the bare streaming call")),
        calls_row(scenario, r),
    ]  # fmt: skip


async def run() -> list[Row]:
    rows: list[Row] = []
    async with FakeLLMProcess(stream_s=STREAM_S) as llm:
        async with FakeTelegramProcess() as tg:
            found = await _through(llm, tg, "telegram", "telegram")
            rows += _rows("Telegram private chat (sendMessage + editMessageText)", found)
        async with FakeSlackProcess() as slack:
            found = await _through(llm, slack, "slack", "slack-dm")
            rows += _rows("Slack DM, Socket Mode (chat.postMessage + chat.update)", found)
        async with FakeSlackProcess() as slack:
            found = await _through(llm, slack, "slack", "slack-thread", thread=True)
            rows += _rows("Slack DM thread, Socket Mode (chat.startStream + appendStream"
                          " + stopStream)", found)  # fmt: skip
        async with FakeDiscordProcess() as dc:
            found = await _through(llm, dc, "discord", "discord")
            rows += _rows("Discord DM (post + edit)", found)
    return rows
