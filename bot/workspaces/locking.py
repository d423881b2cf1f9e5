"""One edit of a persona file at a time, across processes (the daemon and ``bot workspace``).

An edit writes the file and then numbers its version in the database; a process that
looked at the file between the two would record the new text as an edit made on disk.
So the write and the version row happen under an exclusive ``fcntl.flock`` on a lock file
next to the persona file (``.SOUL.md.lock``), and so does every look that may record a
disk edit. The lock file is opened with ``O_NOFOLLOW`` (no symlink is ever followed in a
workspace) and never truncated; the lock goes with the descriptor, so a killed editor
releases it. ``flock`` from the standard library rather than the filelock package: that
one truncates the lock file through whatever path it is given. POSIX only, like the
``O_NOFOLLOW`` reads of the persona files themselves.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from bot.errors import WorkspaceError

POLL_S = 0.005  # an edit holds the lock for one write and one INSERT: milliseconds
WAIT_S = 30.0  # a lock held longer than this is a hung editor: refuse instead of hanging


def lock_path(file: Path) -> Path:
    return file.with_name(f".{file.name}.lock")


@asynccontextmanager
async def file_lock(file: Path, *, wait_s: float = WAIT_S) -> AsyncIterator[None]:
    """Hold the exclusive lock of ``file`` (its folder must exist) for the block."""
    path = lock_path(file)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise WorkspaceError(f"cannot lock {file.name} ({path}): {exc.strerror}") from None
    try:
        await _acquire(fd, file, wait_s)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


async def _acquire(fd: int, file: Path, wait_s: float) -> None:
    """Non-blocking tries on the loop: no thread is left blocked if the caller is
    cancelled, and the lock is uncontended almost always."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise WorkspaceError(
                    f"{file.name} of workspace {file.parent.name} is being edited by another "
                    f"process (waited {wait_s:g} s); try again"
                ) from None
            await asyncio.sleep(POLL_S)
