"""Each step of the governor pipeline on its own, and the pipeline's order and copy rule."""

from __future__ import annotations

import copy
import json
from typing import Any

from bot.agent.governor import repair
from bot.agent.governor.budget import Budget, TokenCounter
from bot.agent.governor.pipeline import (
    ContextGovernor,
    apply_tool_result_budget,
    compact_inflight_overflow,
    snip_history,
)
from bot.config import ContextSettings
from tests.fakes.provider_rules import alternation_violations, violations

SYSTEM = {"role": "system", "content": "You are Pip."}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def call(call_id: str, name: Any = "lookup", args: Any = '{"q": 1}') -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}


def asked(*calls: dict[str, Any], content: str | None = None) -> dict[str, Any]:
    return {"role": "assistant", "content": content, "tool_calls": list(calls)}


def result(call_id: str, content: str = "ok") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def said(text: str | None) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def chars_counter() -> TokenCounter:
    """One token per 4 characters: predictable arithmetic for budget tests."""
    return TokenCounter(lambda s: len(s) // 4)


# -- 1. placeholders ---------------------------------------------------------------------


def test_placeholder_assistant_messages_are_stripped():
    msgs = [
        user("hi"),
        said(""),
        said(None),
        said("   "),
        said("[previous assistant message omitted]"),
        said("(no content)"),
        said("a real [omitted] word inside a sentence"),
        asked(call("c1")),
        result("c1"),
    ]
    out = repair.strip_placeholder_assistant_messages(msgs)
    assert out == [msgs[0], msgs[6], msgs[7], msgs[8]]


# -- 2. malformed calls ------------------------------------------------------------------


def test_malformed_calls_are_stripped_and_good_ones_kept():
    good = call("c1")
    msgs = [
        user("hi"),
        asked(good, call("c2", name=None), call("c3", name=7), call("c4", args="{bad")),
        asked(call("c5", args="[1, 2]"), content="thinking"),
        asked(call("c1")),  # a duplicated id: a provider rejects the repeat
        asked(call("", name="x")),
    ]
    out = repair.strip_malformed_tool_calls(msgs)
    assert out[1]["tool_calls"] == [good]
    assert out[1]["tool_calls"][0] is good  # untouched calls are not copied
    assert out[2] == said("thinking")  # no call left, the text stays
    assert len(out) == 3  # empty leftovers are dropped


def test_arguments_that_can_be_repaired_are():
    msgs = [asked(call("a", args=""), call("b", args=None), call("c", args={"x": 1}))]
    out = repair.strip_malformed_tool_calls(msgs)
    assert [c["function"]["arguments"] for c in out[0]["tool_calls"]] == ["{}", "{}", '{"x": 1}']


def test_inflight_calls_are_sanitized_so_the_model_sees_its_error():
    msgs = [user("q"), asked(call("h", name=None)), user("now"), asked(call("c", name=None))]
    out = repair.strip_malformed_tool_calls(msgs, inflight_from=2)
    assert len(out) == 3  # the nameless call in history: stripped with its message
    assert out[-1]["tool_calls"][0]["function"]["name"] == repair.UNNAMED
    bad = repair.strip_malformed_tool_calls([asked(call("c", args="{oops"))], inflight_from=0)
    args = json.loads(bad[0]["tool_calls"][0]["function"]["arguments"])
    assert args == {"invalid_arguments": "{oops"}


def test_strip_malformed_never_mutates_its_input():
    msgs = [asked(call("a", name=None), call("b"), content="x"), asked(call("c", args=""))]
    before = copy.deepcopy(msgs)
    repair.strip_malformed_tool_calls(msgs)
    assert msgs == before


# -- 3. orphans --------------------------------------------------------------------------


def test_orphan_tool_results_are_dropped():
    msgs = [
        result("ghost"),  # at the start
        user("hi"),
        result("ghost2"),  # after a user message
        asked(call("c1")),
        result("c1"),
        result("c1"),  # a second answer to the same call
        result("other"),  # an id the assistant never used
        said("done"),
        result("c1"),  # the right id, but not directly after its call
    ]
    out = repair.drop_orphan_tool_results(msgs)
    assert out == [msgs[1], msgs[3], msgs[4], msgs[7]]


# -- 4. backfill -------------------------------------------------------------------------


def test_missing_results_are_backfilled_in_place():
    msgs = [user("hi"), asked(call("a"), call("b")), result("b"), user("next"), asked(call("c"))]
    out = repair.backfill_missing_tool_results(msgs)
    assert [m.get("tool_call_id") for m in out] == [None, None, "b", "a", None, None, "c"]
    assert out[3]["content"] == repair.MISSING_RESULT
    assert violations(out) == []


# -- 5. tool-result budget ---------------------------------------------------------------


def test_tool_result_budget_cuts_long_results_keeping_head_and_tail():
    long = "HEAD" + "x" * 5000 + "TAIL"
    msgs = [asked(call("a")), result("a", long), result("a", "short"), user("x" * 9000)]
    out = apply_tool_result_budget(msgs, 1000)
    assert len(out[1]["content"]) <= 1000
    assert out[1]["content"].startswith("HEAD") and out[1]["content"].endswith("TAIL")
    assert "characters cut" in out[1]["content"]
    assert out[2] is msgs[2] and out[3] is msgs[3]  # only tool results are budgeted
    assert msgs[1]["content"] == long


# -- 6. in-flight compaction -------------------------------------------------------------


def test_inflight_overflow_compacts_the_largest_results_first():
    msgs = [
        SYSTEM,
        user("old question"),
        said("old answer"),
        user("question"),
        asked(call("a"), call("b"), call("c")),
        result("a", "A" * 8000),
        result("b", "B" * 2000),
        result("c", "C" * 100),
    ]
    counter = chars_counter()
    out, compacted = compact_inflight_overflow(msgs, 3, counter, room=2000)
    assert compacted == 1
    assert len(out[5]["content"]) < 600 and out[5]["content"].startswith("A")
    assert out[6] is msgs[6] and out[7] is msgs[7]
    assert out[:5] == msgs[:5]
    same, none = compact_inflight_overflow(msgs, 3, counter, room=10_000)
    assert none == 0 and same == msgs


# -- 7. snip history ---------------------------------------------------------------------


def test_snip_drops_oldest_turns_and_keeps_a_legal_tail():
    msgs = [
        SYSTEM,
        user("one " * 100),
        asked(call("a")),
        result("a", "r" * 400),
        said("answer one"),
        user("two"),
        asked(call("b")),
        result("b", "small"),
        said("answer two"),
        user("now"),
    ]
    counter = chars_counter()
    out, dropped = snip_history(msgs, 9, counter, room=80)
    assert out[0] is SYSTEM and out[-1] is msgs[-1]
    assert out[1] == user("two")  # a whole turn, starting with its user message
    assert dropped == 4
    assert violations(out) == []
    out, dropped = snip_history(msgs, 9, counter, room=20)
    assert out == [SYSTEM, msgs[-1]]


def test_snip_drops_inflight_steps_last_but_never_the_user_messages():
    msgs = [
        SYSTEM,
        user("question"),
        asked(call("a")),
        result("a", "a" * 400),
        said("plain text"),
        user("nudge"),
        asked(call("b")),
        result("b", "b" * 40),
    ]
    out, _ = snip_history(msgs, 1, chars_counter(), room=60)
    assert msgs[1] in out and msgs[5] in out
    assert msgs[3] not in out
    assert violations(out) == []


# -- the whole pipeline ------------------------------------------------------------------


def _governor(**kw: Any) -> ContextGovernor:
    settings = ContextSettings(**kw)
    return ContextGovernor(
        settings,
        counter=chars_counter(),
        budget=Budget(settings.max_context_tokens, settings.reserve_tokens, "config"),
    )


def test_pipeline_repairs_a_corrupted_history_on_a_copy():
    msgs = [
        SYSTEM,
        user("hi"),
        result("orphan"),
        asked(call("n", name=None)),
        result("n", "result of a nameless call"),
        asked(call("lost")),
        said(""),
        user("then"),
        asked(call("late")),
        said("between"),
        result("late"),
        user("now"),
    ]
    before = copy.deepcopy(msgs)
    governed = _governor().prepare_for_model(msgs)
    assert msgs == before
    assert violations(governed.messages) == []
    assert governed.messages[-1] is msgs[-1]
    assert governed.messages[0] is SYSTEM


def test_pipeline_fits_the_budget_and_second_pass_restores_pairs():
    turns = [(user(f"q{i}"), asked(call(f"c{i}")), result(f"c{i}", "r" * 200)) for i in range(30)]
    big = [m for turn in turns for m in turn]
    msgs = [SYSTEM, *big, user("now")]
    gov = _governor(max_context_tokens=1000, reserve_tokens=0)
    governed = gov.prepare_for_model(msgs, tools=[{"type": "function", "function": {}}])
    assert governed.tokens <= governed.limit == 1000
    assert governed.dropped > 0
    assert violations(governed.messages) == []


def test_a_turn_start_on_the_system_message_does_not_duplicate_it():
    msgs = [SYSTEM, user("a"), said("b"), user("c")]
    out, _ = snip_history(msgs, 0, chars_counter(), room=1_000)
    assert out == msgs


def test_tool_result_budget_spares_exempt_tools():
    long = "HEAD" + "x" * 5000 + "TAIL"
    msgs = [
        asked(call("a", name="whole_tool"), call("b", name="lookup")),
        result("a", long),  # stored history: the tool's name is only on the call
        result("b", long),
        asked(call("c", name="whole_tool")),
        {**result("c", long), "name": "whole_tool"},
    ]
    out = apply_tool_result_budget(msgs, 1000, exempt=lambda name: name == "whole_tool")
    assert out[1] is msgs[1] and out[4] is msgs[4]
    assert len(out[2]["content"]) <= 1000


def test_pipeline_honours_the_offload_exemption():
    settings = ContextSettings(max_tool_result_chars=500)
    gov = ContextGovernor(
        settings,
        counter=chars_counter(),
        budget=Budget(settings.max_context_tokens, settings.reserve_tokens, "config"),
        exempt=lambda name: name == "final_result",
    )
    answer = "A" * 3000
    msgs = [SYSTEM, user("q"), asked(call("f", name="final_result")), result("f", answer)]
    governed = gov.prepare_for_model(msgs)
    assert governed.messages[-1]["content"] == answer


# -- alternating roles -------------------------------------------------------------------


def test_consecutive_same_role_messages_are_merged_on_the_copy():
    first, second = user("first try"), user("second try")
    msgs = [SYSTEM, first, second, said("a"), said("b"), user("now")]
    before = copy.deepcopy(msgs)
    out = repair.merge_consecutive_roles(msgs)
    assert msgs == before
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user"]
    assert out[1]["content"] == "first try\n\nsecond try"
    assert out[2]["content"] == "a\n\nb"
    assert out[3] is msgs[-1]
    assert alternation_violations(out) == []
    assert alternation_violations(msgs) != []


def test_merge_keeps_an_assistant_message_s_tool_calls():
    msgs = [SYSTEM, user("q"), said("thinking"), asked(call("x"), content="calling"), result("x")]
    out = repair.merge_consecutive_roles(msgs)
    assert [m["role"] for m in out] == ["system", "user", "assistant", "tool"]
    assert out[2]["content"] == "thinking\n\ncalling"
    assert out[2]["tool_calls"] == msgs[3]["tool_calls"]
    assert violations(out) == [] and alternation_violations(out) == []
