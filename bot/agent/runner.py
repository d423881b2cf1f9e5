"""The turn loop: model call -> tools -> ... -> final_result.

Every message of a turn is persisted as soon as it exists, so a crash mid-turn leaves
an honest history. The loop ends at a valid ``final_result``, at ``max_steps`` (with a
fallback answer, never silence) or when the model stops calling tools after one nudge.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from bot.agent.context import (
    FOLLOWUP_SPEAKER,
    PromptInputs,
    SentForms,
    build_messages,
    build_system_prompt,
    label_tool_output,
    runtime_block,
    turn_text,
    user_content,
)
from bot.agent.effects import Acted, Effect, stopped_note
from bot.agent.forgery import neutralize
from bot.agent.governor.clean import Checked
from bot.agent.governor.offload import ToolResultOffload
from bot.agent.governor.pipeline import ContextGovernor, Governed
from bot.agent.governor.summary import Row
from bot.agent.history import SentHistory, SentTails
from bot.agent.llm.response import (
    CUT_SHORT,
    AnswerSink,
    ChatModel,
    LLMResponse,
    StreamingModel,
)
from bot.agent.memory.background import Consolidator, Pending
from bot.agent.memory.service import MemoryService
from bot.agent.skills.catalog import SkillCatalog
from bot.agent.speakers import SPEAKER_KEY, speaker_of
from bot.agent.toolbox import (
    ERROR_HINT,
    FINAL_RESULT,
    ToolBox,
    ToolCall,
    ToolContext,
    ToolResult,
    ToolServices,
)
from bot.config import ContextSettings
from bot.errors import ModelNotConfiguredError, ModelUnavailableError, PromptTooLongError
from bot.media.entries import MEDIA_KEY, Entry
from bot.media.intake import MediaIntake, Prefaced, Taken
from bot.media.shown import ImageParts
from bot.messages import Attachment, ChatKey, InboundMessage, MessageKind, utcnow
from bot.store.base import Sessions
from bot.text import valid_unicode
from bot.workspaces.folders import DEFAULT_WORKSPACE, Workspaces
from bot.workspaces.routing import WorkspaceOf, session_key, workspace_for

log = logging.getLogger(__name__)

# A valid final_result that was not delivered because a call beside it failed.
NOT_DELIVERED = "Error: not delivered: "
ONE_ANSWER = (
    "Error: only one final_result per response: this one was not delivered "
    "(the first valid final_result of the response was)."
)
NUDGE = (
    "[System note] You answered in plain text. Every task must end with a call to "
    "final_result(answer=...). Call final_result now with your reply to the user."
)


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    answer: str
    structured_data: Any = None
    next_actions: tuple[str, ...] = ()
    steps: int = 0
    fallback: bool = False
    tool_calls: tuple[str, ...] = field(default=())
    attachments: tuple[Attachment, ...] = ()  # files sent with the answer (send_file)


@dataclass(slots=True)
class TurnNotes:
    """What a turn learns on the way that its after-turn work can reuse."""

    request_bound: int | None = None  # the first request's length bound, sent untouched
    history: Pending | None = None  # the unsummarized history the turn started from
    retracted: bool = False  # the turn's rows were removed: nothing to fold
    said: str = ""  # the text of the last model response, stored with it
    outgoing: list[Attachment] = field(default_factory=list)  # the turn's ToolContext's
    acted: Acted = field(default_factory=Acted)  # what its tools did: the caller's record


@dataclass(slots=True)
class _TurnState:
    """One turn's loop state: what its steps read, and add to as the loop goes."""

    tz: str
    messages: list[dict[str, Any]]  # verbatim, as stored: the governor works on a copy
    checked: Checked  # the governor's clean check of the history, done once
    turn_start: int  # where the turn's own messages start: the user's message
    session_id: int
    ctx: ToolContext
    definitions: list[dict[str, Any]]
    offers_final: bool  # without final_result, a plain answer ends the turn
    nudged: bool = False  # the one nudge to call final_result was given
    contract_failures: int = 0  # final_result calls that failed validation
    last_text: str = ""  # the latest text the model wrote, for a fallback answer
    called: list[str] = field(default_factory=list)  # the tools called, in order
    effects: list[Effect] = field(default_factory=list)  # those that acted (Acted.effects)


