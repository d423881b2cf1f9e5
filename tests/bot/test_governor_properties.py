"""Property tests: whatever the stored history looks like, the governed copy is legal for a
strict provider (the same rules the fake server's strict mode enforces), fits the budget,
keeps the latest user message intact, leaves its input untouched, and never raises."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from bot.agent.context import SentForms
from bot.agent.governor import clean, repair
from bot.agent.governor.budget import Budget, TokenCounter
from bot.agent.governor.pipeline import ContextGovernor, apply_tool_result_budget
from bot.agent.governor.summary import unsummarized_rows
from bot.agent.history import SentHistory, SentTails
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
    st.just(json.dumps('{"city": "Paris"}')),  # encoded twice: repaired, never dropped
    st.just("null"),
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


def _every_step(msgs: list[Any], turn_start: int | None = None) -> list[Any]:
    """The governor's repair steps and the tool-result budget, one after another."""
    out = repair.known_messages(msgs)
    out = repair.strip_placeholder_assistant_messages(out)
    out = repair.strip_malformed_tool_calls(out, turn_start)
    out = repair.repair_pairs(out)
    out = apply_tool_result_budget(out, SETTINGS.max_tool_result_chars)
    return repair.merge_consecutive_roles(out)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history())
def test_a_history_called_clean_is_one_every_step_leaves_as_it_is(msgs: list[Any]) -> None:
    """The one-pass check that lets a clean history skip the steps must never call a
    history clean that a step would change."""
    is_clean = clean.needs_no_repair(msgs, SETTINGS.max_tool_result_chars)
    event(f"clean: {is_clean}")
    if is_clean:
        out = _every_step(msgs, len(msgs) - 1)
        assert len(out) == len(msgs) and all(a is b for a, b in zip(out, msgs, strict=True))


def test_a_plain_tool_using_history_is_clean_and_sent_as_stored() -> None:
    msgs: list[Any] = [{"role": "system", "content": "You are Pip."}]
    for t in range(30):
        call = {"id": f"c{t}", "type": "function", "function": {"name": "final_result"}}
        call["function"]["arguments"] = f'{{"answer": "answer {t}"}}'
        msgs += [
            {"role": "user", "content": f"question {t}"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{t}", "content": "ok"},
        ]
    assert clean.needs_no_repair(msgs, SETTINGS.max_tool_result_chars)
    gov = ContextGovernor(SETTINGS, counter=_counter(), budget=Budget(10_000, 0, "config"))
    governed = gov.prepare_for_model(msgs, tools=TOOLS)
    assert governed.bounded and all(a is b for a, b in zip(governed.messages, msgs, strict=True))
    broken = [*msgs[:-1]]  # the last call's result is missing: a step has work to do
    assert not clean.needs_no_repair(broken, SETTINGS.max_tool_result_chars)
    assert gov.prepare_for_model(broken, tools=TOOLS).messages[-1]["content"] == (
        repair.MISSING_RESULT
    )


@st.composite
def clean_history(draw: st.DrawFn) -> list[Any]:
    """A history no step needs to touch, then at most one kind of damage: the check must
    notice every one of them."""
    msgs: list[Any] = [{"role": "system", "content": "You are Pip."}]
    for t in range(draw(st.integers(min_value=1, max_value=6))):
        msgs.append({"role": "user", "content": f"question {t} " + draw(text)})
        for s in range(draw(st.integers(min_value=0, max_value=2))):
            ids = [f"c{t}_{s}_{k}" for k in range(draw(st.integers(min_value=1, max_value=2)))]
            calls = [
                {
                    "id": i,
                    "type": "function",
                    "function": {"name": "lookup", "arguments": '{"city": "Paris"}'},
                }
                for i in ids
            ]
            msgs.append({"role": "assistant", "content": None, "tool_calls": calls})
            msgs += [{"role": "tool", "tool_call_id": i, "content": draw(text)} for i in ids]
        if draw(st.booleans()):
            msgs.append({"role": "assistant", "content": "answer " + draw(text)})
    damage = draw(
        st.sampled_from(
            ["none", "delete", "duplicate", "huge", "null", "name", "args", "user", "ph"]
        )
    )
    eligible = [
        k
        for k in range(1, len(msgs))
        if (damage not in ("huge", "null") or msgs[k]["role"] == "tool")
        and (damage not in ("name", "args") or msgs[k].get("tool_calls"))
    ]
    if not eligible:
        return msgs
    i = draw(st.sampled_from(eligible))
    m = msgs[i]
    event(f"damage: {damage}")
    if damage == "delete":
        del msgs[i]
    elif damage == "duplicate":
        msgs.insert(i, copy.deepcopy(m))
    elif damage in ("huge", "null") and m["role"] == "tool":
        m["content"] = "R" * 3_000 if damage == "huge" else None
    elif damage in ("name", "args") and m.get("tool_calls"):
        field, junk = ("name", "") if damage == "name" else ("arguments", '{"city": "Par')
        m["tool_calls"][0]["function"][field] = junk
    elif damage == "user":
        msgs.insert(i, {"role": "user", "content": "again"})
    elif damage == "ph":
        msgs.insert(i, {"role": "assistant", "content": "[previous message omitted]"})
    return msgs


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clean_history())
def test_every_kind_of_damage_to_a_clean_history_is_noticed(msgs: list[Any]) -> None:
    is_clean = clean.needs_no_repair(msgs, SETTINGS.max_tool_result_chars)
    out = _every_step(msgs, len(msgs) - 1)
    untouched = len(out) == len(msgs) and all(a is b for a, b in zip(out, msgs, strict=True))
    event(f"clean: {is_clean}, untouched: {untouched}")
    assert is_clean == untouched


