"""Who said each earlier message of a group conversation.

In a group (a group chat, a channel, a thread of one) several people talk to the bot in
one session, but only the newest message named its sender (the runtime block's
``User:`` line): the history was unattributed words, so after "I am vegetarian" from
one person and "what should I order?" from another, the model took both as one
person's. A group message is stored with its speaker (the ``User:``
line's form) and sent with a ``[said by: ...]`` line in front; a user's text that
imitates that line is quoted like every other imitation (bot/agent/forgery.py).
"""

from __future__ import annotations

from typing import Any

from bot.agent.forgery import neutralize
from bot.messages import InboundMessage, MessageKind

# On a stored user message, who wrote it (groups only): the column a tool result keeps
# its tool name in, so both backends store it as they are (no migration).
SPEAKER_KEY = "name"


def speaker_of(msg: InboundMessage) -> str | None:
    """The speaker to store with ``msg``: a person's message in a group; else None."""
    if msg.direct or msg.kind is MessageKind.SCHEDULED:
        return None
    user = " ".join(msg.user_id.split())
    name = " ".join(msg.user_name.split())
    return neutralize(f"{user} ({name})" if name else user)


def said_by(form: dict[str, Any]) -> dict[str, Any]:
    """A user message's sent form with its speaker's line in front, the key dropped."""
    speaker = form.get(SPEAKER_KEY)
    if not isinstance(speaker, str):
        return form
    sent = {k: v for k, v in form.items() if k != SPEAKER_KEY}
    if isinstance(sent.get("content"), str):
        sent["content"] = f"[said by: {speaker}]\n{sent['content']}"
    return sent
