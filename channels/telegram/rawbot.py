"""The Bot the Telegram adapter talks through: PTB's, with two leaner calls."""

from __future__ import annotations

from typing import Any

from telegram import Bot


class RawBot(Bot):
    """A Bot with two calls that skip PTB's parsing of the answer into objects.

    - getUpdates returns raw dicts, so each update is parsed on its own and one that PTB
      cannot read (a newer API shape) is skipped instead of failing the batch.
    - sendMessage returns only the sent message's id. Parsing the answer into a Message
      (its chat, sender, entities and the message it replies to) was about a third of a
      send's CPU, and only the id was ever read.

    Both go through ``Bot._post``, so the defaults, the request layer and its mapping of
    errors (BadRequest, RetryAfter, Forbidden, ...) stay PTB's own.
    """

    async def raw_updates(self, params: dict[str, Any], read_timeout: float) -> Any:
        return await self._post("getUpdates", params, read_timeout=read_timeout)

    async def send_text(self, **params: Any) -> str:
        """sendMessage with ``params`` as the Bot API names them; the new message's id."""
        result = await self._post("sendMessage", params)
        return str(result["message_id"])

    async def edit_text(self, **params: Any) -> None:
        """editMessageText with ``params`` as the Bot API names them (answer not parsed)."""
        await self._post("editMessageText", params)
