"""What each streamed preview message shows now, so a final that would change nothing
is not sent as one more edit.

The preview's last successful post or edit is remembered per message id; when the
final answer's first part is that very text (and renders no differently), the message
already is the answer and the edit is skipped: one call fewer against the chat's rate
limit (Telegram would only answer "message is not modified"). In memory and bounded:
after a restart, or for a message no longer remembered, the final is edited in as before.
"""

from __future__ import annotations

from bot.lru import LRU
from bot.messages import ChatKey

KEPT = 1_000  # previews being written at once, at most, across every chat of a channel


class ShownPreviews:
    """Keyed by chat and message id: Telegram numbers each chat's messages on its own."""

    def __init__(self, size: int = KEPT) -> None:
        self._texts: LRU[tuple[str, str], str] = LRU(size)

    def showing(self, key: ChatKey, message_id: str, text: str) -> None:
        """The preview now shows ``text`` (a post or an edit the platform accepted)."""
        self._texts[key.chat_id, message_id] = text

    def forget(self, key: ChatKey, message_id: str) -> None:
        self._texts.pop((key.chat_id, message_id))

    def already(self, key: ChatKey, message_id: str, text: str) -> bool:
        """True, once, when the preview shows exactly ``text``: the final's edit is
        needless. Either way the entry goes (the final is the message's last text)."""
        return self._texts.pop((key.chat_id, message_id)) == text
