"""Logs off the terminal while a person types at it.

A log line written to stderr lands inside the ``you>`` input line (the terminal has one
cursor), so an interactive terminal chat sends the log to a file under the data dir
instead, and says where once. Piped and headless runs keep logging to stderr.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

LOG_FILE = "bot.log"


def divert_to_file(data_dir: Path) -> Path:
    """Move the root logger's stderr handlers to ``data_dir/bot.log`` (appended, same
    format and level); returns the file's path."""
    path = data_dir / LOG_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger()
    for handler in list(root.handlers):
        stream = getattr(handler, "stream", None)
        if isinstance(handler, logging.StreamHandler) and stream in (sys.stderr, sys.stdout):
            root.removeHandler(handler)
            to_file = logging.FileHandler(path, encoding="utf-8")
            to_file.setFormatter(handler.formatter)
            to_file.setLevel(handler.level)
            root.addHandler(to_file)
    return path
