"""Per-chat order through retries: a chat's later replies wait behind one that failed.

A failed send is retried later from a timer, which frees its chat's send lane at once;
without a hold the chat's next reply would be posted first (an answer above the one it
follows, or between the parts of a long one). While a reply waits for its retry, the
replies of its chat reaching the lane are held here, in order, and go (one by one, in
that lane) once it is through: sent, given up, or left to the replica that took the chat.
Other chats never wait.
"""

from __future__ import annotations

from collections import deque

from bot.messages import ChatKey, OutboundMessage


class HeldBehind:
    """Per chat, the reply waiting for its retry first, then the replies held behind it."""

    def __init__(self) -> None:
        self._chats: dict[ChatKey, deque[OutboundMessage]] = {}

    def __contains__(self, key: ChatKey) -> bool:
        return key in self._chats

    def hold(self, msg: OutboundMessage) -> bool:
        """Whether ``msg`` must wait (it is then kept here): another reply of its chat
        waits for its retry."""
        queue = self._chats.get(msg.key)
        if queue is None or queue[0].delivery_key == msg.delivery_key:
            return False
        queue.append(msg)
        return True

    def retrying(self, msg: OutboundMessage) -> None:
        """``msg`` failed and waits for its retry: its chat's next replies wait too."""
        self._chats.setdefault(msg.key, deque([msg]))

    def through(self, msg: OutboundMessage) -> OutboundMessage | None:
        """``msg`` is through; the next reply held in its chat, if any, now first."""
        queue = self._chats.get(msg.key)
        if queue is None or queue[0].delivery_key != msg.delivery_key:
            return None
        queue.popleft()
        if not queue:
            del self._chats[msg.key]
            return None
        return queue[0]
