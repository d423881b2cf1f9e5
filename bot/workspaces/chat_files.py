"""What the bot writes for one chat (``send_file``'s content, an MCP tool's pictures):
``<workspace>/chat_files/<channel>-<chat id>/``, out of every other chat's reach.

A chat's threads share its folder. The folder goes with the chat's own history (a clear
hook: ``/new`` outside a thread, the admin page's Sessions; a thread's ``/new`` leaves it
to the chat's other threads) and each file once older than
``[retention] chat_files_days`` (housekeeping), so a report written every day does not
pile up. Neither follows a symbolic link: what one points at was never written here.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
from datetime import datetime
from pathlib import Path

from bot.config.workspaces import WORKSPACE_NAME
from bot.messages import ChatKey
from bot.oldfiles import remove_written_before
from bot.workspaces.routing import session_thread, session_workspace

log = logging.getLogger(__name__)

CHAT_FILES_DIR = "chat_files"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def chat_folder(workspace: Path, key: ChatKey) -> Path:
    """The folder of the chat ``key`` names (its threads' too) in ``workspace``."""
    return workspace / CHAT_FILES_DIR / _UNSAFE.sub("_", f"{key.channel}-{key.chat_id}")


class ChatFiles:
    """The chats' folders in every workspace under ``workspaces_root``."""

    def __init__(self, workspaces_root: Path) -> None:
        self.root = workspaces_root

    def remove_session(self, session_id: int, key: ChatKey) -> None:
        """A clear hook: what the bot wrote in the chat goes with its history in the
        session's workspace."""
        workspace = session_workspace(key)
        if not WORKSPACE_NAME.fullmatch(workspace):
            return  # a session key no workspace made: nothing of ours to remove
        if session_thread(key):
            return  # one thread's history: the chat's other threads share the folder
        folder = chat_folder(self.root / workspace, key)
        if folder.parent.is_symlink() or folder.is_symlink():
            return
        shutil.rmtree(folder, ignore_errors=True)

    def remove_older_than(self, cutoff: datetime) -> int:
        """Files last written before ``cutoff`` (housekeeping); folders left empty too."""
        removed = 0
        for top in self.root.glob(f"*/{CHAT_FILES_DIR}"):
            if top.is_symlink() or not top.is_dir():
                continue
            for folder, _, names in os.walk(top, topdown=False):  # links not followed
                removed += remove_written_before((Path(folder, n) for n in names), cutoff)
                if folder != str(top):
                    _remove_if_empty(Path(folder))
        if removed:
            log.info("removed %d chat files older than %s", removed, cutoff.isoformat())
        return removed


def _remove_if_empty(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not empty (or written to meanwhile): kept
        folder.rmdir()
