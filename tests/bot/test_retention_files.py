"""Files that grow with use: the terminal's log file rotates, its typed-line history is
trimmed to the newest entries at each start."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from prompt_toolkit.history import FileHistory

from bot.ops.logfile import BACKUPS, divert_to_file
from channels.cli import trim_history


def test_the_log_file_rotates(tmp_path: Path) -> None:
    root = logging.getLogger()
    saved, level = list(root.handlers), root.level
    root.handlers = [logging.StreamHandler(sys.stderr)]
    root.setLevel(logging.INFO)
    try:
        path = divert_to_file(tmp_path, max_bytes=2_000)
        for n in range(400):
            logging.getLogger("bot.test").info("line %d %s", n, "x" * 40)
    finally:
        for handler in root.handlers:
            handler.close()
        root.handlers, root.level = saved, level
    assert path.stat().st_size <= 2_000
    assert "line 399" in path.read_text(encoding="utf-8")
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert kept == ["bot.log", *(f"bot.log.{n}" for n in range(1, BACKUPS + 1))]


def test_the_typed_history_keeps_its_newest_entries(tmp_path: Path) -> None:
    path = tmp_path / "chat_history"
    history = FileHistory(str(path))
    for n in range(30):
        history.store_string(f"said {n}\nsecond line {n}" if n % 2 else f"said {n}")
    trim_history(path, keep=10)
    assert list(FileHistory(str(path)).load_history_strings()) == [
        f"said {n}\nsecond line {n}" if n % 2 else f"said {n}" for n in reversed(range(20, 30))
    ]
    before = path.read_bytes()
    trim_history(path, keep=10)  # within the limit: untouched
    assert path.read_bytes() == before
    trim_history(tmp_path / "absent")  # no file yet: nothing to do
