"""Chats to partitions: a fixed number of them, each one lease.

crc32, not ``hash()``: Python salts string hashes per process, and every replica must
put a chat in the same partition.
"""

from __future__ import annotations

import zlib

from bot.messages import ChatKey

PREFIX = "chats:"


def partition_of(key: ChatKey, count: int) -> int:
    raw = f"{key.channel}\0{key.chat_id}\0{key.thread_id or ''}".encode()
    return zlib.crc32(raw) % count


def lease_name(partition: int) -> str:
    return f"{PREFIX}{partition}"


def partition_in(lease: str) -> int | None:
    """The partition a lease name stands for (None: not a chat partition's lease)."""
    if not lease.startswith(PREFIX):
        return None
    return int(lease[len(PREFIX) :])