TimezoneLookup = Callable[[InboundMessage], Awaitable[str]]


class AgentRunner:
    def __init__(
        self,
        model: ChatModel,
        tools: ToolBox,
        sessions: Sessions,
        workspaces: Workspaces,
        *,
        timezone: str | TimezoneLookup = "UTC",
        max_steps: int = 8,
        history_limit: int = 200,
        services: ToolServices | None = None,
        clock: Callable[[], datetime] = utcnow,
        context: ContextSettings | None = None,
        model_name: str | None = None,
        skills: SkillCatalog | None = None,
        memory: MemoryService | None = None,
        workspace_of: WorkspaceOf | None = None,
        max_tool_calls: int = 16,
        offload: ToolResultOffload | None = None,
        media: MediaIntake | None = None,
        images: ImageParts | None = None,
        max_output_tokens: int = 0,  # [llm]'s: the governor keeps that many tokens free
    ) -> None:
        self._model = model
        self.media = media  # None: attachments stay lines in the runtime block
        self._images = images or ImageParts(None, 0)
        # Asked once: a turn with a preview streams only through a model that can.
        self._streaming: StreamingModel | None = (
            model if isinstance(model, StreamingModel) else None
        )
        self._max_tool_calls = max_tool_calls
        self._tools = tools
        self._sessions = sessions
        self._workspaces = workspaces
        self._timezone = timezone
        self._max_steps = max_steps
        self._history_limit = history_limit
        self._services = services or ToolServices()
        self._clock = clock
        self._context = context or ContextSettings()
        self._sent = SentTails(SentForms(self._context.max_tool_result_chars))
        self._skills = skills
        self.memory = memory
        # The workspace a turn runs in (routing; persona disk edits noticed on the way).
        self.workspace_of: WorkspaceOf = workspace_of or (lambda _msg: DEFAULT_WORKSPACE)
        self.governor = ContextGovernor(
            self._context,
            model_name,
            exempt=tools.offload_exempt,
            max_output_tokens=max_output_tokens,
        )
        self.consolidator = Consolidator(
            model,
            sessions,
            self.governor,
            keep_turns=self._context.history_turns,
            history_limit=history_limit,
            memory=memory,
        )
        self.offload = offload or ToolResultOffload(
            workspaces.root, self._context.max_tool_result_chars
        )
        sessions.add_clear_hook(self.offload.remove_session)

    async def _tz(self, msg: InboundMessage) -> str:
        if isinstance(self._timezone, str):
            return self._timezone
        return await self._timezone(msg)

    def system_prompt(
        self,
        msg: InboundMessage,
        workspace: str = DEFAULT_WORKSPACE,
        summary: str | None = None,
        memory: str | None = None,
    ) -> str:
        # Rebuilt from the persona files for every turn: no compaction can lose them.
        return build_system_prompt(
            PromptInputs(
                channel=msg.key.channel,
                workspace=self._workspaces.path(workspace),
                bootstrap=self._workspaces.bootstrap(workspace),
                summary=summary,
                memory=memory,
                skills=self._skills.prompt_section(workspace) if self._skills else None,
            )
        )

    async def _history(
        self, key: ChatKey, rows: list[tuple[int, dict[str, Any]]]
    ) -> tuple[SentHistory, str | None]:
        """The turns after the archived summary, sent whole (as sent: see SentForms),
        and that summary. Folding happens after the reply (:class:`Consolidator`), never
        on the way to it."""
        stored = await self._sessions.summary(key)
        summary, through = stored if stored is not None else (None, 0)
        return self._sent.history(key, rows, through), summary or None

    async def _opening(
        self,
        msg: InboundMessage,
        workspace: str,
        tz: str,
        rows: list[tuple[int, dict[str, Any]]],
        media: Sequence[Entry] = (),
    ) -> tuple[list[dict[str, Any]], SentHistory]:
        """System prompt (with memory), the unsummarized history, the user's message;
        and that history as sent (with what the governor's clean check made of it)."""
        history, summary = await self._history(session_key(msg.key, workspace), rows)
        memory = (
            await self.memory.prompt_section(workspace, msg.key, msg.user_id)
            if self.memory is not None
            else None
        )
        messages = build_messages(
            self.system_prompt(msg, workspace, summary=summary, memory=memory),
            history.messages,
            user_content(msg, tz, self._clock(), media),
        )
        if media:  # its images are shown (and counted) like a stored message's
            messages[-1][MEDIA_KEY] = list(media)
        return messages, history

    async def run_turn(
        self, msg: InboundMessage, sink: AnswerSink | None = None, acted: Acted | None = None
    ) -> TurnOutcome:
        """One turn; ``sink`` (a streamed preview) watches the answer being written, and
        ``acted`` records what its tools did, for a turn that ends without an answer."""
        workspace = await workspace_for(self.workspace_of, msg)
        skey = session_key(msg.key, workspace)  # each workspace keeps its own history
        taken = await self._take_media(msg, workspace, skey)
        if taken is not None and not taken.answerable:
            return TurnOutcome(answer=taken.preface)  # nothing a model could answer
        if sink is not None and taken is not None and taken.preface:
            sink = Prefaced(sink, taken.preface)
        notes = TurnNotes(acted=acted if acted is not None else Acted())
        outcome = await self._run_stored(msg, workspace, skey, taken, sink=sink, notes=notes)
        if taken is not None and taken.preface:
            outcome = replace(outcome, answer=f"{taken.preface}\n\n{outcome.answer}")
        return outcome

    async def set_aside(self, msg: InboundMessage, acted: Acted) -> None:
        """A turn its person stopped after its tools acted: its stored rows give way to
        its message and a note of what was done (a user message, then the assistant's:
        legal for any provider), so the next turn knows. A turn whose tools did nothing
        is left to the dispatcher, which forgets it whole."""
        if not acted.effects or acted.session is None or acted.user is None:
            return
        await self._sessions.retract(msg.key, msg.message_id)
        note = {"role": "assistant", "content": stopped_note(acted.lines())}
        await self._sessions.append(acted.session, [acted.user, note], source_id=msg.message_id)

    async def _take_media(self, msg: InboundMessage, workspace: str, skey: ChatKey) -> Taken | None:
        """The attachments taken (downloaded, seen, heard, read), or None without any."""
        if self.media is None or not msg.attachments:
            return None
        sid = await self._sessions.session_id(skey)
        return await self.media.take(msg, sid, self._workspaces.path(workspace))

    async def _run_stored(
        self,
        msg: InboundMessage,
        workspace: str,
        skey: ChatKey,
        taken: Taken | None,
        *,
        sink: AnswerSink | None,
        notes: TurnNotes,
    ) -> TurnOutcome:
        user_row: dict[str, Any] = {"role": "user", "content": turn_text(msg)}
        if msg.kind is MessageKind.SCHEDULED:
            user_row[SPEAKER_KEY] = FOLLOWUP_SPEAKER
        media: tuple[Entry, ...] = ()
        if taken is not None:
            msg, media = replace(msg, text=taken.text), taken.entries
            user_row = {"role": "user", "content": taken.text, MEDIA_KEY: list(media)}
        if (speaker := speaker_of(msg)) is not None:
            user_row[SPEAKER_KEY] = speaker
        # The user's words are stored first: a dead model must not lose them. A turn
        # interrupted by a crash or a stop is replayed: its user message is stored
        # already; the model sees the history before it, then the message again.
        start = await self._sessions.begin_turn(skey, msg.message_id, user_row, self._history_limit)
        notes.acted.session, notes.acted.user = skey, user_row
        try:
            outcome = await self._run_turn(
                msg, workspace, skey, start.before, notes, media=media, sink=sink
            )
            if outcome.fallback and outcome.answer != notes.said:
                # The user saw this answer: without it the history would hold no reply
                # (the failed calls are dropped as malformed), and the next message
                # would be merged with this one as if it had never been answered.
                await self._sessions.append(
                    skey, [{"role": "assistant", "content": outcome.answer}]
                )
            return replace(outcome, attachments=tuple(notes.outgoing))
        except (ModelNotConfiguredError, ModelUnavailableError) as exc:
            # Not processed (no model: the user is told so), or refused by the provider
            # (a content filter, a request it cannot take): kept, its words would be
            # merged into the chat's next request, which would be refused the same way.
            if not isinstance(exc, ModelUnavailableError) or exc.refused:
                await self._sessions.retract(msg.key, msg.message_id)
                notes.retracted = True
            raise
        finally:
            if not notes.retracted:
                self.consolidator.after_turn(
                    skey,
                    workspace,
                    msg.user_id,
                    start.user_row,
                    turns_after=start.before,
                    request_bound=notes.request_bound,
                    history=notes.history,
                    direct=msg.direct,
                )

    async def _run_turn(
        self,
        msg: InboundMessage,
        workspace: str,
        skey: ChatKey,
        rows: list[Row],
        notes: TurnNotes,
        *,
        media: Sequence[Entry] = (),
        sink: AnswerSink | None = None,
    ) -> TurnOutcome:
        """The loop, one model call a step: it ends at a valid final_result, at a plain
        answer (after one nudge when final_result is offered), at a second invalid
        final_result, or at ``max_steps`` (a fallback answer, never silence)."""
        turn = await self._begin(msg, workspace, skey, rows, notes, media=media)
        for step in range(1, self._max_steps + 1):
            resp = await self._call_model(turn, step, notes, sink)
            if not resp.tool_calls:
                outcome = await self._without_tools(msg, skey, turn, resp, step)
            else:
                results = await self._call_tools(skey, turn, resp)
                outcome = self._final_outcome(msg, turn, resp, results, step)
            if outcome is not None:
                return outcome
        return self._out_of_steps(msg, turn)

    async def _begin(
        self,
        msg: InboundMessage,
        workspace: str,
        skey: ChatKey,
        rows: list[Row],
        notes: TurnNotes,
        *,
        media: Sequence[Entry],
    ) -> _TurnState:
        """The turn's opening messages, tool context and tools; ``notes`` keeps the
        history it starts from, which the fold after the turn reuses."""
        tz = await self._tz(msg)
        messages, history = await self._opening(msg, workspace, tz, rows, media)
        checked = history.checked
        notes.history = Pending(history.through, checked.count, history.turns, checked.bound)
        turn_start = len(messages) - 1
        session_id = await self._sessions.session_id(skey)
        ctx = ToolContext(
            chat_key=msg.key,
            user_id=msg.user_id,
            timezone=tz,
            workspace=self._workspaces.path(workspace),
            workspace_name=workspace,
            services=self._services,
            message_id=f"{msg.key}:{msg.message_id}",
            direct=msg.direct,
            chain_depth=msg.chain_depth,
            outgoing=notes.outgoing,
        )
        definitions = self._tools.definitions(ctx.workspace_name)
        return _TurnState(
            tz=tz,
            messages=messages,
            checked=checked,
            turn_start=turn_start,
            session_id=session_id,
            ctx=ctx,
            definitions=definitions,
            offers_final=any(d["function"]["name"] == FINAL_RESULT for d in definitions),
            effects=notes.acted.effects,
        )

    async def _call_model(
        self, turn: _TurnState, step: int, notes: TurnNotes, sink: AnswerSink | None
    ) -> LLMResponse:
        """One step's model call on a governed copy of the messages; ``notes`` keeps the
        first request's bound (when it went untouched) and the text the model wrote."""
        # Repairs and cuts apply to a copy; ``messages`` (and the store) stay verbatim.
        # Older turns' pictures go first: neither counted nor sent (bot/media/shown.py).
        governed = await self.governor.prepare(
            self._images.recent(turn.messages),
            tools=turn.definitions,
            turn_start=turn.turn_start,
            history=turn.checked,
        )
        if step == 1 and governed.untouched:
            notes.request_bound = governed.tokens
        sent = await self._images.shown(governed.messages)
        try:
            resp = await self._ask(sent, turn.definitions or None, sink)
        except ModelUnavailableError as exc:
            if exc.too_long:
                resp = await self._ask_shorter(turn, governed, sink)
            elif exc.refused and self._images.refuse(governed.messages, sent):
                log.warning(
                    "the provider refused a request holding pictures; once more without them"
                )
                resp = await self._ask(
                    await self._images.shown(governed.messages), turn.definitions or None, sink
                )
            else:
                raise
        notes.said = (resp.content or "").strip()
        if notes.said:
            turn.last_text = notes.said
        return resp

    async def _ask_shorter(
        self, turn: _TurnState, refused: Governed, sink: AnswerSink | None
    ) -> LLMResponse:
        """The provider found the request over the model's window (its window or our
        count of it was off, or the message itself is too long): asked once more within
        half of it, older turns left out. Over it again, the message is refused as too
        long for the model (not kept), saying whether that request still held older turns."""
        log.warning("the request was over the model's context window; once more, shorter")
        governed = await self.governor.prepare_smaller(
            self._images.recent(turn.messages),
            refused,
            tools=turn.definitions,
            turn_start=turn.turn_start,
        )
        sent = await self._images.shown(governed.messages)
        try:
            return await self._ask(sent, turn.definitions or None, sink)
        except ModelUnavailableError as exc:
            if not exc.too_long:
                raise
            raise PromptTooLongError(str(exc), history=governed.older) from exc

    async def _without_tools(
        self, msg: InboundMessage, skey: ChatKey, turn: _TurnState, resp: LLMResponse, step: int
    ) -> TurnOutcome | None:
        """A response that calls no tool is stored and ends the turn, unless final_result
        is offered and no nudge was given yet: the model is then asked once to call it
        (None: the loop goes on). A text cut short at the stream's bounds is not nudged:
        asked again, a model writing in a loop would only loop again."""
        assistant = {"role": "assistant", "content": resp.content or ""}
        turn.messages.append(assistant)
        await self._sessions.append(skey, [assistant])
        if turn.nudged or not turn.offers_final or resp.finish_reason == CUT_SHORT:
            return self._plain(turn.last_text, step, turn.called)
        turn.nudged = True
        nudge = f"{NUDGE}\n\n{runtime_block(msg, turn.tz, self._clock())}"
        turn.messages.append({"role": "user", "content": nudge})
        return None

    async def _call_tools(
        self, skey: ChatKey, turn: _TurnState, resp: LLMResponse
    ) -> list[ToolResult]:
        """Runs the response's calls, then stores it with their results before the next
        step: a crash mid-turn leaves an honest history."""
        assistant = _assistant_with_calls(resp)
        turn.messages.append(assistant)
        results = await self.execute_calls(resp.tool_calls, turn.ctx, turn.effects)
        results = _one_answer(_withhold_beside_failure(results))
        turn.called += [r.name for r in results]
        tool_msgs = [await self._tool_message(r, turn.ctx, turn.session_id) for r in results]
        turn.messages.extend(tool_msgs)
        await self._sessions.append(skey, [assistant, *tool_msgs])
        return results

    def _final_outcome(
        self,
        msg: InboundMessage,
        turn: _TurnState,
        resp: LLMResponse,
        results: list[ToolResult],
        step: int,
    ) -> TurnOutcome | None:
        """The first valid final_result ends the turn with its answer (an invalid one
        beside it does not count against the model); the second invalid one
        falls back to the model's text rather than loop on it. None: the loop goes on
        (also after an answer withheld because a tool beside it failed: not the model's
        answer's fault, so no contract failure)."""
        finals = [r for r in results if r.name == FINAL_RESULT]
        final = next((r for r in finals if not r.is_error), None)
        if final is not None:
            args = final.arguments
            return TurnOutcome(
                answer=str(args["answer"]),
                structured_data=args.get("structured_data"),
                next_actions=tuple(str(a) for a in args.get("next_actions") or ()),
                steps=step,
                tool_calls=tuple(turn.called),
            )
        if not finals or any(r.content.startswith(NOT_DELIVERED) for r in finals):
            return None
        turn.contract_failures += 1
        if turn.contract_failures < 2:
            return None
        answer = _raw_answer(resp) or turn.last_text
        log.warning("final_result invalid twice in %s; falling back to the model's text", msg.key)
        return TurnOutcome(
            answer=answer or "Sorry, I could not put my answer together. Please try again.",
            steps=step,
            fallback=True,
            tool_calls=tuple(turn.called),
        )

    def _out_of_steps(self, msg: InboundMessage, turn: _TurnState) -> TurnOutcome:
        """``max_steps`` ran out: the user is told so, with the model's latest text."""
        log.warning("turn in %s hit max_steps=%d", msg.key, self._max_steps)
        note = f"I stopped after {self._max_steps} steps without finishing the task."
        last_text = turn.last_text
        answer = f"{note}\n\n{last_text}" if last_text else f"{note} Please try rephrasing it."
        return TurnOutcome(
            answer=answer, steps=self._max_steps, fallback=True, tool_calls=tuple(turn.called)
        )

    async def _ask(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        sink: AnswerSink | None,
    ) -> LLMResponse:
        if sink is None or self._streaming is None:
            return await self._model.complete(messages, tools)
        resp = await self._streaming.stream(messages, tools, sink)
        _show_tools(sink, resp)  # they run next
        return resp

    def _plain(self, text: str, step: int, called: list[str]) -> TurnOutcome:
        if not text:
            return TurnOutcome(
                answer="Sorry, I have no answer to that. Please try rephrasing it.",
                steps=step,
                fallback=True,
                tool_calls=tuple(called),
            )
        return TurnOutcome(answer=text, steps=step, tool_calls=tuple(called))

    async def execute_calls(
        self, calls: Sequence[ToolCall], ctx: ToolContext, effects: list[Effect] | None = None
    ) -> list[ToolResult]:
        """Consecutive concurrency-safe calls run together; the rest one at a time, in order,
        each that acted noted in ``effects`` as it returns (see bot/agent/effects.py).
        Calls past ``max_tool_calls`` are answered with an Error and never run: one
        response must not fan out into thousands of executions or requests."""
        over = [_refused(c, self._max_tool_calls) for c in calls[self._max_tool_calls :]]
        calls = calls[: self._max_tool_calls]
        results: list[ToolResult] = []
        batch: list[ToolCall] = []

        async def flush() -> None:
            if len(batch) == 1:  # most responses make one call: no task and gather for it
                results.append(await self._tools.execute(batch[0], ctx))
            elif batch:
                results.extend(await asyncio.gather(*(self._tools.execute(c, ctx) for c in batch)))
            batch.clear()

        for call in calls:
            if self._tools.concurrency_safe(call.name):
                batch.append(call)
                continue
            await flush()
            queued = len(ctx.outgoing)  # a file queued for the answer goes only with it
            result = await self._tools.execute(call, ctx)
            results.append(result)
            if effects is not None and not result.is_error and len(ctx.outgoing) == queued:
                effects.append(Effect.of(result))
        await flush()
        return results + over

    async def _tool_message(self, result: ToolResult, ctx: ToolContext, sid: int) -> dict[str, Any]:
        """Offloaded before it is stored, so the stored message holds the reference; both
        writes need valid UTF-8, which tool output (``json.loads`` of junk) may not be."""
        content = await self.offload.normalize(
            neutralize(valid_unicode(result.content)),
            workspace=ctx.workspace or self._workspaces.path(),
            session_id=sid,
            call_id=result.call_id,
            exempt=self._tools.offload_exempt(result.name),
        )
        return _tool_message(replace(result, content=content, name=valid_unicode(result.name)))


