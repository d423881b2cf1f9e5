"""Logs off the terminal while a person types at it.

A log line written to stderr lands inside the ``you>`` input line (the terminal has one
cursor), so an interactive terminal chat sends the log to a file under the data dir
instead, and says where once. Piped and headless runs keep logging to stderr. The file
rotates at 10 MB, two old ones kept (``bot.log.1``, ``bot.log.2``): it grows with use.
"""

from __future__ import annotations

import logging
import logging.handlers
import sys
from pathlib import Path

LOG_FILE = "bot.log"
MAX_BYTES = 10 * 1024 * 1024
BACKUPS = 2


def divert_to_file(data_dir: Path, *, max_bytes: int = MAX_BYTES) -> Path:
    """Move the root logger's stderr handlers to ``data_dir/bot.log`` (appended, same
    format and level, rotated at ``max_bytes``); returns the file's path."""
    path = data_dir / LOG_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger()
    for handler in list(root.handlers):
        stream = getattr(handler, "stream", None)
        if isinstance(handler, logging.StreamHandler) and stream in (sys.stderr, sys.stdout):
            root.removeHandler(handler)
            to_file = logging.handlers.RotatingFileHandler(
                path, maxBytes=max_bytes, backupCount=BACKUPS, encoding="utf-8"
            )
            to_file.setFormatter(handler.formatter)
            to_file.setLevel(handler.level)
            root.addHandler(to_file)
    return path
