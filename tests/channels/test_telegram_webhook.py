"""Webhook mode: a route on the shared web app, the secret token checked, same normalize path."""

from __future__ import annotations

import asyncio
import json
from urllib.parse import urlsplit

import aiohttp

from tests.fakes import telegram_api

fake_telegram = telegram_api.fake_telegram
telegram_daemon = telegram_api.telegram_daemon

SECRET = "s3cret-token_value"


async def _webhook(telegram_daemon):
    daemon, channel = await telegram_daemon(
        mode="webhook",
        webhook_url="https://bot.example.com/tg/hook",
        webhook_secret=SECRET,
        webhook_port=0,
    )
    # The route lives on the daemon's shared [web] app, next to /healthz and /metrics.
    return daemon, channel, f"http://127.0.0.1:{daemon.web.port}/tg/hook"


async def _post(url: str, update: dict, secret: str | None) -> int:
    headers = {"X-Telegram-Bot-Api-Secret-Token": secret} if secret is not None else {}
    async with aiohttp.ClientSession() as http, http.post(url, json=update, headers=headers) as r:
        return r.status


async def test_webhook_checks_the_secret_and_answers(telegram_daemon, fake_telegram, fake_llm):
    daemon, channel, url = await _webhook(telegram_daemon)
    assert channel.connected
    hook = fake_telegram.webhook
    assert hook["url"] == "https://bot.example.com/tg/hook"
    assert hook["secret_token"] == SECRET
    assert hook["allowed_updates"] == ["message", "edited_message"]
    assert not fake_telegram.calls_to("getUpdates")
    update = {"update_id": 1, "message": fake_telegram.make_message("via webhook", message_id=4)}
    assert await _post(url, update, "wrong") == 403
    assert await _post(url, update, None) == 403
    assert fake_llm.requests == []
    assert not await daemon.bus.inbox.pending()
    assert await _post(url, update, SECRET) == 200
    assert await _post(url, update, SECRET) == 200  # Telegram's redelivery: deduplicated
    second = {"update_id": 2, "message": fake_telegram.make_message("second", message_id=5)}
    assert await _post(url, second, SECRET) == 200
    sent = await fake_telegram.wait_sent(2)
    assert [c.params["text"] for c in sent] == ["echo: via webhook", "echo: second"]
    assert len(fake_llm.requests) == 2


async def test_webhook_rejects_garbage_without_crashing(telegram_daemon, fake_telegram):
    _, channel, url = await _webhook(telegram_daemon)
    async with aiohttp.ClientSession() as http:
        headers = {"X-Telegram-Bot-Api-Secret-Token": SECRET}
        async with http.post(url, data=b"not json", headers=headers) as r:
            assert r.status == 400
        async with http.post(url, json=[1, 2], headers=headers) as r:
            assert r.status == 400
        async with http.post(url, json={"update_id": 3, "poll": {"id": 1}}, headers=headers) as r:
            assert r.status == 200  # unreadable update: acknowledged and skipped
    assert channel.connected


def test_webhook_without_secret_is_refused_with_the_settings() -> None:
    """Said at load and by `bot doctor`, not by a channel that fails to start."""
    import pytest
    from pydantic import ValidationError

    from channels.telegram.settings import TelegramSettings

    url = "https://bot.example.com/hook"
    with pytest.raises(ValidationError, match="webhook mode needs webhook_secret"):
        TelegramSettings(token="1:abc", mode="webhook", webhook_url=url)


async def test_refused_set_webhook_leaves_the_daemon_running(
    telegram_daemon, fake_telegram, caplog
):
    fake_telegram.fail("setWebhook", 400, "Bad Request: bad webhook: HTTPS url must be provided")
    daemon, channel, _ = await _webhook(telegram_daemon)
    assert not channel.connected
    assert "webhook could not be set up" in caplog.text
    assert daemon.ready_s is not None


async def _raw_post(url: str, secret: bytes, body: bytes) -> tuple[int, bytes]:
    """One request written byte by byte: clients refuse to send a non-ASCII header."""
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    head = (
        f"POST {parts.path} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n"
    ).encode()
    writer.write(head + b"X-Telegram-Bot-Api-Secret-Token: " + secret + b"\r\n\r\n" + body)
    await writer.drain()
    response = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    status = int(response.split(b" ", 2)[1])
    return status, response


async def test_non_ascii_secret_header_is_a_clean_403(telegram_daemon, fake_telegram, caplog):
    _, channel, url = await _webhook(telegram_daemon)
    update = json.dumps({"update_id": 9}).encode()
    for secret in ("s3cret-tökén".encode(), b"\xff\xfe\x80", "秘密".encode()):
        status, _ = await _raw_post(url, secret, update)
        assert status == 403
    assert "Traceback" not in caplog.text and "Error handling request" not in caplog.text
    assert channel.connected


async def test_deeply_nested_json_is_a_400(telegram_daemon, fake_telegram, fake_llm, caplog):
    daemon, _, url = await _webhook(telegram_daemon)
    nested = b'{"update_id": 1, "message": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    status, _ = await _raw_post(url, SECRET.encode(), nested)
    assert status == 400
    assert "Traceback" not in caplog.text
    assert not await daemon.bus.inbox.pending() and fake_llm.requests == []


async def test_wrong_secret_warnings_are_rate_limited(telegram_daemon, fake_telegram, caplog):
    _, channel, url = await _webhook(telegram_daemon)
    now = [1000.0]
    channel.webhook.refusals.clock = lambda: now[0]
    update = {"update_id": 1}
    for _ in range(20):
        assert await _post(url, update, "wrong") == 403
    now[0] += 61
    assert await _post(url, update, "wrong") == 403
    warnings = [r.getMessage() for r in caplog.records if "wrong secret" in r.getMessage()]
    assert len(warnings) == 2, warnings
    assert "19 more" in warnings[1]
