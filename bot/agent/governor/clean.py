"""The clean check: whether a request needs no repair step at all.

Nearly every request is clean, and every turn sends the whole unsummarized history
again, so one pass over it decides whether the repair steps can be skipped. That pass
splits in two:

- what a message decides on its own (its role, a placeholder, well-formed calls, a tool
  result's size): :func:`shape`, which the runner remembers per stored row with the
  row's sent form (bot/agent/context.py), so a stored message is looked at once;
- a walk over roles and call ids only (:class:`Walk`): calls answered before the next
  message that is not a result, no call id twice, no two user or assistant messages in
  a row.

:func:`needs_no_repair` runs both over a whole request; the governor runs only the walk
over a history the runner checked (:class:`Checked`), and both over the turn's own
messages. Any doubt answers "not clean" and the repair steps run.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence, Set
from dataclasses import dataclass, field
from typing import Any

from bot.agent.governor.repair import ROLES, _is_json_object, _is_placeholder

_PAIRED = ("user", "assistant")  # two in a row are merged


@dataclass(frozen=True, slots=True)
class Shape:
    """What the walk needs of a message that is clean on its own."""

    role: str
    has_calls: bool = False  # an assistant message with (well-formed) tool calls
    calls: tuple[str, ...] = ()  # their ids
    answers: str = ""  # a tool result: the id of the call it answers


def shape(message: Any, max_tool_chars: int) -> Shape | None:
    """The message's :class:`Shape`, or None when it alone needs a repair step."""
    if not isinstance(message, dict):
        return None
    role = message.get("role")
    if role not in ROLES:
        return None
    if role == "tool":
        call_id, content = message.get("tool_call_id"), message.get("content")
        if type(call_id) is not str or type(content) is not str:
            return None
        return Shape("tool", answers=call_id) if len(content) <= max_tool_chars else None
    if _is_placeholder(message):
        return None  # nothing said
    if "tool_calls" not in message:
        return Shape(role)
    if role != "assistant":
        return None  # calls only count on an assistant message
    ids = _call_ids(message["tool_calls"])
    return Shape(role, has_calls=True, calls=ids) if ids else None


def _call_ids(calls: Any) -> tuple[str, ...]:
    """The ids of well-formed calls, each once; () when any call is not."""
    if not isinstance(calls, list) or not calls:
        return ()
    ids: list[str] = []
    for c in calls:
        function = c.get("function") if isinstance(c, dict) else None
        if not isinstance(function, dict) or c.get("type") != "function":
            return ()
        call_id, name, args = c.get("id"), function.get("name"), function.get("arguments")
        if not isinstance(call_id, str) or not call_id or call_id in ids:
            return ()
        if not isinstance(name, str) or not name.strip():
            return ()
        if not isinstance(args, str) or not args.strip() or not _is_json_object(args):
            return ()
        ids.append(call_id)
    return tuple(ids)


@dataclass(slots=True)
class Walk:
    """The sequential part of the check; ``base``: call ids seen before (read only)."""

    base: Set[str] = frozenset()
    seen: set[str] = field(default_factory=set)
    pending: set[str] = field(default_factory=set)
    previous: str | None = None
    previous_calls: bool = False

    def step(self, s: Shape) -> bool:
        """Take one message; False when a repair step would change the request."""
        if s.role == "tool":
            if s.answers not in self.pending:
                return False  # a result whose call is gone, or answered already
            self.pending.discard(s.answers)
        else:
            if self.pending:
                return False  # a call left unanswered
            if s.role == self.previous and s.role in _PAIRED and not self.previous_calls:
                return False  # two in a row: merged
            self.previous_calls = s.has_calls
            for call_id in s.calls:
                if call_id in self.seen or call_id in self.base:
                    return False
                self.seen.add(call_id)
                self.pending.add(call_id)
        self.previous = s.role
        return True

    def copy(self) -> Walk:
        """The same state, to go on from without changing this one."""
        return Walk(
            self.base, set(self.seen), set(self.pending), self.previous, self.previous_calls
        )

    def over(self, shapes: Iterable[Shape | None]) -> bool:
        return all(s is not None and self.step(s) for s in shapes)


@dataclass(frozen=True, slots=True)
class Checked:
    """A run of history messages checked once (as the runner sends them): how many,
    their summed length bound, and the walk after them; ``walk`` None: not clean."""

    count: int
    bound: int
    walk: Walk | None

    def then(self) -> Walk | None:
        """A fresh walk that continues after the history (which it never changes);
        None when the history itself is not clean or leaves a call unanswered."""
        done = self.walk
        if done is None or done.pending:
            return None
        seen = done.base | done.seen if done.base else done.seen  # shared, never changed
        return Walk(base=seen, previous=done.previous, previous_calls=done.previous_calls)


def needs_no_repair(messages: Sequence[Any], max_tool_chars: int) -> bool:
    """True when every repair step (and the tool-result budget) would return
    ``messages`` as they are."""
    walk = Walk()
    return walk.over(shape(m, max_tool_chars) for m in messages) and not walk.pending
