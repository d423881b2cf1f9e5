"""`bot status` as a subprocess: with no daemon (what the store knows, exit 3), against a
running `bot run` with the fake Telegram and model (its /status, exit 0), against a
daemon whose channel is down (exit 1), and on PostgreSQL with replicas holding leases
(exit 4: running elsewhere). ``--json`` is the same report, parsed."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from bot.cluster.leases import LeaseTable
from bot.errors import ChannelError
from bot.messages import ChatKey, InboundMessage, OutboundMessage, utcnow
from bot.store.location import storage_for
from bot.store.reminders import ReminderKind, ReminderStatus
from tests.conftest import DaemonFactory
from tests.fakes import telegram_api
from tests.fakes.channel import FakeChannel
from tests.fakes.llm_server import FakeLLM
from tests.fakes.postgres import throwaway_schema
from tests.fakes.process import BotProcess, bot_env
from tests.fakes.telegram_api import FakeTelegram

pytestmark = pytest.mark.slow  # subprocesses

fake_telegram = telegram_api.fake_telegram
SCRIPT = Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py"
MCP = json.dumps({"fake": {"command": sys.executable, "args": [str(SCRIPT)]}})


async def bot_status(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        *(sys.executable, "-m", "bot", "status", *args),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def as_json(env: dict[str, str], *args: str) -> tuple[int, dict[str, Any]]:
    code, out, err = await bot_status(env, "--json", *args)
    assert not err, err
    return code, json.loads(out)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def seed(url: str, data: Path) -> None:
    """Three reminders: a daily one in Berlin on Telegram, one due and held for the
    terminal (no daemon runs it), a cancelled one; one unanswered message, one reply."""
    storage = storage_for(url, data)
    await storage.backend.open()
    try:
        r = storage.reminders
        common: dict[str, Any] = {"kind": ReminderKind.REMINDER}
        tomorrow = utcnow().replace(hour=8, minute=0, second=0, microsecond=0) + timedelta(days=1)
        await r.add(
            ChatKey("telegram", "42"), "7", content="water the plants", fire_at=tomorrow,
            recurrence="0 9 * * *", timezone="Europe/Berlin", **common,
        )  # fmt: skip
        await r.add(
            ChatKey("cli", "local"), "local", content="stretch", recurrence=None,
            fire_at=utcnow() - timedelta(minutes=5), timezone="UTC", **common,
        )  # fmt: skip
        gone = await r.add(
            ChatKey("cli", "local"), "local", content="cancelled one", recurrence=None,
            fire_at=tomorrow, timezone="UTC", **common,
        )  # fmt: skip
        await r.set_status(gone.id, ReminderStatus.CANCELLED)
        msg = InboundMessage(ChatKey("telegram", "42"), "7", "still waiting", message_id="9")
        assert await storage.inbox.accept(msg)
        assert await storage.outbox.add(OutboundMessage.reply(msg, "a reply not yet sent"))
    finally:
        await storage.backend.close()


async def test_no_daemon_running_shows_what_the_store_knows(tmp_path: Path) -> None:
    data = tmp_path / "data"
    await seed("", data)
    env = bot_env(data, BOT_WEB__PORT=str(free_port()))
    code, out, err = await bot_status(env)
    assert (code, err) == (3, ""), out + err
    assert out.startswith("daemon: not running (nothing answers at http://127.0.0.1:"), out
    assert "queue: inbox 1 unanswered, outbox 1 undelivered" in out
    assert "reminders: 2 active" in out and "cancelled one" not in out
    # The next one at its owner's wall clock (08:00 UTC is 09:00 in Berlin in winter,
    # 10:00 in summer), its repeat rule and chat; the due one held for its channel.
    upcoming = next(line for line in out.splitlines() if "water the plants" in line)
    assert " Europe/Berlin, repeats at 09:00 every day ('0 9 * * *') [telegram:42]" in upcoming
    assert ("09:00 Europe" in upcoming) or ("10:00 Europe" in upcoming), upcoming
    assert "due and waiting (1):" in out
    held = next(line for line in out.splitlines() if "stretch" in line)
    assert "#2 reminder at " in held and "fires when one runs channel cli" in held, held
    assert f"store: sqlite:{data / 'bot.db'}" in out

    code, report = await as_json(env)
    assert code == 3 and report["daemon"] == "not running" and report["live"] is None
    assert report["queue"] == {"inbox": 1, "outbox": 1}
    assert [r["text"] for r in report["reminders"]["next"]] == ["water the plants"]
    assert report["reminders"]["next"][0]["repeat"] == "0 9 * * *"
    assert [r["id"] for r in report["reminders"]["waiting"]] == [2]
    assert report["replicas"] is None  # SQLite: one process, no cluster


async def test_a_missing_database_is_not_created_and_web_off_cannot_tell(tmp_path: Path) -> None:
    data = tmp_path / "data"
    code, out, _ = await bot_status(bot_env(data, BOT_WEB__ENABLED="false"))
    assert code == 4 and out.startswith("daemon: unknown ([web] is disabled"), out
    assert "no database yet" in out and not data.exists()
    code, out, err = await bot_status(bot_env(data, BOT_WEB__PORT="not-a-port"))
    assert code == 2 and not out and len(err.strip().splitlines()) == 1, err
    assert err.startswith("error: ") and "web.port" in err, err


async def test_a_running_daemon_answers_through_its_web_endpoint(
    tmp_path: Path, fake_llm: FakeLLM, fake_telegram: FakeTelegram
) -> None:
    data = tmp_path / "data"
    await seed("", data)
    env = bot_env(
        data, fake_llm, fake_telegram, BOT_WEB__PORT=str(free_port()), BOT_MCP__SERVERS=MCP
    )
    code, out, _ = await bot_status(env)
    assert code == 3 and "MCP servers: fake not running" in out, out  # from the config
    daemon = await BotProcess.start(env, tmp_path)
    try:
        # After litellm's background import, which holds the GIL for seconds: a loaded
        # test machine could otherwise outwait the status request.
        await daemon.wait_line("litellm warm-up import finished", timeout=60)
        code, out, err = await bot_status(env)
        for _ in range(20):  # MCP servers connect after ready:, in the background
            if "MCP servers: fake ready" in out:
                break
            await asyncio.sleep(0.5)
            code, out, err = await bot_status(env)
        assert (code, err) == (0, ""), out + err
        assert "MCP servers: fake ready" in out, out
        first = out.splitlines()[0]
        assert first.startswith("daemon: running at http://127.0.0.1:") and "healthy" in first
        assert f"(pid {daemon.proc.pid}, ready for " in first, first
        assert "model: openai/fake-model" in out and "channels: telegram ok" in out
        # The daemon answered the waiting message and delivered its reply meanwhile or
        # will: the queue line is the live daemon's, with its turns.
        assert "turns running" in out
        held = next(line for line in out.splitlines() if "stretch" in line)
        assert "(channel cli is not running)" in held, out
        code, report = await as_json(env)
        assert code == 0 and report["daemon"] == "running"
        live = report["live"]
        assert live["status"] == "ok" and live["channels"] == {"telegram": "ok"}
        assert live["mcp"] == report["mcp"] == {"fake": "ready"}
        assert live["model"] == "openai/fake-model" and live["pid"] == daemon.proc.pid
        assert set(live["queue"]) == {"inbox", "waiting", "running", "outbox"}
    finally:
        assert await daemon.stop() == 0, daemon.log
    code, out, _ = await bot_status(env)
    assert code == 3 and out.startswith("daemon: not running"), out


async def test_a_daemon_with_a_failing_channel_exits_1(
    daemon_factory: DaemonFactory, tmp_path: Path
) -> None:
    daemon, channel = await daemon_factory(data_dir=tmp_path / "data")
    channel.put_inbound = None  # the platform connection dropped
    assert daemon.web is not None
    env = bot_env(tmp_path / "data")
    code, out, _ = await bot_status(env, "--url", daemon.web.url)
    assert code == 1, out
    assert "FAILING: channel:test" in out.splitlines()[0], out
    assert "\n  channel:test: not connected\n" in out
    code, report = await as_json(env, "--url", daemon.web.url)
    assert code == 1 and report["live"]["failing"] == ["channel:test"]

    alone, _ = await daemon_factory(data_dir=tmp_path / "alone", channel=NoChannel())
    assert alone.web is not None
    code, out, _ = await bot_status(bot_env(tmp_path / "alone"), "--url", alone.web.url)
    assert code == 1 and "FAILING: " in out.splitlines()[0], out
    assert "\n  channels: no channel is running: every configured one failed" in out, out


class NoChannel(FakeChannel):
    """A platform whose start fails (a refused token): the daemon runs with no channel."""

    async def start(self, put_inbound: Any) -> None:
        raise ChannelError("the token was refused")


async def test_postgres_lists_live_replicas_and_their_leases(tmp_path: Path) -> None:
    async with throwaway_schema() as url:
        await seed(url, tmp_path / "data")
        conn = await asyncpg.connect(url)
        try:
            one = LeaseTable(conn, "bot-a-1", ttl_ms=60_000)
            two = LeaseTable(conn, "bot-b-2", ttl_ms=60_000)
            await one.beat("host-a", 101, utcnow().isoformat(), "127.0.0.1:8765")
            await two.beat("host-b", 202, utcnow().isoformat(), "127.0.0.1:8766")
            await one.take(["telegram:poll"], 1)
            await one.take([f"chats:{n}" for n in range(4)], 2)
            await two.take([f"chats:{n}" for n in range(4)], 2)
            env = bot_env(
                tmp_path / "data",
                BOT_STORE__URL=url,
                BOT_WEB__PORT=str(free_port()),
                BOT_CHANNELS__TELEGRAM__TOKEN="123:abc",
            )
            code, out, err = await bot_status(env)
            assert (code, err) == (4, ""), out + err  # not here, but the replicas beat
            # It said "telegram not running" while the replicas ran it.
            assert "channels: telegram run by the replicas (not seen from here)\n" in out, out
            assert out.startswith("daemon: running elsewhere (nothing answers at"), out
            assert "; 2 replica(s) beat in the store)" in out.splitlines()[0]
            assert "replicas: 2 live" in out
            assert "  bot-a-1 (live, pid 101 on host-a, seen " in out
            assert "    leases: 2 chat partitions, telegram:poll#1" in out
            assert "  bot-b-2 (live, pid 202 on host-b, seen " in out
            assert "    leases: 2 chat partitions\n" in out
            assert "password" not in out and "reminders: 2 active" in out
            code, report = await as_json(env)
            replicas = {r["replica"]: r for r in report["replicas"]}
            assert {h["name"] for h in replicas["bot-a-1"]["leases"]} == {
                "chats:0",
                "chats:1",
                "telegram:poll",
            }
            assert {h["name"] for h in replicas["bot-b-2"]["leases"]} == {"chats:2", "chats:3"}
            await one.leave()
            await two.leave()
            code, out, _ = await bot_status(env)
            assert code == 3 and "replicas: 0 live" in out, out
        finally:
            await conn.close()