def _assistant_with_calls(resp: LLMResponse) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": resp.content,
        "tool_calls": [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": _raw_args(c.arguments)},
            }
            for c in resp.tool_calls
        ],
    }


def _show_tools(sink: AnswerSink, resp: LLMResponse) -> None:
    """The preview says which tools run (not final_result: its answer is the preview).
    Tools called beside final_result run as the turn ends: its answer stays on screen
    rather than giving way to a status line that the same answer then replaces."""
    if any(c.name == FINAL_RESULT for c in resp.tool_calls):
        return
    names = tuple(c.name for c in resp.tool_calls if isinstance(c.name, str))
    if names:
        sink.tools_running(names)


def _withhold_beside_failure(results: list[ToolResult]) -> list[ToolResult]:
    """A valid final_result beside a call that failed in the same response is not
    delivered: its answer was written before the model saw the failure (\"Done! I'll
    remind you\" beside a reminder refused). Its result says why, so the next step
    answers knowing the error; beside calls that all succeeded it stands, and the turn
    ends in one model call as before."""
    failed = next((r for r in results if r.is_error and r.name != FINAL_RESULT), None)
    if failed is None:
        return results
    return [
        replace(r, content=_not_delivered(failed), is_error=True)
        if r.name == FINAL_RESULT and not r.is_error
        else r
        for r in results
    ]


