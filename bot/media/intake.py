"""What a turn makes of the files a user sent, before the message is stored.

Per attachment, in order: its kind (image, voice, audio, video, document) from the
platform's kind and type; whether it can be taken at all here (a model that sees or
describes, a transcription model, the size the platform declared against
``max_inbound_mb``: a file too large is never downloaded); the download through its
channel; the file kept under ``data/media/<session>/``; then what the model gets of it:
the image itself, a description, a voice note's transcript (which becomes the user's
message), or an audio file's transcript or a document's text (the file's content,
offloaded like a large tool result when it is long, its start inline): a song's lyrics
are not the user's words. Whatever could
not be taken is said to the user in a plain sentence before the answer; a message left
with nothing to answer is answered with those sentences alone, without a model call.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from bot.agent.llm.response import AnswerReader, AnswerSink
from bot.agent.toolbox import FileAccess
from bot.config.media import MediaSettings
from bot.documents import TEXT_SUFFIXES, UnreadableDocument, suffix_of
from bot.errors import BotError, MediaError
from bot.media.entries import Entry, size_text
from bot.media.files import MediaFiles
from bot.media.pictures import fit
from bot.media.reading import DocumentReader
from bot.media.transcribe import HOW_TO_CONFIGURE, Transcriber
from bot.media.vision import Vision
from bot.messages import WORDLESS, Attachment, InboundMessage

log = logging.getLogger(__name__)

CANNOT_SEE = (
    "I can't see images here: this model does not take pictures (an admin can set "
    '[media] vision = "on" for a model that does, or vision_model to one that describes them).'
)
QUOTE_CHARS = 120


def media_kind(att: Attachment) -> str:
    """image, voice, audio, video or document. A voice note (recorded in the app: the
    platform's kind says so) is the user speaking; any other audio is a file they send.
    A declared video/ type is believed only of a file whose name is not a source file's
    (TypeScript's .ts is declared video/mp2t)."""
    kind, mime = att.kind.lower(), att.mime_type.lower()
    if kind == "voice":  # whatever its declared type (a clip may be served as video/mp4)
        return "voice"
    if kind in ("video", "video_note", "animation"):
        return "video"
    if mime.startswith("video/") and suffix_of(att.name) not in TEXT_SUFFIXES:
        return "video"
    if kind == "audio" or mime.startswith("audio/"):
        return "audio"
    if kind == "photo" or (mime.startswith("image/") and mime != "image/svg+xml"):
        return "image"
    return "document"


def is_placeholder(text: str, attachments: Sequence[Attachment]) -> bool:
    """The text a channel made up for a message that had none (``[voice]``), bare; one
    under the channel's framing (a reply's quote) is marked ``WORDLESS`` instead."""
    if not attachments:
        return False
    first = attachments[0]
    made = {f"[{first.kind}]", f"[{first.kind}: {first.name}]", f"[file: {first.name}]"}
    made.add(f"[file: {first.file_id}]")
    return text.strip() in made or not text.strip()


def quote(transcript: str) -> str:
    """The one short line that shows the user what was heard."""
    line = " ".join(transcript.split())
    if len(line) > QUOTE_CHARS:
        line = line[: QUOTE_CHARS - 1].rstrip() + "…"
    return f'🎤 "{line}"'


@dataclass(frozen=True, slots=True)
class Taken:
    """The message as the model reads it, its entries, and what the user is told."""

    text: str
    entries: tuple[Entry, ...] = ()
    notes: tuple[str, ...] = ()
    heard: tuple[str, ...] = ()
    # The user wrote words of their own: not only the channel's made-up line and framing.
    said: bool = True

    @property
    def answerable(self) -> bool:
        """Something for the model: the user's words (written or heard), or an image or
        text made of a file; never the channel's framing of a file that was not taken."""
        made = any(e.get("see") or e.get("text") for e in self.entries)
        return (self.said and bool(self.text.strip())) or bool(self.heard) or made

    @property
    def preface(self) -> str:
        """Said before the answer: what was heard, then what could not be taken."""
        return "\n".join([*(quote(h) for h in self.heard), *self.notes])


@dataclass(slots=True)
class _One:
    """One attachment as it is being taken: where it came from and what it became."""

    msg: InboundMessage
    att: Attachment
    index: int
    entry: Entry
    note: str = ""
    heard: str = ""

    @property
    def shown(self) -> str:
        """How the user's reply names it."""
        return f'"{self.att.name}"' if self.att.name else f"the {self.entry['kind']}"


@dataclass(frozen=True, slots=True)
class Prefaced:
    """A streamed preview that starts with what the final answer starts with (what was
    heard, what could not be taken), so the text does not jump when the final lands."""

    sink: AnswerSink
    preface: str

    def answer_grew(self, read: AnswerReader) -> None:
        self.sink.answer_grew(lambda: f"{self.preface}\n\n{read()}")

    def tools_running(self, names: tuple[str, ...]) -> None:
        self.sink.tools_running(names)


class Offload(Protocol):
    """Where a long document's text goes (ToolResultOffload fits)."""

    async def normalize(
        self, content: str, *, workspace: Path, session_id: int, call_id: str, exempt: bool
    ) -> str: ...


class MediaIntake:
    def __init__(
        self,
        settings: MediaSettings,
        files: MediaFiles,
        download: FileAccess,
        *,
        vision: Vision,
        transcriber: Transcriber,
        reader: DocumentReader,
        offload: Offload,
    ) -> None:
        self._max_bytes = int(settings.max_inbound_mb * 1_000_000)
        self._max_mb = settings.max_inbound_mb
        self._keep_turns = settings.keep_images_turns
        self.files = files
        self._download = download
        self._vision = vision
        self._transcriber = transcriber
        self._reader = reader
        self._offload = offload

    async def take(self, msg: InboundMessage, session_id: int, workspace: Path) -> Taken:
        """Every attachment of ``msg`` taken in order (see the module docstring)."""
        ones = [
            await self._take_one(msg, att, index, session_id, workspace)
            for index, att in enumerate(msg.attachments)
        ]
        heard = [one.heard for one in ones if one.heard]
        text = "" if is_placeholder(msg.text, msg.attachments) else msg.text
        said = bool(text.strip()) and msg.extras.get(WORDLESS) is not True
        if heard:
            text = "\n\n".join([text, *heard]) if text else "\n\n".join(heard)
        notes = tuple(dict.fromkeys(one.note for one in ones if one.note))  # said once each
        return Taken(text, tuple(one.entry for one in ones), notes, tuple(heard), said)

    async def _take_one(
        self, msg: InboundMessage, att: Attachment, index: int, sid: int, workspace: Path
    ) -> _One:
        kind = media_kind(att)
        entry = {"kind": kind, "name": att.name, "size": att.size, "mime": att.mime_type}
        one = _One(msg, att, index, entry)
        refused = await self._refused(kind, att, one.shown)
        if refused is not None:
            one.entry["note"], one.note = refused
            return one
        try:
            data = await self._fetch(msg, att, one.shown)
            path = await asyncio.to_thread(self.files.save, sid, att.name or kind, data)
            one.entry.update(path=str(path), size=len(data))
            await self._make(one, data, sid, workspace)
        except MediaError as exc:
            one.entry["note"] = f"not taken: {exc}"
            one.note = f"I could not take {one.shown}: {exc}."
        return one

    async def _refused(self, kind: str, att: Attachment, shown: str) -> tuple[str, str] | None:
        """(entry note, what the user is told) when the file is not even downloaded."""
        if kind == "video":
            return "not read: videos are not supported", f"I can't watch videos ({shown})."
        if kind == "image" and not (
            self._vision.describer is not None or await self._vision.chat_model_sees()
        ):
            return "not shown: this model cannot see images", CANNOT_SEE
        if kind in ("voice", "audio") and not self._transcriber.configured:
            return (
                "not transcribed: no transcription model is configured",
                f"I can't listen to voice messages or audio here: an admin can {HOW_TO_CONFIGURE}.",
            )
        if att.size is not None and att.size > self._max_bytes:
            return self._too_large(att.size, shown)
        return None

    def _too_large(self, size: int, shown: str) -> tuple[str, str]:
        limit = f"{self._max_mb:g} MB"
        return (
            f"not downloaded: over the {limit} limit",
            f"{shown[0].upper()}{shown[1:]} is {size_text(size)}, over the {limit} limit for "
            "files I receive, so I did not download it.",
        )

    async def _fetch(self, msg: InboundMessage, att: Attachment, shown: str) -> bytes:
        try:
            data = await self._download.download(msg.key.channel, att.file_id)
        except BotError as exc:  # ChannelError from the adapter, ToolError: cannot download
            log.warning("download of %s in %s failed: %s", att.file_id, msg.key, exc)
            raise MediaError("the platform did not hand the file over") from exc
        if len(data) > self._max_bytes:  # the platform declared no size, or a wrong one
            raise MediaError(self._too_large(len(data), shown)[0])
        return data

    async def _make(self, one: _One, data: bytes, sid: int, workspace: Path) -> None:
        """What the model gets of a downloaded file, into ``one``."""
        kind, att, original = one.entry["kind"], one.att, data
        if kind == "image":
            data, mime = await asyncio.to_thread(fit, data, att.mime_type)
            one.entry["mime"] = mime  # what its bytes are: a provider refuses another type
            if await self._vision.chat_model_sees():
                if data is not original:  # the smaller copy is the one shown
                    path = await asyncio.to_thread(self.files.save, sid, f"{kind}.jpg", data)
                    one.entry["path"] = str(path)
                one.entry["see"] = True
                one.entry["note"] = (
                    f"the image is shown for {self._keep_turns} turns, then only this line"
                )
                return
            one.entry["text"] = await self._vision.describe(data, mime, att.name)
            one.entry["note"] = "you cannot see images: a description by another model follows"
        elif kind == "voice":
            one.heard = await self._transcriber.transcribe(att.name, data, att.mime_type)
            one.entry["note"] = "transcribed: the transcript is the user's message above"
        elif kind == "audio":  # a song, a podcast: its words are not the user's
            words = await self._transcriber.transcribe(att.name, data, att.mime_type)
            note = "transcribed: the words heard in the file follow (its content, not the user's)"
            await self._offer(one, words, note, sid, workspace)
        else:
            await self._read(one, data, sid, workspace)

    async def _read(self, one: _One, data: bytes, sid: int, workspace: Path) -> None:
        try:
            document = await self._reader.read(data, one.att.mime_type, one.att.name)
        except UnreadableDocument as exc:
            raise MediaError(str(exc)) from None
        if not document.text:
            raise MediaError("no text was found in it (a scan or an empty file)")
        note = f"{document.kind} document, its text follows"
        await self._offer(one, document.text, note, sid, workspace)

    async def _offer(self, one: _One, text: str, note: str, sid: int, workspace: Path) -> None:
        """A file's content as text for the model, offloaded when long."""
        one.entry["text"] = await self._offload.normalize(
            text,
            workspace=workspace,
            session_id=sid,
            call_id=f"doc-{one.msg.message_id}-{one.index}",
            exempt=False,
        )
        one.entry["note"] = note
