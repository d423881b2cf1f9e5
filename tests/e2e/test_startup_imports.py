"""What the real `bot run` process has imported when it logs `ready:`, with Telegram on
(the fake Bot API): the configured channel's SDK, and not what it does not need yet
(disabled platforms' SDKs, the CLI framework and the admin sub-commands, the agent side
with its tools, tool schema checks, skill parsing, litellm, httpx's CLI, the retry and
metrics libraries).

The list is taken inside the process at the moment the ready line is logged, so it
is cheap and exact: no timing is asserted here (that is `make bench`)."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path

import pytest

from tests.fakes import telegram_api
from tests.fakes.llm_server import FakeLLM
from tests.fakes.process import BotProcess, bot_env
from tests.fakes.telegram_api import FakeTelegram

pytestmark = pytest.mark.slow  # a subprocess; still run by make test

fake_telegram = telegram_api.fake_telegram

MARK = "MODULES AT READY "
# `python -m bot run`, plus a handler that lists sys.modules when `ready:` is logged.
CHILD = f"""
import json, logging, sys

class AtReady(logging.Handler):
    def emit(self, record):
        if record.getMessage().startswith("ready:"):
            loaded = sorted(n for n, m in sys.modules.items() if m is not None)
            sys.stderr.write({MARK!r} + json.dumps(loaded) + "\\n")

logging.getLogger("bot.daemon").addHandler(AtReady())
sys.argv = ["bot", "run"]
from bot.cli.launch import main
main()
"""

NOT_BEFORE_READY = (
    "slack_bolt",  # disabled platforms' SDKs
    "slack_sdk",
    "discord",
    "channels.slack.adapter",
    "channels.discord.adapter",
    "typer",  # the CLI framework: `bot run` is parsed by bot.cli.launch
    "bot.cli.app",
    "bot.cli.shared",  # what every other command shares
    "bot.cli.memory",  # admin sub-commands
    "bot.cli.workspace",
    "bot.cli.pairing",
    "bot.cli.status",  # `bot status` and what it reads
    "bot.cli.status_store",
    "jsonschema",  # tool schemas are checked right after ready
    "yaml",  # skill files are parsed at the first prompt
    "litellm",  # its warm-up starts after ready
    "bot.app_agent",  # the agent side is built right after ready (no turn runs before)
    "bot.agent.runner",
    "bot.agent.llm.client",
    "bot.agent.memory",
    "bot.agent.skills",
    "bot.handlers.turn",
    "tools",  # the tool registry, weather, MCP
    "tenacity",  # retries import it at their first failure
    "prometheus_client",  # metrics load it at the first count or scrape
    "httpx._main",  # httpx's command-line client
    "rich",  # ... and what only that client imports
    "pyromark",  # the Markdown parser finding code in answers: at the first answer
)


async def _modules_at_ready(tmp_path: Path, llm: FakeLLM, tg: FakeTelegram) -> list[str]:
    proc = await asyncio.create_subprocess_exec(
        *(sys.executable, "-c", CHILD),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env=bot_env(tmp_path / "data", llm, tg),
        cwd=tmp_path,
    )
    bot = BotProcess(proc)
    try:
        ready = await bot.wait_line(": ready: ")
        line = await bot.wait_line(MARK)
    finally:
        code = await bot.stop(signal.SIGTERM)
    assert code == 0, bot.log
    assert "channels=telegram" in ready
    loaded: list[str] = json.loads(line.split(MARK, 1)[1])
    return loaded


async def test_bot_run_is_ready_without_what_it_does_not_need_yet(
    tmp_path, fake_llm, fake_telegram
):
    loaded = await _modules_at_ready(tmp_path, fake_llm, fake_telegram)
    assert {"telegram", "channels.telegram.adapter", "aiohttp", "apscheduler"} <= set(loaded)
    early = [
        name
        for name in loaded
        for unwanted in NOT_BEFORE_READY
        if name == unwanted or name.startswith(unwanted + ".")
    ]
    assert early == []
