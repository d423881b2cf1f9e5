"""Safe access to persona files: only the three names, no symlink ever followed.

A workspace folder is admin territory, but a planted symlink (``SOUL.md -> /etc/passwd``)
must neither leak another file into the prompt nor let an edit write through it, so
files are opened with ``O_NOFOLLOW`` and written to a temporary file in the same folder
that then replaces the target atomically (``os.replace`` swaps the name, never follows).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from bot.config.workspaces import WORKSPACE_NAME
from bot.errors import WorkspaceError

PERSONA_FILES = ("AGENTS.md", "SOUL.md", "USER.md")
_ALIASES = {name.removesuffix(".md").lower(): name for name in PERSONA_FILES}


def workspace_name(name: str) -> str:
    if not WORKSPACE_NAME.fullmatch(name):
        raise WorkspaceError(
            f"invalid workspace name {name!r}: use 1-64 of a-z, 0-9, '_' and '-', "
            "starting with a letter or digit"
        )
    return name


def persona_file(name: str) -> str:
    """``"SOUL.md"`` or ``"soul"`` -> ``"SOUL.md"``; anything else is refused."""
    found = name if name in PERSONA_FILES else _ALIASES.get(name)
    if found is None:
        raise WorkspaceError(
            f"{name!r} is not a persona file; only {', '.join(PERSONA_FILES)} can be edited"
        )
    return found


def checked_folder(folder: Path) -> Path:
    """The workspace folder itself must be a real directory, not a link to elsewhere."""
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        raise WorkspaceError(f"workspace folder {folder} does not exist") from None
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise WorkspaceError(f"{folder} is not a plain directory (a symbolic link?); refused")
    return folder


# What tells an edit on disk: (mtime, size, inode, ctime) of the file itself.
Stamp = tuple[int, int, int, int]


def stamp(path: Path) -> Stamp | None:
    """The file's (a symlink's own) :data:`Stamp`, or None when absent. mtime and size
    alone missed a restore keeping both (``cp -p``, ``rsync -t`` of a same-size
    version); the inode moves when a file is replaced, the ctime on any write."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns


def read_bytes(path: Path) -> bytes | None:
    """The file's bytes, or None when absent; a symlink or non-regular file is refused."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:  # ELOOP: a symlink
        raise WorkspaceError(f"{path.name} is a symbolic link or unreadable; refused") from exc
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise WorkspaceError(f"{path.name} is not a regular file; refused")
        return fh.read()


def decoded(data: bytes, path: Path) -> str:
    """UTF-8, strictly: a file saved in another encoding (Latin-1, cp1252) is refused
    rather than read with its letters replaced, which an edit would then write back.
    A Windows editor's BOM and CRLF line ends go, so a template saved again unchanged
    still reads as the template (left out of the prompt)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise WorkspaceError(
            f"{path.name} of workspace {path.parent.name} is not UTF-8 text (byte "
            f"{exc.start}): save it as UTF-8 on disk; until then its last good version is "
            "used (it is read as cp1252 if it has none) and every edit of it but a rollback"
            " to one of its versions is refused"
        ) from exc
    return text.replace("\r\n", "\n")


def not_utf8(exc: BaseException) -> bool:
    """Whether a refused read was a file that is not UTF-8 (see :func:`decoded`)."""
    return isinstance(exc.__cause__, UnicodeDecodeError)


def legacy_text(data: bytes) -> str:
    """A non-UTF-8 file read as Windows' cp1252, for the prompt only (never recorded nor
    written back): what an editor of that file most likely meant."""
    return data.decode("cp1252", errors="replace").replace("\r\n", "\n")


def read_text(path: Path) -> str | None:
    """The file's text (UTF-8, "\\n" line ends), or None when absent; a symlink,
    non-regular file or a file that is not UTF-8 is refused (WorkspaceError)."""
    data = read_bytes(path)
    return None if data is None else decoded(data, path)


def write_text(folder: Path, name: str, text: str | bytes) -> None:
    """Replace ``folder/name`` with ``text`` atomically; a symlink in its place is refused.
    Bytes are written as they are: a file that was not UTF-8, put back."""
    checked_folder(folder)
    target = folder / name
    with contextlib.suppress(FileNotFoundError):
        if not stat.S_ISREG(os.lstat(target).st_mode):
            raise WorkspaceError(
                f"{name} in {folder.name} is a symbolic link or not a regular file; "
                "refused (remove it first)"
            )
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text if isinstance(text, bytes) else text.encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def create_text(path: Path, text: str) -> bool:
    """Create ``path`` with ``text`` unless something (a symlink too) is already there."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as fh:
        fh.write(text.encode("utf-8"))
    return True
