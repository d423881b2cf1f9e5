"""A person who blocks the bot (or removes it from their group) is routine churn: its
refused delivery is an INFO line, not an ERROR an operator is paged for; any other
refusal (a message the platform will never take) stays an ERROR."""

from __future__ import annotations

import logging

import pytest

from bot.errors import ChatGone, DeliveryRejected
from bot.messages import OutboundMessage
from channels.base import Sent
from tests.conftest import DaemonFactory
from tests.fakes.channel import FakeChannel
from tests.fakes.waiting import until


class Refusing(FakeChannel):
    """Takes every message in, refuses every answer with ``refusal``."""

    def __init__(self, refusal: DeliveryRejected) -> None:
        super().__init__()
        self.refusal = refusal

    async def send(self, msg: OutboundMessage) -> Sent:
        raise self.refusal


@pytest.mark.parametrize(
    ("refusal", "level"),
    [
        (ChatGone("Forbidden: bot was blocked by the user"), logging.INFO),
        (DeliveryRejected("Bad Request: message is too long"), logging.ERROR),
    ],
)
async def test_a_blocked_bot_is_info_and_other_refusals_are_errors(
    daemon_factory: DaemonFactory,
    caplog: pytest.LogCaptureFixture,
    refusal: DeliveryRejected,
    level: int,
) -> None:
    caplog.set_level(logging.INFO, logger="bot.delivery")
    _, chat = await daemon_factory(channel=Refusing(refusal))
    await chat.say("hello")

    def refused() -> list[logging.LogRecord]:
        return [r for r in caplog.records if "refused:" in r.getMessage()]

    await until(refused)
    [record] = refused()
    assert record.name == "bot.delivery" and record.levelno == level
    assert record.getMessage().endswith(f"refused: {refusal}")
