"""`bot status` against a daemon that runs but does not answer in time: its database
write-locked by another process (a backup, a sqlite3 shell) made ``/status`` wait for
the queue counts, and the CLI said "not running" (exit 3) for a running daemon."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sqlite3
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web
from typer.testing import CliRunner

from bot.cli import status as cli_status
from bot.cli.app import app
from bot.cli.status_text import render
from bot.ops import status as ops_status
from bot.ops import web as ops_web
from tests.conftest import DaemonFactory, make_settings
from tests.fakes.web_client import get as _get


@contextlib.asynccontextmanager
async def write_locked(path: Path) -> AsyncIterator[None]:
    """Another connection (as another process would) holds a write lock on ``path``."""
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        conn = sqlite3.connect(path, timeout=5, isolation_level=None)
        try:
            conn.execute("BEGIN EXCLUSIVE")
            held.set()
            release.wait(30)
            conn.execute("COMMIT")
        finally:
            conn.close()

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    try:
        assert await asyncio.to_thread(held.wait, 5)
        yield
    finally:
        release.set()
        await asyncio.to_thread(thread.join, 10)


async def test_a_daemon_whose_database_is_write_locked_is_running_not_gone(
    daemon_factory: DaemonFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    daemon, _ = await daemon_factory(data_dir=tmp_path / "data")
    assert daemon.web is not None
    monkeypatch.setattr(ops_web, "PROBE_TIMEOUT_S", 0.2)
    monkeypatch.setattr(ops_status, "QUEUE_READ_TIMEOUT_S", 0.2, raising=False)
    monkeypatch.setattr(cli_status, "FETCH_TIMEOUT_S", 2.0)
    settings = make_settings(tmp_path / "data", "http://127.0.0.1:9")
    async with write_locked(tmp_path / "data" / "bot.db"):
        report = await cli_status.collect(settings, daemon.web.url, 5)
    assert (report["daemon"], report["exit_code"]) == ("running", 1), report["why"]
    live = report["live"]
    assert live["failing"] == ["database"]
    assert live["queue"]["inbox"] is None and live["queue"]["outbox"] is None
    assert live["queue"]["why"] == "the database did not answer within 0.2 s"
    text = render(report)
    assert "queue: inbox and outbox unknown (the database did not answer within 0.2 s)" in text
    # Once the lock is gone the counts are back.
    status, body = await _get(daemon, "/status")
    assert status == 200 and body["queue"]["inbox"] == 0 and "why" not in body["queue"]


@contextlib.asynccontextmanager
async def listener(handle: object) -> AsyncIterator[str]:
    """A loopback server that takes connections and does ``handle`` with each."""

    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if handle == "close":
            writer.close()
            return
        await asyncio.sleep(30)  # takes the request, never answers

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.wait_closed(), 1)


@pytest.mark.parametrize("handle", ["hang", "close"])
async def test_a_process_that_takes_the_connection_is_not_answering_exit_4(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, handle: str
) -> None:
    monkeypatch.setattr(cli_status, "FETCH_TIMEOUT_S", 0.3)
    settings = make_settings(tmp_path / "data", "http://127.0.0.1:9")
    async with listener(handle) as url:
        report = await cli_status.collect(settings, url, 5)
    assert (report["daemon"], report["exit_code"]) == ("not answering", 4), report["why"]
    assert report["why"].startswith(url) and "runs but does not answer" in report["why"]
    assert render(report).startswith("daemon: not answering (")


async def test_a_refused_connection_is_not_running_exit_3(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: refused
        settings = make_settings(tmp_path / "data", "http://127.0.0.1:9")
        report = await cli_status.collect(settings, f"http://127.0.0.1:{port}", 5)
    assert (report["daemon"], report["exit_code"]) == ("not running", 3), report["why"]


async def test_a_daemon_status_error_is_not_answering(tmp_path: Path) -> None:
    async def broken(request: web.Request) -> web.Response:
        raise web.HTTPInternalServerError()

    server = web.Application()
    server.router.add_get("/status", broken)
    runner = web.AppRunner(server)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        port = runner.addresses[0][1]
        settings = make_settings(tmp_path / "data", "http://127.0.0.1:9")
        report = await cli_status.collect(settings, f"http://127.0.0.1:{port}", 5)
    finally:
        await runner.cleanup()
    assert (report["daemon"], report["exit_code"]) == ("not answering", 4), report["why"]


@pytest.mark.parametrize("url", ["notaurl", "ftp://127.0.0.1:1", "http://", "http://h:port"])
def test_a_url_that_is_not_an_http_address_is_a_usage_error(tmp_path: Path, url: str) -> None:
    config = tmp_path / "bot.toml"
    config.write_text(f'data_dir = "{tmp_path / "data"}"\n', encoding="utf-8")
    result = CliRunner().invoke(app, ["status", "--url", url, "-c", str(config)])
    assert result.exit_code == 2, result.output
    assert "is not an http address" in result.output


async def test_a_postgresql_store_that_cannot_be_read_leaves_the_replicas_unknown(
    tmp_path: Path,
) -> None:
    """With [web] off and PostgreSQL out of reach, `bot status` said "replicas: 0 live"
    and "not running" (exit 3), as if it had read that no replica beats: it cannot tell
    (exit 4) and shows no replica count it never read."""
    with socket.socket() as s:  # bound, never listening: every connection refused
        s.bind(("127.0.0.1", 0))
        url = f"postgresql://bot@127.0.0.1:{s.getsockname()[1]}/bot"
        settings = make_settings(
            tmp_path / "data", "http://127.0.0.1:9/v1", store={"url": url}, web={"enabled": False}
        )
        report = await cli_status.collect(settings, None, 10)
    assert report["store"]["error"], report["store"]
    assert (report["daemon"], report["exit_code"]) == ("unknown", cli_status.UNKNOWN)
    assert "replicas:" not in render(report)
