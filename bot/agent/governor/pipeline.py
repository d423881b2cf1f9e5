"""The context governor: the last repair-and-compress pass before every model call.

It runs on a copy: the stored history is never changed, only what
this one request sends. The pipeline, in order:

1-4. strip placeholder assistant messages, strip malformed tool calls, drop orphan tool
     results, backfill missing tool results (repair.py)
5.   apply the tool-result budget (max_tool_result_chars)
6.   compact in-flight overflow: the current turn alone overflows, so its largest tool
     results shrink in place first
7.   snip history: oldest turns out, a legal tail stays
8.   drop orphans and backfill once more
9.   merge consecutive same-role messages (templates that demand alternating roles)

The system message, the current turn's user message and the latest user message are
never dropped, so the persona and the question always reach the model; a user message
changes only by being merged with the user messages right before it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.agent.governor import clean, repair
from bot.agent.governor.budget import (
    Budget,
    TokenCounter,
    UpperBound,
    litellm_counter,
    resolve_budget,
)
from bot.agent.governor.clean import Checked
from bot.agent.governor.offload import head_tail
from bot.agent.governor.repair import Message
from bot.agent.llm.client import litellm_module
from bot.agent.llm.params import answer_tokens
from bot.config import ContextSettings

log = logging.getLogger(__name__)

Exempt = Callable[[str | None], bool]  # is this tool's result never to be cut?
COMPACT_CHARS = 400  # what a compacted in-flight tool result keeps (its first lines)


@dataclass(frozen=True, slots=True)
class Governed:
    """One request's messages and what the governor did to get there."""

    messages: list[Message]
    tokens: int  # exact, or an upper bound when that bound already fits the limit
    limit: int
    dropped: int = 0
    compacted: int = 0
    bounded: bool = False  # fitted by the length bound: no token was counted
    untouched: bool = False  # sent as given (no repair, no cut): ``tokens`` bounds them all
    older: bool = True  # holds turns older than the current one (not all were cut)


def _never(name: str | None) -> bool:
    return False


def apply_tool_result_budget(
    messages: Sequence[Message], max_chars: int, exempt: Exempt = _never
) -> list[Message]:
    """No tool result longer than ``max_chars`` (older rows predate the offload), except
    those of tools exempt from offloading: they must reach the model whole."""
    out: list[Message] = []
    names: dict[Any, Any] = {}  # call id -> tool name (stored results carry no name)
    callers: list[Message] = []  # assistant messages with calls, named only when needed
    for m in messages:
        content = m.get("content")
        if m.get("role") != "tool":
            if m.get("tool_calls"):
                callers.append(m)
            out.append(m)
        elif not isinstance(content, str):
            out.append({**m, "content": "" if content is None else str(content)})
        elif len(content) > max_chars:
            for caller in callers:
                names.update(repair.call_names(caller))
            callers.clear()
            if exempt(m.get("name") or names.get(m.get("tool_call_id"))):
                out.append(m)
                continue
            cut = head_tail(content, max_chars, "cut to fit the tool-result budget")
            out.append({**m, "content": cut})
        else:
            out.append(m)
    return out


def compact_inflight_overflow(
    messages: Sequence[Message], turn_start: int, counter: TokenCounter, room: int
) -> tuple[list[Message], int]:
    """When the system message plus the current turn exceed ``room`` tokens, shrink the
    turn's largest tool results to their first lines until it fits (or none are left)."""
    out = list(messages)
    head = out[:1] if out and out[0].get("role") == "system" else []
    used = counter.messages(head) + counter.messages(out[turn_start:])
    if used <= room:
        return out, 0
    big = [
        i
        for i in range(turn_start, len(out))
        if out[i].get("role") == "tool" and len(out[i].get("content") or "") > COMPACT_CHARS
    ]
    big.sort(key=lambda i: len(out[i]["content"]), reverse=True)
    compacted = 0
    for i in big:
        old = out[i]
        new = {**old, "content": _compact(old["content"])}
        used += counter.message(new) - counter.message(old)
        out[i] = new
        compacted += 1
        if used <= room:
            break
    return out, compacted


def _compact(text: str) -> str:
    omitted = len(text) - COMPACT_CHARS
    return f"{text[:COMPACT_CHARS]}\n… [{omitted} characters compacted to fit the window] …"


def _turns(messages: Sequence[Message]) -> list[list[Message]]:
    """Split at user messages: a turn never separates a call from its results."""
    turns: list[list[Message]] = []
    for m in messages:
        if m.get("role") == "user" or not turns:
            turns.append([])
        turns[-1].append(m)
    return turns


