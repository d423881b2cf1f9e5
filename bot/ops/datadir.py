"""What to do about a data folder this process cannot write or make, said by ``bot run``
and ``bot doctor``. In the image (uid 10001) a root-owned host folder bind-mounted on
/data was answered "set data_dir in the config (or BOT_DATA_DIR)", which cannot work
there (the image's BOT_DATA_DIR beats the file) and never named the fix, a chown.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path


def nearest_existing(path: Path) -> Path:
    """``path`` itself when it exists, else the nearest folder above it that does."""
    where = path.absolute()
    return next((p for p in (where, *where.parents) if p.exists()), Path(where.anchor))


def unwritable_fix(path: Path) -> str:
    """The fix for data folder ``path``: whose folder refuses this process, and the
    chown (or chmod) that lets it in, or else another folder."""
    if not hasattr(os, "geteuid"):  # no uids to name (Windows)
        return "set data_dir in the config (or BOT_DATA_DIR) to a folder this user can write"
    uid, gid = os.geteuid(), os.getegid()
    variable = "set BOT_DATA_DIR (it beats data_dir in the config)"
    if not os.environ.get("BOT_DATA_DIR"):
        variable = "set data_dir in the config (or BOT_DATA_DIR)"
    elsewhere = f"{variable} to a folder uid {uid} can write"
    folder = nearest_existing(path)
    try:
        info = folder.stat()
    except OSError:
        return elsewhere
    if not stat.S_ISDIR(info.st_mode):  # a file in the way: no owner to change
        return elsewhere
    made = folder == path.absolute()
    if info.st_uid != uid:
        fix = f"chown {uid}:{gid} {folder} (a bind mount: the host's folder, on the host)"
        if not made:  # not the parent's owner: /var/lib is root's for good reasons
            fix = f"create {path.absolute()} and chown {uid}:{gid} it"
        owners = f"{folder} is owned by uid {info.st_uid}, this process runs as uid {uid}"
        return f"{owners}: {fix}, or {elsewhere}"
    if made and info.st_mode & 0o300 != 0o300:
        return f"chmod u+rwx {folder}, or {elsewhere}"
    return elsewhere
