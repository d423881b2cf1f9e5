"""Where inbound files are kept: ``<data dir>/media/<session id>/``, owner-only.

A file is referenced from its session's history by path, never copied into the
database; it goes when the session is cleared (a clear hook) or when housekeeping finds
it older than ``[retention] media_days``.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import uuid
from datetime import datetime
from pathlib import Path

from bot.messages import ChatKey

log = logging.getLogger(__name__)

MEDIA_DIR = "media"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(name: str, fallback: str = "file") -> str:
    """A file name that is one path component, never hidden, at most 80 characters."""
    cleaned = _UNSAFE.sub("_", name).strip("._")[-80:]
    return cleaned or fallback


class MediaFiles:
    """Inbound files on disk, one folder per session."""

    def __init__(self, data_dir: Path) -> None:
        self.root = data_dir / MEDIA_DIR

    def save(self, session_id: int, name: str, data: bytes) -> Path:
        """Write ``data`` (mode 0600, the folders 0700); returns the absolute path."""
        folder = self.root / str(session_id)
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = folder / f"{uuid.uuid4().hex[:12]}-{safe_name(name)}"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        return path.resolve()

    def owns(self, path: Path) -> bool:
        """True for a file this store wrote (a stored path is read back only then)."""
        try:
            return path.resolve().is_relative_to(self.root.resolve())
        except OSError:
            return False

    def remove_session(self, session_id: int, key: ChatKey) -> None:
        """A clear hook: the session's files go with its history."""
        shutil.rmtree(self.root / str(session_id), ignore_errors=True)

    def remove_older_than(self, cutoff: datetime) -> int:
        """Files last written before ``cutoff`` (housekeeping); empty folders too."""
        limit, removed = cutoff.timestamp(), 0
        for path in self.root.glob("*/*"):
            try:
                if path.is_file() and path.stat().st_mtime < limit:
                    path.unlink()
                    removed += 1
            except FileNotFoundError:
                continue
        for folder in self.root.glob("*"):
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
        if removed:
            log.info("removed %d media files older than %s", removed, cutoff.isoformat())
        return removed