def _units(messages: Sequence[Message]) -> list[list[Message]]:
    """Split at every non-tool message: an assistant message with its results is one unit."""
    units: list[list[Message]] = []
    for m in messages:
        if m.get("role") != "tool" or not units:
            units.append([])
        units[-1].append(m)
    return units


def snip_history(
    messages: Sequence[Message], turn_start: int, counter: TokenCounter, room: int
) -> tuple[list[Message], int]:
    """Keep the newest history turns that fit, counting from the newest back (so old
    history is never even counted). If the current turn alone is still too big, its
    oldest steps go too, but never its user message nor the latest user message."""
    head = list(messages[:1]) if messages and messages[0].get("role") == "system" else []
    turn_start = max(turn_start, len(head))
    history = messages[len(head) : turn_start]
    current = list(messages[turn_start:])
    used = counter.messages(head) + counter.messages(current)
    kept: list[list[Message]] = []
    for turn in reversed(_turns(history)):
        cost = counter.messages(turn)
        if used + cost > room:
            break
        used += cost
        kept.append(turn)
    kept_history = [m for turn in reversed(kept) for m in turn]
    dropped = len(history) - len(kept_history)
    if used > room and current:
        latest_user = max(i for i, m in enumerate(current) if i == 0 or m.get("role") == "user")
        protected = {id(current[0]), id(current[latest_user])}
        units = _units(current)
        for unit in units:
            if used <= room:
                break
            if any(id(m) in protected for m in unit):
                continue
            used -= counter.messages(unit)
            dropped += len(unit)
            unit.clear()
        current = [m for unit in units for m in unit]
    return head + kept_history + current, dropped


