"""One turn's preview: the answer so far, shown in one message, edited at a pace.

The rules, from the peers' bugs (see docs in the README's streaming section):

- At most one preview call per ``interval`` in a chat (1 s in DMs, 3 s in groups), and
  the first one no sooner than one interval into the turn: an answer ready within it is
  sent once, with no preview. Latest text wins: nothing is queued; when the time comes
  the answer is read (parsed) once and shown whole.
- One call in flight at a time. :meth:`PreviewStream.finish` closes the stream, cancels
  the next scheduled call and waits for the one in flight before the final answer is
  queued: the closed flag is the generation check every call passes before it starts,
  so no preview edit can land after (and over) the final. Among replicas the check
  also asks whether this replica still runs the chat, right before each call: one
  frozen past its lease and resumed must not edit its stale text over the answer the
  replica that took the chat over gave.
- The preview's message id is saved (:class:`bot.store.base.Previews`) right after the
  post and before any edit. A turn replayed after a crash adopts it (edits it, then the
  final replaces it); once the final is on its way (``final``), a replay shows no preview.
- No preview is posted while an earlier reply to the chat is still being delivered
  (``delivering``: a part of the last answer waiting for its retry): it would land above
  that reply. It is looked at again an interval later; the answer may come whole.
- A rate limit pauses this chat's previews (:class:`.pauses.ChatPauses`); after
  ``max_failures`` failed calls the turn stops previewing and the final comes alone.
  A preview someone deleted (``PreviewGone``) stops previews at the first refusal.
- A person who stops the stream with the platform's own control (``PreviewStopped``, a
  stop button) ends the turn as their /stop would (``on_stopped``); what was shown stays.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from bot.agent.llm.response import AnswerReader
from bot.errors import PreviewGone, PreviewRateLimited, PreviewStopped
from bot.messages import ChatKey
from bot.store.base import Previews
from bot.store.previews import PreviewRecord
from bot.streaming.pauses import ChatPauses
from bot.streaming.status import status_line
from channels.base import SupportsPreview

log = logging.getLogger(__name__)

FINISH_WAIT_S = 10.0  # the most the final waits for a preview call in flight


@dataclass(frozen=True, slots=True)
class PreviewPlan:
    """Where and how fast one turn previews."""

    key: ChatKey
    reply_to: str | None
    interval: float
    min_chars: int
    limit: int
    max_failures: int


class PreviewStream:
    """The :class:`bot.agent.llm.response.AnswerSink` of one turn."""

    def __init__(
        self,
        channel: SupportsPreview,
        plan: PreviewPlan,
        *,
        turn: str,
        previews: Previews,
        pauses: ChatPauses,
        record: PreviewRecord | None = None,
        clock: Callable[[], float] = time.monotonic,
        runs: Callable[[ChatKey], bool] = lambda _key: True,
        on_stopped: Callable[[], None] = lambda: None,
        shows: bool = True,
        delivering: Callable[[ChatKey], bool] = lambda _key: False,
    ) -> None:
        self._delivering = delivering  # an earlier reply to the chat is not out yet
        # False: streaming is off now; this turn only finishes (or deletes) the preview an
        # earlier run left, and its model call is not streamed.
        self.shows = shows
        self._channel = channel
        self._runs = runs
        self._on_stopped = on_stopped  # ends the turn: the person stopped the stream
        self.stopped_in_chat = False
        self._plan = plan
        self._turn = turn
        self._previews = previews
        self._pauses = pauses
        self._clock = clock
        self.message_id = record.message_id if record is not None else None
        self._final_saved = record is not None and record.final
        self._closed = self._final_saved or not shows  # the final is on its way: hands off
        self._reader: AnswerReader | None = None
        self._status: str | None = None
        self._dirty = False
        self._shown: str | None = None
        self._full = False  # the text reached the length limit: shown cut, left alone
        self._next_at = clock() + plan.interval
        self._timer: asyncio.TimerHandle | None = None
        self._task: asyncio.Task[None] | None = None
        self.failures = 0
        self.calls = 0  # preview calls made (posts and edits)

    # -- AnswerSink ------------------------------------------------------------------

    def answer_grew(self, read: AnswerReader) -> None:
        self._reader = read
        self._status = None
        self._poke()

    def tools_running(self, names: tuple[str, ...]) -> None:
        self._status = status_line(names)
        self._poke()

    # -- pacing ----------------------------------------------------------------------

    def _poke(self) -> None:
        self._dirty = True
        if self._closed or self._full or self._timer is not None or self._task is not None:
            return  # a call in flight looks again when it ends
        due = max(self._next_at, self._pauses.until(self._plan.key))
        loop = asyncio.get_running_loop()
        self._timer = loop.call_at(loop.time() + max(0.0, due - self._clock()), self._fire)

    def _fire(self) -> None:
        self._timer = None
        if not self._closed:
            self._task = asyncio.create_task(self._show(), name=f"preview:{self._plan.key}")

    async def _show(self) -> None:
        try:
            self._dirty = False
            if self.message_id is None and self._delivering(self._plan.key):
                self._dirty = True  # not posted above it: looked at again an interval on
                self._next_at = self._clock() + self._plan.interval
            else:
                await self._show_text()
        finally:
            self._task = None
        if self._dirty:
            self._poke()

    async def _show_text(self) -> None:
        text = self._text()
        if text is None or text == self._shown or self._closed:
            return
        if not self._runs(self._plan.key):  # its lease moved on: hands off
            self._stop()
            return
        started = self._clock()
        await self._call(text)
        self._next_at = max(self._next_at, started + self._plan.interval)

    def _text(self) -> str | None:
        """What to show now; None while there is too little answer for a preview. That
        holds whenever the text does not continue what is shown, not only at first: an
        answer replacing a status line or a retry's half answer would shrink it to a
        fragment ("You"), so the shown text stays until the new one has ``min_chars``."""
        if self._status is not None:
            text = self._status
        elif self._reader is not None:
            text = self._reader().strip()
            shown = self._shown
            if len(text) < self._plan.min_chars and not (shown and text.startswith(shown)):
                return None
        else:
            return None
        if len(text) > self._plan.limit:
            text = text[: self._plan.limit].rstrip()
            self._full = True
        return text or None

    async def _call(self, text: str) -> None:
        plan = self._plan
        self.calls += 1
        try:
            if self.message_id is None:
                self.message_id = await self._channel.post_preview(plan.key, text, plan.reply_to)
                await self._save()
            else:
                await self._channel.edit_preview(plan.key, self.message_id, text)
            self._shown = text
            return
        except PreviewRateLimited as exc:
            self._pauses.pause(plan.key, exc.retry_after)
            log.info("previews in %s paused %.1f s (rate limit)", plan.key, exc.retry_after)
        except PreviewGone as exc:  # deleted in the chat: no edit can succeed any more
            log.info("preview in %s is gone (%s); the answer comes whole", plan.key, exc)
            self._closed = True
            return
        except PreviewStopped as exc:
            log.info("answer in %s stopped in the chat (%s); its turn ends", plan.key, exc)
            self._closed = self.stopped_in_chat = True
            self._on_stopped()
            return
        except Exception as exc:  # cosmetic: the final answer still arrives
            log.warning("preview in %s failed: %s", plan.key, exc)
        self.failures += 1
        if self.failures >= plan.max_failures:
            log.warning(
                "previews in %s failed %d times; the answer comes whole", plan.key, self.failures
            )
            self._closed = True

    async def _save(self) -> None:
        """Durable before the first edit: a run that dies now leaves an id the next run
        finishes, not an orphan. If it cannot be saved the preview is edited no more."""
        assert self.message_id is not None
        try:
            await self._previews.save(self._turn, self._plan.key, self.message_id)
        except Exception:
            log.exception("preview id in %s could not be saved; no more edits", self._plan.key)
            self._full = True

    # -- the end ---------------------------------------------------------------------

    async def finish(self) -> str | None:
        """Stop previewing, wait for the call in flight, mark the preview final; the id
        the final answer replaces in place (None: no preview, post the answer)."""
        self._stop()
        task = self._task
        if task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(task), FINISH_WAIT_S)
            except TimeoutError:
                task.cancel()
                log.warning("a preview call in %s hung; the final goes without it", self._plan.key)
        if self.message_id is not None and not self._final_saved:
            try:
                await self._previews.finalize(self._turn)
                self._final_saved = True
            except Exception:  # the final carries the id anyway; a replay may edit once
                log.exception("preview in %s could not be marked final", self._plan.key)
        return self.message_id

    async def abandon(self) -> None:
        """The turn stopped without an answer (shutdown): the preview stays, and the
        replayed turn adopts it from the store."""
        self._stop()
        task = self._task
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def discard(self) -> None:
        """The turn failed (a bug; the dispatcher apologizes and may replay it): the half
        answer is deleted rather than left beside the apology. A replay that adopts the
        id finds it gone and its final is posted new."""
        await self.abandon()
        # A replica that no longer runs the chat (frozen past its lease, its turn fenced
        # off) leaves the message alone: the one that took the chat over has adopted it.
        if self.message_id is not None and self._runs(self._plan.key):
            try:
                await self._channel.delete_preview(self._plan.key, self.message_id)
            except Exception as exc:  # cosmetic: at worst the half answer stays
                log.warning("preview in %s could not be deleted: %s", self._plan.key, exc)

    def _stop(self) -> None:
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
