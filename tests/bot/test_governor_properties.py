"""Property tests: whatever the stored history looks like, the governed copy is legal for a
strict provider (the same rules the fake server's strict mode enforces), fits the budget,
keeps the latest user message intact, leaves its input untouched, and never raises."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from bot.agent.governor.budget import Budget, TokenCounter
from bot.agent.governor.pipeline import ContextGovernor
from bot.config import ContextSettings
from tests.fakes.provider_rules import alternation_violations, violations

LIMIT = 1_500
SETTINGS = ContextSettings(max_context_tokens=LIMIT, reserve_tokens=0, max_tool_result_chars=2_000)
TOOLS = [{"type": "function", "function": {"name": "lookup", "parameters": {}}}]

text = st.text(alphabet="abc xyz日本", min_size=0, max_size=60)
huge = st.integers(min_value=3_000, max_value=60_000).map(lambda n: "R" * n)
names = st.one_of(
    st.sampled_from(["lookup", "weather", "final_result"]),
    st.none(),
    st.integers(),
    st.just(""),
)
arguments = st.one_of(
    st.just('{"city": "Paris"}'),
    st.just('{"city": "Par'),  # truncated JSON
    st.just("[1, 2]"),
    st.just(""),
    st.none(),
    st.fixed_dictionaries({"a": st.integers()}),
)


@st.composite
def step(draw: st.DrawFn, turn: int, index: int) -> list[dict[str, Any]]:
    """One assistant step: tool calls and their results, or plain text."""
    if draw(st.booleans()):
        return [{"role": "assistant", "content": draw(st.one_of(text, st.none()))}]
    n = draw(st.integers(min_value=1, max_value=3))
    ids = [f"call_{turn}_{index}_{k}" for k in range(n)]
    calls = [
        {
            "id": i,
            "type": "function",
            "function": {"name": draw(names), "arguments": draw(arguments)},
        }
        for i in ids
    ]
    results = [
        {"role": "tool", "tool_call_id": i, "content": draw(st.one_of(huge, text, st.none()))}
        for i in ids
    ]
    assistant = {
        "role": "assistant",
        "content": draw(st.one_of(st.none(), text)),
        "tool_calls": calls,
    }
    return [assistant, *results]


@st.composite
def history(draw: st.DrawFn) -> list[Any]:
    msgs: list[Any] = [{"role": "system", "content": "You are Pip. " * draw(st.integers(0, 20))}]
    for t in range(draw(st.integers(min_value=0, max_value=12))):
        msgs.append({"role": "user", "content": draw(text)})
        for s in range(draw(st.integers(min_value=0, max_value=3))):
            msgs.extend(draw(step(t, s)))
    # Damage: deletions, duplications, null names, truncations, junk, placeholders.
    for _ in range(draw(st.integers(min_value=0, max_value=8))):
        if len(msgs) < 2:
            break
        i = draw(st.integers(min_value=1, max_value=len(msgs) - 1))
        if not isinstance(msgs[i], dict):
            continue
        op = draw(st.sampled_from(["delete", "duplicate", "null_name", "truncate", "junk", "ph"]))
        if op == "delete":
            del msgs[i]
        elif op == "duplicate":
            msgs.insert(draw(st.integers(1, len(msgs))), copy.deepcopy(msgs[i]))
        elif op == "null_name" and isinstance(msgs[i].get("tool_calls"), list):
            msgs[i]["tool_calls"][0]["function"]["name"] = None
        elif op == "truncate":
            del msgs[i:]
        elif op == "junk":
            msgs.insert(i, draw(st.sampled_from([None, 3, {"role": "robot"}, {"content": "x"}])))
        elif op == "ph":
            msgs.insert(i, {"role": "assistant", "content": "[previous message omitted]"})
    if draw(st.booleans()):
        msgs.append({"role": "user", "content": "latest question " + draw(text)})
        for s in range(draw(st.integers(min_value=0, max_value=4))):  # the turn in flight
            msgs.extend(draw(step(99, s)))
    return msgs


def _counter() -> TokenCounter:
    return TokenCounter()  # the offline estimate: same arithmetic as in production fallback


def _carries(sent: Any, stored: Any) -> bool:
    """``sent`` is ``stored`` or a merge of it with the same-role messages around it."""
    if sent is stored:
        return True
    mine, merged = stored.get("content"), sent.get("content")
    if not mine:
        return True
    if isinstance(mine, str):
        return (isinstance(merged, str) and mine in merged) or {"type": "text", "text": mine} in (
            merged if isinstance(merged, list) else []
        )
    return isinstance(merged, list) and all(part in merged for part in mine)


def _latest_user(msgs: list[Any]) -> Any:
    users = [m for m in msgs if isinstance(m, dict) and m.get("role") == "user"]
    return users[-1] if users else None


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history())
def test_governed_copy_is_always_legal_fits_and_keeps_the_question(msgs: list[Any]) -> None:
    before = copy.deepcopy(msgs)
    counter = _counter()
    gov = ContextGovernor(SETTINGS, counter=counter, budget=Budget(LIMIT, 0, "config"))
    governed = gov.prepare_for_model(msgs, tools=TOOLS)
    out = governed.messages
    event(f"input broke the rules: {bool(violations(msgs))}")
    event(f"history snipped: {governed.dropped > 0}, results compacted: {governed.compacted > 0}")

    assert msgs == before  # the input (the stored history) is never changed
    assert violations(out) == [], json.dumps(out)[:2000]
    assert alternation_violations(out) == [], json.dumps(out)[:2000]
    # Exact, or an upper bound of the exact count when the bound alone shows it fits.
    assert counter.messages(out) + counter.tools(TOOLS) <= governed.tokens <= LIMIT
    latest = _latest_user(msgs)
    if latest is not None:
        assert _carries(_latest_user(out), latest)
    assert out[0] is msgs[0]  # the system prompt (persona) is never dropped or changed


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history(), st.data())
def test_explicit_turn_start_keeps_the_turns_user_message(msgs: list[Any], data: Any) -> None:
    users = [i for i, m in enumerate(msgs) if isinstance(m, dict) and m.get("role") == "user"]
    if not users:
        return
    start = data.draw(st.sampled_from(users))
    gov = ContextGovernor(SETTINGS, counter=_counter(), budget=Budget(LIMIT, 0, "config"))
    governed = gov.prepare_for_model(msgs, tools=TOOLS, turn_start=start)
    out = governed.messages
    assert violations(out) == []
    assert governed.tokens <= LIMIT
    assert any(_carries(m, msgs[start]) for m in out)
    assert _carries(_latest_user(out), _latest_user(msgs))
