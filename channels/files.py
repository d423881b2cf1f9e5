"""Inbound attachments for tools: the bytes, from whichever channel the file came through."""

from __future__ import annotations

from collections.abc import Mapping

from bot.errors import ToolError
from channels.base import Channel, SupportsDownload


class ChannelFiles:
    """``FileAccess`` over the daemon's channels (those that can download)."""

    def __init__(self, channels: Mapping[str, Channel]) -> None:
        self._channels = channels

    async def download(self, channel: str, file_id: str) -> bytes:
        adapter = self._channels.get(channel)
        if not isinstance(adapter, SupportsDownload):
            raise ToolError(f"files sent through {channel} cannot be read")
        return await adapter.download(file_id)
