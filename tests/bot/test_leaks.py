"""What a user sees of a failure is generic, with an error id; the details go to the log,
and no secret (the key, a fragment of it, a key in api_base, a bot token) reaches either."""

from __future__ import annotations

import base64
import logging
import socket
import warnings

import pytest

from bot.messages import OutboundKind
from bot.ops.redaction import Redactor, protect_logs
from tests.conftest import DaemonFactory
from tests.fakes import telegram_api
from tests.fakes.llm_server import FakeLLM

fake_telegram = telegram_api.fake_telegram
telegram_daemon = telegram_api.telegram_daemon

KEY = "sk-test-secret"  # tests.conftest.make_settings' llm.api_key
KEY_B64 = base64.b64encode(KEY.encode()).decode().rstrip("=")


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_rejected_key_reply_is_generic_and_the_log_keeps_no_fragment(
    daemon_factory: DaemonFactory, fake_llm: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    _, chat = await daemon_factory()
    echoed = f"Incorrect API key provided: {KEY[:7]}****{KEY[-4:]} (sent as {KEY_B64}, {KEY})"
    fake_llm.reply_error(401, {"error": {"message": echoed, "type": "invalid_request_error"}})
    reply = await chat.ask("hello")
    assert reply.kind is OutboundKind.ERROR
    assert "error id" in reply.text
    for leak in (KEY, KEY[:7], KEY_B64, "Incorrect API key", fake_llm.url):
        assert leak not in reply.text
    assert "Incorrect API key provided" in caplog.text  # the operator still sees what happened
    for leak in (KEY, f"{KEY[:7]}****", KEY_B64):
        assert leak not in caplog.text


async def test_unreachable_api_base_with_a_key_in_its_query(
    daemon_factory: DaemonFactory, fake_llm: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    base = f"http://127.0.0.1:{_closed_port()}/v1?api-key=qs-secret-4242"
    _, chat = await daemon_factory(llm={"api_base": base, "max_retries": 0})
    reply = await chat.ask("hello")
    assert reply.kind is OutboundKind.ERROR
    assert "unavailable" in reply.text and "error id" in reply.text
    assert "qs-secret-4242" not in reply.text and "127.0.0.1" not in reply.text
    assert "connection error" in caplog.text
    assert "qs-secret-4242" not in caplog.text


def test_python_warnings_pass_the_redacting_log(caplog: pytest.LogCaptureFixture) -> None:
    secret = "sk-live-0123456789abcdef"
    protect_logs([secret])
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn(
            f"Pydantic serializer warnings: input_value='{secret}'", UserWarning, stacklevel=1
        )
    (record,) = [r for r in caplog.records if r.name == "py.warnings"]
    assert "Pydantic serializer warnings" in record.getMessage()
    assert secret not in caplog.text


async def test_debug_logs_never_show_the_bot_token(
    telegram_daemon, fake_telegram, fake_llm, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="telegram")  # as if the CLI had not quieted it
    caplog.set_level(logging.DEBUG, logger="httpx")
    await telegram_daemon()
    fake_telegram.add_update({"message": fake_telegram.make_message("hi there")})
    await fake_telegram.wait_sent(1)
    secret = fake_telegram.token.split(":", 1)[1]
    assert any("getUpdates" in r.getMessage() for r in caplog.records)  # URLs are logged...
    assert secret not in caplog.text  # ...without the token


async def test_a_placeholder_key_is_not_treated_as_a_secret(
    daemon_factory: DaemonFactory, caplog: pytest.LogCaptureFixture
) -> None:
    """The placeholder the bot suggests for a local server ("none") must not turn every
    ``channels=none`` into ``channels=***``; start-up says it was not masked."""
    caplog.set_level(logging.INFO)
    await daemon_factory(llm={"api_key": "none"})
    logging.getLogger("tests.leaks").info("ready: channels=none model=x")
    assert "ready: channels=none model=x" in caplog.text
    assert "not masked: too short or too common" in caplog.text


@pytest.mark.parametrize("value", ["", "x", "none", "NONE", "dummy12", "changeme"])
def test_values_too_short_or_too_common_are_never_masked(value: str) -> None:
    redactor = Redactor()
    assert redactor.add([value]) == ([value] if value else [])
    assert redactor(f"say {value} here") == f"say {value} here"


def test_a_real_secret_is_still_masked() -> None:
    redactor = Redactor()
    assert redactor.add(["s3cret-value-42"]) == []
    assert redactor("token s3cret-value-42 used") == "token *** used"
