"""One-shot commands of a newer release beside an older daemon: they never migrate.

`bot reminders list` (every command on ``with_storage``) and `bot store copy --from`
migrated a database at an older schema in place; the older daemon kept answering, but at
its next start refused the newer schema (exit 2: a restart loop under systemd). Only
`bot run` migrates now; the commands refuse an older schema with one line, and a missing
database stays what it was (`bot workspace set` before the first start still makes it).
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys
from pathlib import Path

import pytest

from bot.store.db import MIGRATIONS, Database
from tests.bot.test_old_stores import OLD_STORES_BY_STEM, _load
from tests.fakes.process import bot_env

pytestmark = pytest.mark.slow  # subprocesses

OLD = "v18-6b5f127"  # the release whose daemon the upgrade probe ran


async def _bot(data: Path, *args: str, stdin: bytes = b"") -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "bot", *args),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=bot_env(data),
        cwd=data.parent,
    )
    out, err = await asyncio.wait_for(proc.communicate(stdin), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def _version(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()


def _old_database(path: Path) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    _load(OLD_STORES_BY_STEM[OLD], path)
    version = _version(path)
    assert 0 < version < len(MIGRATIONS)
    return version


async def test_commands_refuse_an_older_schema_and_leave_it_as_it_was(tmp_path: Path) -> None:
    data = tmp_path / "data"
    old = _old_database(data / "bot.db")
    shown = ["workspace", "show", "default", "SOUL.md"]
    for args in (["reminders", "list"], ["pairing", "list"], shown):
        code, out, err = await _bot(data, *args)
        assert code in (1, 2) and out == "", (args, out, err)
        assert err.count("\n") == 1 and f"schema version {old}, not read" in err, err
        assert "(bot run)" in err and "Traceback" not in err, err
        assert _version(data / "bot.db") == old, args  # not migrated

    db = Database(data / "bot.db")  # the start of this release (bot run) migrates it
    await db.open()
    await db.close()
    code, out, err = await _bot(data, "reminders", "list")
    assert code == 0 and err == "", err


async def test_a_missing_database_is_still_made_by_a_write_before_the_first_start(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    args = ("workspace", "set", "default", "SOUL.md", "--create")
    code, _, err = await _bot(data, *args, stdin=b"calm")
    assert code == 0, err
    assert _version(data / "bot.db") == len(MIGRATIONS)


async def test_store_copy_refuses_an_older_source_and_leaves_it_as_it_was(
    tmp_path: Path,
) -> None:
    source, target = tmp_path / "old.db", tmp_path / "new.db"
    old = _old_database(source)
    code, out, err = await _bot(
        tmp_path / "data", "store", "copy", "--from", f"sqlite:{source}", "--to", str(target)
    )
    assert code == 2 and f"schema version {old}, not read" in err, out + err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert _version(source) == old and not target.exists()
