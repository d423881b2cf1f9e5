"""Tool-result offload: a huge tool output goes to a file, the message keeps a reference.

One big result (a file read, a raw API dump) would otherwise fill the window on every
later step and turn. It is written to ``<workspace>/tool-results/<session>-<call>.txt``
when the tool returns, before the message is stored, so the stored history holds the
reference plus a head/tail excerpt and stays small. Exempt tools (``final_result`` and
those whose class sets ``offload_exempt``) are never offloaded. The files of a session
are removed with it (:meth:`ToolResultOffload.remove_session`, a clear hook).
"""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
from datetime import datetime
from pathlib import Path

from bot.messages import ChatKey
from bot.oldfiles import remove_written_before

log = logging.getLogger(__name__)

RESULTS_DIR = "tool-results"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def omission(count: int, why: str = "omitted") -> str:
    return f"\n… [{count} characters {why}] …\n"


def head_tail(text: str, max_chars: int, why: str = "omitted") -> str:
    """At most ``max_chars`` characters: the start and the end, with the cut marked.
    Errors and totals tend to sit at the end of an output, so the tail is kept too."""
    if len(text) <= max_chars:
        return text
    marker = omission(len(text), why)  # an upper bound on the marker's own length
    room = max(0, max_chars - len(marker))
    head = room * 2 // 3
    tail = room - head
    kept_tail = text[len(text) - tail :] if tail else ""
    return text[:head] + omission(len(text) - head - tail, why) + kept_tail


class ToolResultOffload:
    """Writes oversized tool results under each workspace's ``tool-results`` folder."""

    def __init__(self, workspaces_root: Path, threshold: int) -> None:
        self.root = workspaces_root
        self.threshold = threshold

    def path_for(self, workspace: Path, session_id: int, call_id: str) -> Path:
        safe = _UNSAFE.sub("_", call_id)[:64] or "call"
        return workspace / RESULTS_DIR / f"{session_id}-{safe}-{uuid.uuid4().hex[:8]}.txt"

    async def normalize(
        self,
        content: str,
        *,
        workspace: Path,
        session_id: int,
        call_id: str,
        exempt: bool,
    ) -> str:
        """The content to store for a tool result: itself, or a reference and excerpt."""
        if exempt or len(content) <= self.threshold:
            return content
        path = self.path_for(workspace, session_id, call_id)
        try:
            await asyncio.to_thread(_write, path, content)
        except OSError as exc:
            log.warning("cannot offload a tool result to %s: %s; truncating it", path, exc)
            return head_tail(content, self.threshold)
        excerpt = head_tail(content, self.threshold * 3 // 8)
        return (
            f"[Full output ({len(content)} characters) saved to {path.resolve()}; "
            f"below are its start and end.]\n{excerpt}"
        )

    def remove_session(self, session_id: int, key: ChatKey) -> None:
        """Delete every offloaded result of a session, in every workspace (a clear hook)."""
        removed = 0
        for path in self.root.glob(f"*/{RESULTS_DIR}/{session_id}-*.txt"):
            try:
                path.unlink()
                removed += 1
            except FileNotFoundError:
                continue
        if removed:
            log.info("removed %d offloaded tool results of session %d", removed, session_id)

    def remove_older_than(self, cutoff: datetime) -> int:
        """Delete offloaded results last written before ``cutoff`` (housekeeping)."""
        return remove_written_before(self.root.glob(f"*/{RESULTS_DIR}/*.txt"), cutoff)


def _write(path: Path, content: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(content, encoding="utf-8")
    tmp.replace(path)
