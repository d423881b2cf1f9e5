"""A streamed model answer (litellm ``stream=True``, Chat Completions) put back together.

Tool calls arrive as fragments keyed by ``index``: the id and name on the first, the
arguments as pieces of a string. They are assembled here by index rather than by
``litellm.stream_chunk_builder``, whose history of dropped and merged calls (Groq's
whole-call chunks, calls after content) the turn cannot afford. An index is not always
a call's own: Ollama (through litellm) and OpenAI-compatible servers such as Ollama's
``/v1`` stream each parallel call whole in its own chunk, every one at index 0. A
fragment that names a call anew (another id, or a name where the call has one) once the
arguments so far are whole JSON starts the next call rather than gluing two argument
texts into one call that cannot run (``{}{"fact": ...}``).

While the ``final_result`` call's arguments grow, :class:`AnswerStream` lets a listener
read the answer written so far: the buffer is parsed as partial JSON by pydantic-core
(``allow_partial="trailing-strings"``: a half-sent escape, a split surrogate pair or a
cut UTF-8 byte yield the last complete prefix). It is parsed only when the listener
asks (at most once per preview edit), never per fragment. Free ``content`` is never
offered: the turn's contract may still reject it.

A stream stopped before its end (:class:`StreamBounds`: a model writing in a loop, a
proxy that never sends the finish) still gives its answer so far, with a note
(:meth:`AnswerStream.cut`): the turn ends with it rather than with nothing.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

import pydantic_core

from bot.agent.llm.response import CUT_SHORT, AnswerSink, LLMResponse, get_field, parse_usage
from bot.agent.toolbox import FINAL_RESULT, ToolCall


def partial_answer(buffer: bytes) -> str:
    """The ``answer`` string in a possibly unfinished ``final_result`` arguments text."""
    if not buffer.strip():
        return ""
    try:
        value = pydantic_core.from_json(buffer, allow_partial="trailing-strings")
    except ValueError:  # not JSON at all (a provider's odd encoding): nothing to show
        return ""
    answer = value.get("answer") if isinstance(value, dict) else None
    return answer if isinstance(answer, str) else ""


@dataclass(frozen=True, slots=True)
class StreamBounds:
    """How much of one streamed answer is read: characters (its text and its calls'
    arguments as they arrive) and seconds. The gaps between chunks have their own guard;
    these stop a stream that keeps coming and never ends."""

    max_chars: int
    seconds: float


@dataclass(slots=True)
class _Call:
    id: str | None = None
    name: str | None = None
    parts: list[str] = field(default_factory=list)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _starts_another(call: _Call, call_id: str | None, name: str | None) -> bool:
    """Whether a fragment at ``call``'s index is the next call: it names one anew (an id
    other than the call's; else a name where the call has one) and the call's arguments
    are whole. A provider repeating the id or name on every fragment stays one call."""
    if call_id is not None and call.id is not None:
        named_anew = call_id != call.id
    else:
        named_anew = name is not None and call.name is not None
    return named_anew and _whole_json("".join(call.parts))


def _whole_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:  # unfinished (or empty): more of the same call may follow
        return False
    return True


class AnswerStream:
    """Chunks of one streamed response in; an :class:`LLMResponse` out."""

    def __init__(self, model: str, sink: AnswerSink | None) -> None:
        self._model = model
        self._sink = sink
        self._content: list[str] = []
        self._calls: list[_Call] = []  # in the order they began
        self._open: dict[int | None, _Call] = {}  # by index: the call its fragments join
        self._finish: str | None = None
        self._usage: dict[str, int] = {}
        self._answer: _Call | None = None  # the final_result call, once named
        self.chunks = 0
        self.chars = 0  # of content and arguments: what StreamBounds.max_chars counts

    def feed(self, chunk: Any) -> None:
        self.chunks += 1
        usage = get_field(chunk, "usage")
        if usage:
            self._usage = parse_usage(usage)
        for choice in get_field(chunk, "choices") or ():
            if (get_field(choice, "index") or 0) != 0:
                continue
            finish = get_field(choice, "finish_reason")
            if isinstance(finish, str):
                self._finish = finish
            delta = get_field(choice, "delta")
            if delta is None:
                continue
            content = get_field(delta, "content")
            if isinstance(content, str) and content:
                self._content.append(content)
                self.chars += len(content)
            for raw in get_field(delta, "tool_calls") or ():
                self._feed_call(raw)

    def _feed_call(self, raw: Any) -> None:
        index = get_field(raw, "index")
        function = get_field(raw, "function")
        call_id = _text(get_field(raw, "id"))
        name = _text(get_field(function, "name")) if function is not None else None
        call = self._call_at(index if isinstance(index, int) else None, call_id, name)
        if call_id is not None and call.id is None:
            call.id = call_id
        if name is not None and call.name is None:
            call.name = name
        arguments = get_field(function, "arguments") if function is not None else None
        if isinstance(arguments, str) and arguments:
            call.parts.append(arguments)
            self.chars += len(arguments)
            if call.name == FINAL_RESULT and self._sink is not None:
                self._answer = call
                self._sink.answer_grew(self._read_answer)

    def _call_at(self, index: int | None, call_id: str | None, name: str | None) -> _Call:
        """The call a fragment at ``index`` belongs to: the one open there, or a new one."""
        call = self._open.get(index)
        if call is None or _starts_another(call, call_id, name):
            call = self._open[index] = _Call()
            self._calls.append(call)
        return call

    def _read_answer(self) -> str:
        call = self._answer
        return partial_answer("".join(call.parts).encode()) if call is not None else ""

    def response(self) -> LLMResponse:
        calls = tuple(
            ToolCall(
                id=call.id or f"call_{uuid.uuid4().hex[:24]}",
                name=call.name,
                arguments="".join(call.parts),
            )
            for call in self._calls
        )
        return LLMResponse(
            content="".join(self._content) or None,
            tool_calls=calls,
            model=self._model,
            finish_reason=self._finish,
            usage=self._usage,
        )

    def cut(self, note: str) -> LLMResponse | None:
        """The answer of a stream stopped early, ``note`` after it: the ``final_result``
        answer so far as a whole call (the other calls' arguments are unfinished, so
        none is run), else the free text; None when neither has any text."""
        answer = self._read_answer().rstrip()
        if self._answer is not None and answer:
            arguments = json.dumps({"answer": answer + note}, ensure_ascii=False)
            call = ToolCall(
                id=self._answer.id or f"call_{uuid.uuid4().hex[:24]}",
                name=FINAL_RESULT,
                arguments=arguments,
            )
            return LLMResponse(None, (call,), self._model, CUT_SHORT, self._usage)
        content = "".join(self._content).rstrip()
        if not content:
            return None
        return LLMResponse(content + note, (), self._model, CUT_SHORT, self._usage)
