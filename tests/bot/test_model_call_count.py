"""bot_model_calls_total counts every HTTP attempt (README), the ones a /stop or shutdown
cuts short too: a cancellation is a BaseException, and only ``except Exception``
counted, so a stopped turn's request reached the model and was never counted."""

from __future__ import annotations

from typing import Any

from bot.dispatcher.stops import STOPPED
from tests.fakes.web_client import metrics, value

MODEL = {"model": "openai/fake-model"}


async def test_an_attempt_a_stop_cuts_short_is_counted_as_cancelled(
    daemon_factory: Any, fake_llm: Any
) -> None:
    daemon, chat = await daemon_factory()
    release = fake_llm.held_answer("never said")
    await chat.say("write me a long essay")
    await fake_llm.wait_requests(1)  # the request is out, its answer held
    assert (await chat.reply(await chat.say("/stop"))).text == STOPPED
    release.set()
    m = await metrics(daemon)
    assert len(fake_llm.requests) == 1
    assert value(m, "bot_model_calls_total", **MODEL) == 1
    assert value(m, "bot_model_errors_total", **MODEL, kind="cancelled") == 1
    assert (await chat.ask("and now a haiku")).text == "echo: and now a haiku"
    m = await metrics(daemon)
    assert value(m, "bot_model_calls_total", **MODEL) == 2
    assert value(m, "bot_model_errors_total", **MODEL, kind="cancelled") == 1
