"""Streamed answers (issue 40): how soon the first words show, how many edits an answer
costs, and the CPU streaming adds over the bare streaming litellm call.

In process: the test fake model (tests/fakes/llm_server.py) streams ``final_result``
arguments in 8-character pieces; the preview goes to an in-memory channel that records
when each text became visible. The fake server runs on the same loop for both sides of
the CPU ratio (the same SSE work in each), so the ratio is the client's work plus that
shared floor: an honest upper bound of what the preview pipeline adds is the difference.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from bench.common import Row, Target, percentile
from bot.agent.llm.client import LLMClient, litellm_module
from bot.messages import ChatKey
from bot.store.previews import PreviewRecord
from bot.streaming.pauses import ChatPauses
from bot.streaming.preview import PreviewPlan, PreviewStream
from tests.fakes.llm_server import FINAL_RESULT, FakeLLM, tool_calls_reply

CHATS = 20
CPU_CALLS = 40
CPU_RATIO_LIMIT = 1.3
ANSWER = ("streamed words arrive in small pieces " * 40).strip()
MODEL = "openai/fake-model"
USER = [{"role": "user", "content": "tell me"}]


class _Screen:
    """A SupportsPreview in memory: when each preview call happened."""

    def __init__(self) -> None:
        self.first_shown: dict[ChatKey, float] = {}
        self.calls: dict[ChatKey, int] = {}

    def preview_limit(self, key: ChatKey) -> int:
        return 4096

    def preview_interval(self, key: ChatKey, configured: float) -> float:
        return configured

    async def post_preview(self, key: ChatKey, text: str, reply_to: str | None) -> str:
        self.first_shown.setdefault(key, time.monotonic())
        self.calls[key] = self.calls.get(key, 0) + 1
        return "1"

    async def edit_preview(self, key: ChatKey, message_id: str, text: str) -> None:
        self.calls[key] = self.calls.get(key, 0) + 1

    async def delete_preview(self, key: ChatKey, message_id: str) -> None:
        return None


class _Ids:
    async def save(self, turn: str, key: ChatKey, message_id: str) -> None: ...
    async def get(self, turn: str) -> PreviewRecord | None:
        return None

    async def finalize(self, turn: str) -> None: ...
    async def prune(self, older_than: Any) -> int:
        return 0


class _FirstToken:
    """Wraps a preview: notes when the answer's first words arrived."""

    def __init__(self, inner: PreviewStream) -> None:
        self.inner = inner
        self.at: float | None = None

    def answer_grew(self, read: Any) -> None:
        if self.at is None:
            self.at = time.monotonic()
        self.inner.answer_grew(read)

    def tools_running(self, names: tuple[str, ...]) -> None:
        self.inner.tools_running(names)


def _paced(seconds: float) -> Any:
    reply = tool_calls_reply([(FINAL_RESULT, {"answer": ANSWER})])
    events = len(json.dumps({"answer": ANSWER})) // 8 + 6
    fields = {n: getattr(reply, n) for n in reply.__dataclass_fields__}
    return reply.__class__(**{**fields, "pace": seconds / events, "piece": 8})


async def _visible(fake: FakeLLM, llm: LLMClient) -> list[Row]:
    screen, pauses = _Screen(), ChatPauses()
    for _ in range(CHATS):
        fake.reply(_paced(3.0))

    async def one(i: int) -> tuple[float, int]:
        key = ChatKey("bench", str(i))
        plan = PreviewPlan(key, None, interval=1.0, min_chars=20, limit=4096, max_failures=3)
        preview = PreviewStream(screen, plan, turn=str(i), previews=_Ids(), pauses=pauses)
        sink = _FirstToken(preview)
        await llm.stream(USER, None, sink)
        await preview.finish()
        assert sink.at is not None
        return screen.first_shown[key] - sink.at, screen.calls[key] + 1  # + the final edit

    results = await asyncio.gather(*(one(i) for i in range(CHATS)))
    waits = [w * 1000 for w, _ in results]
    edits = [c for _, c in results]
    note = f"{CHATS} DM answers written over 3 s at a 1 s interval"
    return [
        Row(
            "streaming",
            "first answer token to first visible text p50",
            f"{percentile(waits, 50):.0f} ms",
            note,
        ),
        Row(
            "streaming",
            "first answer token to first visible text p95",
            f"{percentile(waits, 95):.0f} ms",
            note,
        ),
        Row(
            "streaming",
            "preview calls per answer (post + edits + final)",
            f"{max(edits)} max, {sum(edits) / len(edits):.1f} mean",
            "a 10-s answer may cost at most 12",
            target=Target(max(edits), 12, " calls"),
        ),
    ]


async def _bare(litellm: Any, url: str) -> None:
    """The daemon's streaming request, bare (as bench/harness.py's bare_call)."""
    resp = await litellm.acompletion(
        model=MODEL,
        messages=USER,
        api_base=url,
        api_key="sk-bench",
        timeout=60,
        stream=True,
        num_retries=0,
    )
    async for _chunk in resp:
        pass


async def _cpu(fake: FakeLLM, llm: LLMClient) -> list[Row]:
    litellm = await litellm_module()
    screen, pauses = _Screen(), ChatPauses()

    async def streamed(i: int, interval: float = 1.0) -> None:
        key = ChatKey("cpu", str(i))
        plan = PreviewPlan(key, None, interval, min_chars=20, limit=4096, max_failures=3)
        preview = PreviewStream(screen, plan, turn=str(i), previews=_Ids(), pauses=pauses)
        await llm.stream(USER, None, preview)
        await preview.finish()

    async def timed(call: Any) -> float:
        for _ in range(CPU_CALLS):
            fake.reply(_paced(0.0))
        started = time.process_time()
        for i in range(CPU_CALLS):
            await call(i)
        return (time.process_time() - started) / CPU_CALLS

    await _bare(litellm, fake.url)  # warm-up
    # Interleaved, best of three each: the order of runs must not decide the ratio.
    bares, ourses = [], []
    for _ in range(3):
        bares.append(await timed(lambda _i: _bare(litellm, fake.url)))
        ourses.append(await timed(streamed))
    bare, ours = min(bares), min(ourses)
    worst = await timed(lambda i: streamed(i, 0.0))
    return [
        Row(
            "streaming",
            "CPU per message, bare streaming litellm call",
            f"{bare * 1000:.1f} ms",
            "fake server in process (same SSE work on both sides)",
        ),
        Row(
            "streaming",
            "CPU per message, streaming on (defaults)",
            f"{ours * 1000:.1f} ms",
            "LLMClient.stream: chunks assembled by index, the answer watched by a preview",
            target=Target(
                ours / bare, CPU_RATIO_LIMIT, "x", name="streaming CPU over the bare streaming call"
            ),
        ),
        Row(
            "streaming",
            "CPU per message, every growth previewed",
            f"{worst * 1000:.1f} ms",
            f"interval 0 (the terminal's pace): {worst / bare:.2f}x the bare call",
        ),
    ]


async def run() -> list[Row]:
    async with FakeLLM() as fake:
        llm = LLMClient(MODEL, api_base=fake.url, api_key="sk-bench")
        return await _visible(fake, llm) + await _cpu(fake, llm)
