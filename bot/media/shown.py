"""The images of the latest turns, put into the request as data URLs right before a
model call; the ``media`` key of stored messages never reaches a provider.

An image goes to the provider as its bytes (a data URL), never as the platform's file
URL, which would hand the bot's token to the provider. Only the images of the latest
``keep_images_turns`` user messages are sent; an older one stays as its attachment
line, so a chat with many photos does not carry them all on every request. Those
messages are counted as stored, before the governor runs: it merges the user messages
of turns that got no answer (a model call that failed) into one, and counted on that
merge a picture the provider refused stayed "the latest turn" and was sent again with
every later message, each refused in turn. The governor then counts each image still
attached at a fixed cost (budget.py), and none it will not send.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import mimetypes
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bot.media.entries import MEDIA_KEY, seen_images
from bot.media.files import MediaFiles

log = logging.getLogger(__name__)

_CACHED = 4  # data URLs kept: the steps of a turn send the same images again
_REFUSED = 256  # pictures remembered as refused by the provider (paths; oldest forgotten)
NOT_SHOWN = "[picture not shown: the model's provider refused it]"


def data_url(data: bytes, mime: str, name: str = "") -> str:
    if not mime.startswith("image/"):
        mime = mimetypes.guess_type(name)[0] or "image/jpeg"
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


class ImageParts:
    def __init__(self, files: MediaFiles | None, keep_turns: int) -> None:
        self._files = files
        self._keep_turns = keep_turns
        self._urls: OrderedDict[str, str] = OrderedDict()
        self._refused: OrderedDict[str, None] = OrderedDict()

    def refuse(self, messages: list[dict[str, Any]], sent: list[dict[str, Any]]) -> bool:
        """Remember the pictures of ``messages`` that went out in ``sent`` (their request
        as made of them), which the provider refused (HTTP 400: a damaged or unsupported
        picture, one over its limits), so they are never sent again: the turn is asked
        once more without them, and so is every later one, which would otherwise be
        refused the same way while the picture is recent. False when ``sent`` held no
        picture (the refusal is about something else)."""
        if not any(_images_in(message) for message in sent):
            return False
        for message in messages:
            for entry in seen_images(message):
                self._refused[str(entry["path"])] = None
                self._urls.pop(str(entry["path"]), None)
        while len(self._refused) > _REFUSED:
            self._refused.popitem(last=False)
        return True

    def recent(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``messages`` with the ``media`` entries of the latest ``keep_images_turns``
        user messages only (each older one without them, on a copy): what is counted
        and sent. ``messages`` itself when no older message has any."""
        turns = 0
        out: list[dict[str, Any]] | None = None
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            turns += message.get("role") == "user"
            if turns <= self._keep_turns or MEDIA_KEY not in message:
                continue
            if out is None:
                out = list(messages)
            out[index] = {k: v for k, v in message.items() if k != MEDIA_KEY}
        return messages if out is None else out

    async def shown(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``messages`` (as :meth:`recent` left them, then governed) as sent: their
        images as image parts, and no message carrying its ``media`` entries.
        Unchanged when none has any."""
        if not any(MEDIA_KEY in m for m in messages):
            return messages
        out: list[dict[str, Any]] = []
        for message in messages:
            if MEDIA_KEY not in message:
                out.append(message)
                continue
            bare = {k: v for k, v in message.items() if k != MEDIA_KEY}
            shown = [e for e in seen_images(message) if str(e["path"]) not in self._refused]
            parts = [await self._part(e) for e in shown]
            images = [p for p in parts if p is not None]
            text = bare.get("content")
            if len(shown) < len(seen_images(message)):
                text = f"{text or ''}\n{NOT_SHOWN}"
                bare["content"] = text
            if images:
                bare["content"] = [{"type": "text", "text": text or ""}, *images]
            out.append(bare)
        return out

    async def _part(self, entry: Mapping[str, Any]) -> dict[str, Any] | None:
        path = str(entry["path"])
        url = self._urls.get(path)
        if url is None:
            if self._files is None or not self._files.owns(Path(path)):
                return None
            try:
                data = await asyncio.to_thread(Path(path).read_bytes)
            except OSError as exc:  # removed by housekeeping or a /new meanwhile
                log.info("image %s not shown: %s", path, exc.strerror)
                return None
            url = data_url(data, str(entry.get("mime") or ""), str(entry.get("name") or ""))
            self._urls[path] = url
            if len(self._urls) > _CACHED:
                self._urls.popitem(last=False)
        self._urls.move_to_end(path)
        return {"type": "image_url", "image_url": {"url": url}}


def _images_in(message: dict[str, Any]) -> bool:
    """Whether ``message`` (as sent) carries an image part."""
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(part, dict) and part.get("type") == "image_url" for part in content
    )
