"""``send_file``: a file goes to the user with the answer, from the workspace's
``files`` folder or written from what the model produced.

Nothing is posted by the tool itself: the file joins the turn's answer, which goes
through the outbox like every answer (exactly once), and delivery uploads it where the
platform can, checking the platform's size limit first. Only regular files inside the
workspace's ``files`` folder are sent: an absolute path, a ``..`` that leaves it and a
symbolic link anywhere on the way are refused, so the model cannot mail out the
database, the config or a persona file.

``files`` is shared by every chat the workspace serves (the default workspace serves
them all), so what the bot writes for one chat (content, an MCP tool's picture) is kept
apart, under ``chat_files/<channel>-<chat id>/``: a path is looked up in ``files``, then
in this chat's own folder, never in another chat's, so a group member cannot ask for the
report the bot wrote in someone's direct chat. What is written there goes with the chat's
history (``/new``) or after ``[retention] chat_files_days`` (bot/workspaces/chat_files.py).
"""

from __future__ import annotations

import asyncio
import mimetypes
import os
import re
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

from bot.agent.toolbox import ToolContext
from bot.errors import ToolError
from bot.messages import Attachment
from bot.workspaces.chat_files import chat_folder
from tools.base import Tool

FILES_DIR = "files"
MAX_CONTENT_CHARS = 5_000_000
MAX_FILES_PER_TURN = 10
RACING_WRITES = 100  # numbers tried past the highest: calls writing one name at once


def files_root(ctx: ToolContext) -> Path:
    if ctx.workspace is None:
        raise ToolError("this chat has no workspace to send files from")
    root = ctx.workspace / FILES_DIR
    if root.is_symlink():
        raise ToolError("the files folder is a symbolic link: nothing is sent from it")
    return root


class NoSuchFile(ToolError):
    """The path is fine but names no file there."""


def chat_root(ctx: ToolContext) -> Path:
    """This chat's own folder: what the bot wrote here, out of every other chat's reach."""
    if ctx.workspace is None:
        raise ToolError("this chat has no workspace to send files from")
    root = chat_folder(ctx.workspace, ctx.chat_key)
    for folder in (root.parent, root):
        if folder.is_symlink():
            raise ToolError("this chat's files folder is a symbolic link: nothing is sent from it")
    return root


def find(ctx: ToolContext, relative: str) -> Path:
    """``relative`` in the shared files folder, else in this chat's own one."""
    try:
        return inside(files_root(ctx), relative)
    except NoSuchFile:
        return inside(chat_root(ctx), relative)


def inside(root: Path, relative: str) -> Path:
    """``root / relative`` when it stays inside ``root`` without following a link."""
    parts = PurePosixPath(relative.replace("\\", "/")).parts
    if not parts or relative.startswith(("/", "~")) or ".." in parts:
        raise ToolError(f"{relative!r} is not a path inside the files folder")
    path = root
    for part in parts:
        path = path / part
        if path.is_symlink():
            raise ToolError(f"{relative!r} goes through a symbolic link: not sent")
    if not path.is_file():
        raise NoSuchFile(f"no file {relative!r} in the files folder")
    if not path.resolve().is_relative_to(root.resolve()):
        raise ToolError(f"{relative!r} is outside the files folder")
    return path


def kind_of(name: str) -> tuple[str, str]:
    mime = mimetypes.guess_type(name)[0] or "application/octet-stream"
    return ("photo" if mime.startswith("image/") else "document"), mime


def attach(ctx: ToolContext, path: Path, name: str, caption: str) -> Attachment:
    """``path`` joins the answer of this turn."""
    if len(ctx.outgoing) >= MAX_FILES_PER_TURN:
        raise ToolError(f"at most {MAX_FILES_PER_TURN} files go with one answer")
    kind, mime = kind_of(name)
    attachment = Attachment(kind, str(path), name, mime, path.stat().st_size, caption)
    ctx.outgoing.append(attachment)
    return attachment


def _plain_name(name: str) -> None:
    """Refuses all but one plain path part: a caller's name with a ``/`` or ``..`` in it
    (an MCP tool's, say) would otherwise write outside the folder."""
    if name in ("", ".", "..") or any(c in name for c in "/\\\0"):
        raise ToolError(f"{name!r} is not a plain file name")


def write_new(folder: Path, name: str, data: bytes) -> Path:
    """``data`` as ``folder/name`` (``name-<n>`` past the highest number there when taken),
    never through a link and never outside ``folder``."""
    _plain_name(name)
    folder.mkdir(parents=True, exist_ok=True)
    root = folder.resolve()
    for candidate in _free_names(folder, name):
        if os.path.dirname(os.path.normpath(root / candidate)) != str(root):
            raise ToolError(f"{name!r} would be written outside its folder")
        path = folder / candidate
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:  # written meanwhile by another call: the next number
            continue
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        return path
    raise ToolError(f"too many files named {name!r} written at once; try again")


def _free_names(folder: Path, name: str) -> Iterator[str]:
    """``name``, then ``stem-<n>.suffix`` from one past the highest ``n`` in ``folder``:
    one listing, however many copies there are (housekeeping removes old ones)."""
    yield name
    stem, suffix = Path(name).stem, Path(name).suffix
    numbered = re.compile(rf"{re.escape(stem)}-([0-9]{{1,18}}){re.escape(suffix)}")
    found = (numbered.fullmatch(entry) for entry in os.listdir(folder))
    start = max((int(m[1]) for m in found if m), default=1) + 1
    yield from (f"{stem}-{n}{suffix}" for n in range(start, start + RACING_WRITES))


class SendFileTool(Tool):
    name = "send_file"
    description = (
        "Send a file with your final_result answer: either path (a file in the workspace's "
        "files folder, relative to it, or one written in this chat before) or content plus "
        "name (text you wrote, e.g. CSV, Markdown, code; kept for this chat). caption: an "
        "optional line shown with it."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {"type": "string", "minLength": 1, "maxLength": 500},
            "content": {"type": "string", "maxLength": MAX_CONTENT_CHARS},
            "name": {"type": "string", "minLength": 1, "maxLength": 120},
            "caption": {"type": "string", "maxLength": 1000},
        },
        "additionalProperties": False,
    }

    async def execute(self, ctx: ToolContext, *args: Any, **kwargs: Any) -> str:
        files_root(ctx)
        caption = str(kwargs.get("caption") or "")
        if ("path" in kwargs) == ("content" in kwargs):
            raise ToolError("give either path (a file in the files folder) or content and name")
        if "path" in kwargs:
            path = await asyncio.to_thread(find, ctx, str(kwargs["path"]))
            name = str(kwargs.get("name") or path.name)
        else:
            name = Path(str(kwargs.get("name") or "")).name
            if not name or name.startswith("."):
                raise ToolError("content needs a file name (name), e.g. 'report.md'")
            data = str(kwargs["content"]).encode("utf-8")
            path = await asyncio.to_thread(write_new, chat_root(ctx), name, data)
        sent = attach(ctx, path, name, caption)
        return f"{name} ({sent.size:,} bytes) will be sent with your answer."
