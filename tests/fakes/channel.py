"""An in-process channel that records what the daemon sends (errbot's test backend idea)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from bot.errors import ChannelError
from bot.messages import Attachment, ChatKey, InboundMessage, MessageKind, OutboundMessage
from channels.base import PutInbound, Sent
from tests.fakes.waiting import STEP_S


class FakeChannel:
    name = "test"
    trusted = True

    def __init__(self, name: str = "test", *, trusted: bool = True) -> None:
        self.name = name
        self.trusted = trusted
        self.sent: list[OutboundMessage] = []
        self.put_inbound: PutInbound | None = None
        self._changed = asyncio.Condition()
        self.fail_sends = 0

    @property
    def connected(self) -> bool:
        return self.put_inbound is not None

    async def start(self, put_inbound: PutInbound) -> None:
        self.put_inbound = put_inbound

    async def stop(self) -> None:
        self.put_inbound = None

    async def typing(self, key: ChatKey, message_id: str | None = None) -> None:
        return None

    async def send(self, msg: OutboundMessage) -> Sent:
        async with self._changed:
            self.sent.append(msg)
            self._changed.notify_all()
        return Sent((f"sent-{len(self.sent)}",))

    async def say(
        self,
        text: str,
        *,
        chat: str = "c1",
        user: str = "u1",
        thread: str | None = None,
        message_id: str | None = None,
        kind: MessageKind = MessageKind.USER,
        user_name: str = "",
        direct: bool = True,
        attachments: tuple[Attachment, ...] = (),
    ) -> InboundMessage:
        assert self.put_inbound is not None, "channel not started"
        extra = {"message_id": message_id} if message_id else {}
        msg = InboundMessage(
            key=ChatKey(self.name, chat, thread),
            user_id=user,
            text=text,
            kind=kind,
            user_name=user_name,
            direct=direct,
            attachments=attachments,
            **extra,  # type: ignore[arg-type]
        )
        await self.put_inbound(msg)
        return msg

    def replies_to(self, msg: InboundMessage) -> list[OutboundMessage]:
        return [m for m in self.sent if m.reply_to == msg.message_id]

    async def wait_for(
        self, predicate: Callable[[list[OutboundMessage]], bool], timeout: float = STEP_S
    ) -> list[OutboundMessage]:
        async def _wait() -> None:
            async with self._changed:
                await self._changed.wait_for(lambda: predicate(self.sent))

        await asyncio.wait_for(_wait(), timeout)
        return self.sent

    async def reply(self, msg: InboundMessage, timeout: float = STEP_S) -> OutboundMessage:
        """The final reply to ``msg`` (waits for it)."""
        await self.wait_for(lambda sent: any(m.reply_to == msg.message_id for m in sent), timeout)
        return self.replies_to(msg)[-1]

    async def ask(self, text: str, timeout: float = STEP_S, **kw: object) -> OutboundMessage:
        msg = await self.say(text, **kw)  # type: ignore[arg-type]
        return await self.reply(msg, timeout)


class FileChannel(FakeChannel):
    """A FakeChannel that hands over files users sent and takes files the bot sends."""

    def __init__(self, name: str = "test", *, trusted: bool = True) -> None:
        super().__init__(name, trusted=trusted)
        self.files: dict[str, bytes] = {}
        self.downloads: list[str] = []
        self.uploads: list[tuple[ChatKey, str, bytes, str]] = []
        self.max_upload_bytes = 10_000_000
        self.fail_uploads: set[str] = set()  # names whose next upload fails (once each)

    def add_file(self, file_id: str, data: bytes) -> None:
        self.files[file_id] = data

    async def download(self, file_id: str) -> bytes:
        self.downloads.append(file_id)
        if file_id not in self.files:
            raise ChannelError(f"no file {file_id}")
        return self.files[file_id]

    def upload_limit(self) -> int:
        return self.max_upload_bytes

    async def upload(self, key: ChatKey, name: str, data: bytes, caption: str = "") -> Sent:
        if name in self.fail_uploads:
            self.fail_uploads.discard(name)
            raise ChannelError(f"upload of {name} failed")
        async with self._changed:
            self.uploads.append((key, name, data, caption))
            self._changed.notify_all()
        return Sent((f"file-{len(self.uploads)}",))