def _one_answer(results: list[ToolResult]) -> list[ToolResult]:
    """The first valid final_result of a response is its answer; any other valid one is
    not delivered, and its result says so. Each was acknowledged "delivered" while only
    the first reached the user, and the history told the model otherwise."""
    valid = [i for i, r in enumerate(results) if r.name == FINAL_RESULT and not r.is_error]
    late = set(valid[1:])
    return [
        replace(r, content=ONE_ANSWER, is_error=True) if i in late else r
        for i, r in enumerate(results)
    ]


def _not_delivered(failed: ToolResult) -> str:
    """The withheld final_result's result: which call failed, and its error's first line."""
    error = failed.content.removeprefix("Error: ").strip()
    error = (error.splitlines() or [""])[0][:300]
    name = failed.name or "a tool call"
    return f"{NOT_DELIVERED}{name} failed: {error}; answer again, knowing this."


def _refused(call: ToolCall, cap: int) -> ToolResult:
    name = call.name if isinstance(call.name, str) else ""
    text = (
        f"Error: not run: one response may make at most {cap} tool calls; "
        "call the rest in your next step if you still need them."
    )
    return ToolResult(call_id=call.id, name=name, content=f"{text}\n\n{ERROR_HINT}", is_error=True)


def _raw_args(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False)


def _tool_message(result: ToolResult) -> dict[str, Any]:
    return {
        "role": "tool",
        "tool_call_id": result.call_id,
        "name": result.name,
        "content": label_tool_output(result.name, result.content),
    }


def _raw_answer(resp: LLMResponse) -> str:
    """The answer text the model tried to give in a final_result that failed validation
    (valid Unicode: half an emoji sent as an escape would fail the answer's outbox row)."""
    for call in resp.tool_calls:
        if call.name != FINAL_RESULT:
            continue
        args = call.arguments
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except ValueError:
                continue
        answer = args.get("answer") if isinstance(args, dict) else None
        if isinstance(answer, str):
            return valid_unicode(answer.strip())
    return ""
