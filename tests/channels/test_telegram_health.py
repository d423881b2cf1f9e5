"""A started Telegram channel is healthy only while it works: polls that keep failing (409
conflict, a revoked token) or webhook deliveries Telegram reports failing make
``/healthz`` say so, the log says why once, and both say when it works again."""

from __future__ import annotations

import logging
import time
from typing import Any

import aiohttp
import pytest

from channels.telegram.adapter import Backoff, TelegramChannel
from channels.telegram.settings import TelegramSettings
from tests.fakes import telegram_api
from tests.fakes.telegram_api import FakeTelegram
from tests.fakes.waiting import until
from tests.fakes.web_client import channel_state

fake_telegram = telegram_api.fake_telegram
telegram_daemon = telegram_api.telegram_daemon

CONFLICT = "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"  # noqa: E501


def _failed_polls(tg: FakeTelegram) -> int:
    return sum(not c.ok for c in tg.calls_to("getUpdates"))


def _lines(caplog: pytest.LogCaptureFixture, text: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if text in r.getMessage()]


async def test_polls_failing_make_healthz_degraded_with_the_reason_then_recover(
    telegram_daemon: Any, fake_telegram: FakeTelegram, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    daemon, _ = await telegram_daemon()
    assert (await channel_state(daemon, "telegram"))[:3] == (200, [], "ok")
    fake_telegram.fail("getUpdates", 409, CONFLICT, times=1000)
    await until(lambda: _failed_polls(fake_telegram) >= 6, 10)
    status, failing, said, connected = await channel_state(daemon, "telegram")
    assert (status, failing, connected) == (503, ["channel:telegram"], 0)
    assert said.startswith("polling failing since ") and CONFLICT in said, said
    assert "Conflict" in said and "in a row" in said
    degraded = _lines(caplog, "telegram degraded")
    assert len(degraded) == 1 and CONFLICT in degraded[0], degraded  # once, not per poll
    assert not _lines(caplog, "recovered")
    fake_telegram.message("said during the outage")
    fake_telegram.clear_failures("getUpdates")
    await fake_telegram.wait_sent(1)  # nothing lost
    assert (await channel_state(daemon, "telegram"))[:3] == (200, [], "ok")
    recovered = _lines(caplog, "telegram recovered")
    assert len(recovered) == 1 and "polling works again" in recovered[0], recovered
    assert len(_lines(caplog, "telegram degraded")) == 1


async def test_a_revoked_token_is_an_error_said_once_without_the_token(
    fake_telegram: FakeTelegram, caplog: pytest.LogCaptureFixture
) -> None:
    settings = TelegramSettings(token=fake_telegram.token, base_url=fake_telegram.base_url)
    channel = TelegramChannel(settings, poll_timeout=1, backoff=Backoff(0.02, 0.05))

    async def put(_msg: Any) -> None:
        return None

    await channel.start(put)
    try:
        assert channel.connected
        fake_telegram.fail("getUpdates", 401, "Unauthorized", times=1000)
        await until(lambda: _failed_polls(fake_telegram) >= 5, 10)
        health = channel.health()
        assert not health.ok and not channel.connected
        assert "InvalidToken" in health.reason and fake_telegram.token not in health.reason
    finally:
        await channel.stop()
    errors = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert [r.levelno for r in errors] == [logging.ERROR], [r.getMessage() for r in errors]
    assert fake_telegram.token not in caplog.text


async def test_webhook_deliveries_telegram_reports_failing_degrade_until_one_arrives(
    telegram_daemon: Any, fake_telegram: FakeTelegram, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    secret = "s3cret-token_value"
    daemon, channel = await telegram_daemon(
        mode="webhook",
        webhook_url="https://bot.example.com/tg/hook",
        webhook_secret=secret,
        webhook_check_s=0.05,
    )
    await until(lambda: len(fake_telegram.calls_to("getWebhookInfo")) >= 2)
    assert (await channel_state(daemon, "telegram"))[:3] == (200, [], "ok")
    failed_at = int(time.time()) + 1  # after the channel started: a failure of ours
    fake_telegram.webhook_error = (failed_at, "Connection refused")
    fake_telegram.pending_updates = 3
    await until(lambda: not channel.connected)
    status, failing, said, _ = await channel_state(daemon, "telegram")
    assert (status, failing) == (503, ["channel:telegram"])
    assert "Telegram cannot deliver (3 updates waiting): Connection refused" in said, said
    assert len(_lines(caplog, "telegram degraded")) == 1
    # Telegram's retry gets through: the error it keeps is older than that delivery.
    await until(lambda: time.time() > failed_at, 3)
    update = {"update_id": 1, "message": fake_telegram.make_message("back", message_id=4)}
    headers = {"X-Telegram-Bot-Api-Secret-Token": secret}
    assert daemon.web is not None
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{daemon.web.url}/tg/hook", json=update, headers=headers) as resp,
    ):
        assert resp.status == 200
    await until(lambda: len(fake_telegram.calls_to("getWebhookInfo")) >= 12)
    assert channel.connected and (await daemon.health()).ok
    assert len(_lines(caplog, "telegram recovered")) == 1
    # Someone switched the bot to polling: the webhook is gone.
    fake_telegram.webhook = {}
    await until(lambda: not channel.connected)
    assert "Telegram's webhook is now no webhook" in channel.health().reason