def _afresh(forms: SentForms, rows: list[tuple[int, dict[str, Any]]]) -> SentHistory:
    """``rows`` as sent and checked from scratch: what SentTails must match."""
    sent = [forms.row(row) for row in rows]
    walk = clean.Walk()
    checked = clean.Checked(
        len(sent), sum(s.bound for s in sent), walk if walk.over(s.shape for s in sent) else None
    )
    return SentHistory([s.form for s in sent], checked)


def _split_at_a_turn(msgs: list[Any], pick: int) -> tuple[list[Any], list[Any]]:
    """The messages after the system one, cut at one of their user messages (the turn in
    flight starts there); all history when there is none."""
    rest = msgs[1:]
    starts = [i for i, m in enumerate(rest) if isinstance(m, dict) and m.get("role") == "user"]
    cut = starts[pick % len(starts)] if starts else len(rest)
    return rest[:cut], rest[cut:]


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(clean_history(), history()), st.integers(min_value=0, max_value=30))
def test_a_history_checked_once_per_row_decides_as_the_whole_request_would(
    msgs: list[Any], pick: int
) -> None:
    """The runner checks its history once per stored row (SentForms) and the governor
    then looks only at the system message and the turn's own messages: the request is
    sent untouched exactly when the check of the whole request says so, with the same
    length bound, whatever the history holds."""
    stored, own = _split_at_a_turn(msgs, pick)
    rows = [(i + 1, m) for i, m in enumerate(stored) if isinstance(m, dict)]
    sent = _afresh(SentForms(SETTINGS.max_tool_result_chars), rows)
    request = [msgs[0], *sent.messages, *own]
    turn_start = len(sent.messages) + 1
    gov = ContextGovernor(SETTINGS, counter=_counter(), budget=Budget(10**9, 0, "config"))
    fast = gov.prepare_for_model(request, tools=TOOLS, turn_start=turn_start, history=sent.checked)
    whole = gov.prepare_for_model(request, tools=TOOLS, turn_start=turn_start)
    event(f"untouched: {whole.untouched}")
    assert (fast.untouched, fast.tokens) == (whole.untouched, whole.tokens)
    assert fast.messages == whole.messages
    if whole.untouched:
        assert all(a is b for a, b in zip(fast.messages, request, strict=True))


def test_a_history_checked_for_another_cut_is_not_trusted() -> None:
    """A check made for a history of another length (the runner's messages and its
    check out of step) falls back to checking the whole request."""
    question = {"role": "user", "content": "q"}
    rows = [(1, question), (2, {"role": "assistant", "content": "a"})]
    sent = _afresh(SentForms(SETTINGS.max_tool_result_chars), rows)
    request = [{"role": "system", "content": "s"}, *sent.messages, question, question]
    gov = ContextGovernor(SETTINGS, counter=_counter(), budget=Budget(10_000, 0, "config"))
    governed = gov.prepare_for_model(request, tools=TOOLS, turn_start=4, history=sent.checked)
    assert not governed.untouched  # two user messages in a row: merged


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(clean_history(), history()), st.data())
def test_a_history_carried_from_turn_to_turn_is_the_one_derived_afresh(
    msgs: list[Any], data: st.DataObject
) -> None:
    """SentTails extends the previous turn's history by the new rows; whatever happens
    between turns (rows added, the summary's cursor moved, the tail reloaded as new row
    objects, rows cut from its front), each turn gets what deriving it afresh gives."""
    stored = [m for m in msgs[1:] if isinstance(m, dict)]
    rows: list[tuple[int, dict[str, Any]]] = []
    through = 0
    tails = SentTails(SentForms(SETTINGS.max_tool_result_chars))
    fresh = SentForms(SETTINGS.max_tool_result_chars)
    for n, m in enumerate(stored, start=1):
        rows.append((n, m))
        change = data.draw(st.sampled_from(["add", "add", "add", "cursor", "reload", "cut"]))
        if change == "cursor":
            through = data.draw(st.integers(min_value=through, max_value=n))
        elif change == "reload":
            rows = [(i, dict(r)) for i, r in rows]
        elif change == "cut" and len(rows) > 1:
            rows = rows[1:]
        carried = tails.history("s", list(rows), through)
        again = _afresh(fresh, unsummarized_rows(rows, through))
        assert carried.messages == again.messages
        assert (carried.checked.count, carried.checked.bound) == (
            again.checked.count,
            again.checked.bound,
        )
        # What the fold check reads instead of the rows: the cursor and the turns.
        users = sum(1 for m in again.messages if m.get("role") == "user")
        assert (carried.through, carried.turns) == (through, users)
        mine, theirs = carried.checked.then(), again.checked.then()
        assert (mine is None) == (theirs is None)
        if mine is not None and theirs is not None:
            assert (set(mine.base), mine.previous, mine.previous_calls) == (
                set(theirs.base),
                theirs.previous,
                theirs.previous_calls,
            )
