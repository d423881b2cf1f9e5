"""One ``bot run`` per SQLite data folder: a second one on the same database replayed the
turn the first was still running (two model calls, two answers) and fired each reminder
twice. The daemon holds an exclusive ``flock`` on ``data_dir/bot.lock`` for its life
(the kernel lets it go when the process ends, however it ends), with its pid inside for
the refusal to name. One-shot commands do not take it (they run next to the daemon), nor
replicas on PostgreSQL (they share a database by design, fenced by leases). Where there
is no ``fcntl`` (Windows) there is no lock.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from bot.errors import ConfigError

LOCK_NAME = "bot.lock"


class InstanceLock:
    """The open lock file: held while this object's descriptor is open."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def release(self) -> None:
        os.close(self.fd)  # closing the descriptor drops the flock


def claim(data_dir: Path) -> InstanceLock | None:
    """The daemon's lock on ``data_dir`` (None where ``fcntl`` does not exist); raises
    ConfigError naming the holder's pid when another process holds it."""
    if sys.platform == "win32":
        return None
    import fcntl

    path = data_dir / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise ConfigError(
            f"another bot run (pid {holder}) uses {data_dir}; stop it first, or give this "
            "one its own data_dir (with SQLite one process owns the database)"
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return InstanceLock(fd)