class ContextGovernor:
    """Runs the pipeline for one model; the window and tokenizer are resolved lazily,
    because litellm is imported in the background and the first call awaits it."""

    def __init__(
        self,
        settings: ContextSettings,
        model: str | None = None,
        *,
        counter: TokenCounter | None = None,
        budget: Budget | None = None,
        exempt: Exempt = _never,
        max_output_tokens: int = 0,
    ) -> None:
        self.settings = settings
        self.max_output_tokens = max_output_tokens  # [llm]'s: see _reserve
        self.exempt = exempt
        self.model = model
        self.counter = counter or TokenCounter()
        self.upper = UpperBound()
        self._cold: TokenCounter | None = None  # the model's tokenizer, until first needed
        self._exact = counter is not None
        self.budget = budget

    def current_budget(self) -> Budget:
        """The budget requests are governed by: the resolved one (see :meth:`ready`), or
        the configured window until then."""
        return self.budget or Budget(
            self.settings.max_context_tokens, self._reserve(None), "config"
        )

    def _reserve(self, litellm: Any) -> int:
        """The tokens kept free for the answer: ``reserve_tokens``, or the ``max_tokens``
        the model's requests carry when that is more (a provider refuses a prompt and
        ``max_tokens`` together over the window: bot.agent.llm.params)."""
        answer = self.max_output_tokens
        if litellm is not None and self.model:
            answer = answer_tokens(litellm, self.model, answer) or 0
        return max(self.settings.reserve_tokens, answer)

    async def ready(self) -> None:
        """Resolve the window and the tokenizer once (litellm loads off the loop)."""
        if self.budget is not None and self._exact:
            return
        try:
            litellm: Any = await litellm_module()
        except Exception:
            log.warning("litellm unavailable: estimating tokens", exc_info=True)
            litellm = None
        if self.budget is None:
            self.budget = resolve_budget(
                litellm,
                self.model,
                max_context_tokens=self.settings.max_context_tokens,
                reserve_tokens=self._reserve(litellm),
            )
            window, source = self.budget.window, self.budget.source
            log.info(
                "context window for %s: %d tokens (%s), %d kept for the answer",
                self.model,
                window,
                source,
                self.budget.reserve,
            )
        if not self._exact and litellm is not None:
            # Not loaded yet (about 40 MB): most requests fit by the length bound and
            # never need it; the first one that does loads it, off the loop.
            self._cold = litellm_counter(litellm, self.model)
        self._exact = True

    async def prepare(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        turn_start: int | None = None,
        history: Checked | None = None,
    ) -> Governed:
        await self.ready()
        governed = self.prepare_for_model(
            messages, tools=tools, turn_start=turn_start, history=history
        )
        if governed.bounded or self._cold is None:
            return governed
        # The first request the length bound cannot fit: load the model's tokenizer
        # (its files, off the loop) and govern again with exact counts.
        await self._load_tokenizer()
        return self.prepare_for_model(messages, tools=tools, turn_start=turn_start)

    async def prepare_smaller(
        self,
        messages: Sequence[Message],
        refused: Governed,
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        turn_start: int | None = None,
    ) -> Governed:
        """``messages`` again, after the provider found ``refused`` (what :meth:`prepare`
        made of them) over the model's window: within half of what it held by the model's
        tokenizer, so older turns are left out. The window, or our count against it, was
        off by more than the reserve; or the message itself is too long."""
        await self.ready()
        await self._load_tokenizer()
        held = self.counter.messages(refused.messages) + self.counter.tools(tools)
        limit = min(self.current_budget().limit, held) // 2
        return self.prepare_for_model(messages, tools=tools, turn_start=turn_start, limit=limit)

    async def _load_tokenizer(self) -> None:
        """The model's tokenizer replaces the estimate, loaded off the loop (once)."""
        cold = self._cold
        if cold is not None:
            await asyncio.to_thread(cold.text, "warm up the tokenizer")
            self.counter, self._cold = cold, None

    def prepare_for_model(
        self,
        messages: Sequence[Any],
        *,
        tools: Sequence[Mapping[str, Any]] | None = None,
        turn_start: int | None = None,
        history: Checked | None = None,
        limit: int | None = None,
    ) -> Governed:
        """The governed copy of ``messages``; ``turn_start`` indexes the current turn's
        user message (default: the latest user message). ``history``: the clean check of
        ``messages[1:turn_start]``, made once per stored row (SentForms), so only the
        system message and the turn's own messages are looked at here. ``limit``: fewer
        tokens than the budget allows. Never raises on bad history."""
        budget = self.current_budget()
        most = budget.limit if limit is None else min(limit, budget.limit)
        bound = self._clean_bound(messages, turn_start, history)
        anchor = _anchor(messages, turn_start)
        if bound is not None:
            bound += self.upper.tools(tools)
            if bound <= most:
                older = _older(messages, _index(messages, anchor))
                return Governed(
                    list(messages), bound, most, bounded=True, untouched=True, older=older
                )
        room = most - self.counter.tools(tools)
        out = repair.known_messages(messages)
        out = repair.strip_placeholder_assistant_messages(out)
        out = repair.strip_malformed_tool_calls(out, _index(out, anchor))
        out = repair.repair_pairs(out)
        out = apply_tool_result_budget(out, self.settings.max_tool_result_chars, self.exempt)
        start = _index(out, anchor)
        bound = self.upper.messages(out) + self.upper.tools(tools)
        if bound <= most:  # fits even counted generously
            # Merging drops a message's overhead for a separator: the bound still holds.
            merged = repair.merge_consecutive_roles(out)
            return Governed(merged, bound, most, bounded=True, older=_older(out, start))
        out, compacted = compact_inflight_overflow(out, start, self.counter, room)
        out, dropped = snip_history(out, start, self.counter, room)
        older = _older(out, _index(out, anchor))
        out = repair.repair_pairs(out)
        out = repair.merge_consecutive_roles(out)
        tokens = self.counter.messages(out) + self.counter.tools(tools)
        if tokens > most:
            log.warning("context still %d tokens over the %d limit", tokens, most)
        elif dropped or compacted:
            log.debug("governor dropped %d messages, compacted %d results", dropped, compacted)
        return Governed(out, tokens, most, dropped, compacted, older=older)

    def _clean_bound(
        self, messages: Sequence[Any], turn_start: int | None, history: Checked | None
    ) -> int | None:
        """The length bound of ``messages`` when no repair step would change them, else
        None; with ``history`` (see :meth:`prepare_for_model`) its messages are not
        looked at again."""
        max_chars = self.settings.max_tool_result_chars
        if history is None or turn_start != history.count + 1 or not messages:
            if not clean.needs_no_repair(messages, max_chars):
                return None
            return self.upper.messages(messages)
        walk, system = history.then(), clean.shape(messages[0], max_chars)
        if walk is None or system is None or system.role != "system":
            return None
        own = messages[turn_start:]
        if not walk.over(clean.shape(m, max_chars) for m in own) or walk.pending:
            return None
        return self.upper.message(messages[0]) + history.bound + self.upper.messages(own)


def _anchor(messages: Sequence[Any], turn_start: int | None) -> object | None:
    """The current turn's user message, tracked by identity through the repair steps
    (they never drop or replace a user message, so the identity survives)."""
    if turn_start is not None and 0 <= turn_start < len(messages):
        return messages[turn_start]  # type: ignore[no-any-return]
    for m in reversed(messages):
        if isinstance(m, dict) and m.get("role") == "user":
            return m
    return None


def _older(messages: Sequence[Message], start: int) -> bool:
    """Whether messages before the current turn's (at ``start``) hold more than the system
    message: turns older than the current one."""
    return start > (1 if messages and messages[0].get("role") == "system" else 0)


def _index(messages: Sequence[Message], anchor: object | None) -> int:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i] is anchor:
            return i
    return len(messages)
