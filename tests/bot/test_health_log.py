"""A database that fails /healthz is said in the log: once when it turns failing (a
WARNING with why, SQLite's own words in the part too) and once when it works again
(INFO). A 40 s stall answered 503 the whole time with not one log line."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from bot.ops import web
from bot.store.db import Database
from tests.bot.test_status_unanswered import write_locked
from tests.conftest import DaemonFactory
from tests.fakes.web_client import get as _get


def _said(caplog: pytest.LogCaptureFixture) -> list[tuple[int, str]]:
    return [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "bot.ops.web"]


async def test_a_refused_write_is_named_and_logged_once_each_way(
    daemon_factory: DaemonFactory, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    daemon, _ = await daemon_factory()
    db = daemon.db
    assert isinstance(db, Database)
    monkeypatch.setattr(web, "DATABASE_WATCH", web.PartWatch("database"), raising=False)
    caplog.set_level(logging.INFO, logger="bot.ops.web")
    await db.run(lambda c: c.execute("PRAGMA query_only = ON"))
    refused = "not writable: attempt to write a readonly database"
    for _ in range(3):
        status, body = await _get(daemon, "/healthz")
        assert (status, body["database"]) == (503, refused)
    assert _said(caplog) == [
        (logging.WARNING, f"database failing: {refused}; /healthz answers 503 until it works")
    ]
    await db.run(lambda c: c.execute("PRAGMA query_only = OFF"))
    for _ in range(2):
        status, body = await _get(daemon, "/healthz")
        assert (status, body["database"]) == (200, "ok")
    assert [level for level, _ in _said(caplog)] == [logging.WARNING, logging.INFO]
    assert _said(caplog)[1][1].startswith("database works again (failing for ")


async def test_a_stalled_database_is_logged_when_it_stalls_and_when_it_is_back(
    daemon_factory: DaemonFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    daemon, _ = await daemon_factory(data_dir=tmp_path / "data")
    db = daemon.db
    assert isinstance(db, Database)
    monkeypatch.setattr(web, "DATABASE_WATCH", web.PartWatch("database"), raising=False)
    monkeypatch.setattr(web, "PROBE_TIMEOUT_S", 0.2)
    caplog.set_level(logging.INFO, logger="bot.ops.web")
    async with write_locked(tmp_path / "data" / "bot.db"):  # another process's lock
        for _ in range(2):
            status, body = await _get(daemon, "/healthz")
            assert (status, body["database"]) == (503, "no answer within 0.2 s")
    assert _said(caplog) == [
        (
            logging.WARNING,
            "database failing: no answer within 0.2 s; /healthz answers 503 until it works",
        )
    ]
    # Queued behind the probes left waiting for the lock: they have gone through.
    await asyncio.wait_for(db.fetchall("SELECT 1"), 10)
    assert (await _get(daemon, "/healthz"))[0] == 200
    assert [level for level, _ in _said(caplog)] == [logging.WARNING, logging.INFO]
