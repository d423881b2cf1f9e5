"""Files in Slack: what users share (``files.info``, then ``url_private`` fetched with the
bot token) and what the bot posts (the external upload flow through slack_sdk's
``files_upload_v2``: ``files.getUploadURLExternal``, the upload, then
``files.completeUploadExternal``).

The bot token travels only to Slack's own file host (or the configured API host, a
test's fake): a ``url_private`` pointing anywhere else is refused, never fetched with it.
The app needs the ``files:read`` scope to read files and ``files:write`` to post them.
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

import aiohttp
from slack_sdk.errors import SlackApiError, SlackRequestError
from slack_sdk.web.async_client import AsyncWebClient

from bot.errors import ChannelError
from bot.messages import ChatKey
from channels.base import Sent
from channels.slack.mrkdwn import to_mrkdwn
from channels.slack.send import api_error

log = logging.getLogger(__name__)

FILE_HOSTS = frozenset({"files.slack.com"})
MAX_UPLOAD_BYTES = 1_000_000_000  # Slack's limit for one file


class SlackFiles:
    def __init__(self, client: AsyncWebClient, token: str, api_url: str) -> None:
        self._client = client
        self._token = token
        self._hosts = FILE_HOSTS | {urlsplit(api_url).netloc}

    async def download(self, file_id: str) -> bytes:
        """A shared file's bytes: its ``url_private`` as files.info gives it."""
        try:
            info = await self._client.files_info(file=file_id)
        except SlackApiError as exc:
            raise api_error(exc, f"files.info for {file_id}") from exc
        file = info.get("file") or {}
        url = str(file.get("url_private_download") or file.get("url_private") or "")
        if urlsplit(url).netloc not in self._hosts:
            raise ChannelError(f"Slack file {file_id}: not fetched from {urlsplit(url).netloc!r}")
        headers = {"Authorization": f"Bearer {self._token}"}
        html = str(file.get("mimetype") or "").lower() == "text/html"  # the file is a page
        try:
            async with (
                aiohttp.ClientSession() as session,
                session.get(url, headers=headers, allow_redirects=False) as resp,
            ):
                if resp.status != 200 or (resp.content_type == "text/html" and not html):
                    # Slack answers a missing files:read scope with its sign-in page.
                    raise ChannelError(
                        f"Slack file {file_id}: HTTP {resp.status} {resp.content_type} "
                        "(does the app have the files:read scope?)"
                    )
                return await resp.read()
        except aiohttp.ClientError as exc:
            raise ChannelError(f"Slack file {file_id} unavailable: {exc}") from exc

    async def upload(self, key: ChatKey, name: str, data: bytes, caption: str = "") -> Sent:
        """Post ``data`` as a file into the chat and thread of ``key``."""
        try:
            resp = await self._client.files_upload_v2(
                channel=key.chat_id,
                thread_ts=key.thread_id,
                file=data,
                filename=name,
                title=name,
                initial_comment=to_mrkdwn(caption) if caption.strip() else None,
            )
        except SlackApiError as exc:
            raise api_error(exc, f"the upload of {name}") from exc
        except (SlackRequestError, aiohttp.ClientError) as exc:
            raise ChannelError(f"Slack upload of {name} failed: {exc}") from exc
        files = resp.get("files") or []
        return Sent(tuple(str(f.get("id")) for f in files if isinstance(f, dict)))
