from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
for _var in [v for v in os.environ if v.startswith("BOT_") and not v.startswith("BOT_TEST_")]:
    del os.environ[_var]

from collections.abc import AsyncIterator, Awaitable, Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import TYPE_CHECKING, Any  # noqa: E402

import litellm  # noqa: E402, F401  (imported once here: ~4 s, so no single test pays it)
import pytest_asyncio  # noqa: E402

from bot.app import build_daemon  # noqa: E402
from bot.config import Settings  # noqa: E402
from bot.daemon import Daemon  # noqa: E402
from bot.store.base import Storage  # noqa: E402
from bot.store.db import Database  # noqa: E402
from tests.fakes.channel import FakeChannel  # noqa: E402

pytest_plugins = (
    "tests.fakes.llm_server",
    "tests.fakes.open_meteo",
    "tests.fakes.web_sites",
    "tests.fakes.postgres",
)

if TYPE_CHECKING:
    from tests.fakes.llm_server import FakeLLM

DaemonFactory = Callable[..., Awaitable[tuple[Daemon, FakeChannel]]]


@pytest_asyncio.fixture
async def db(tmp_path: Path) -> AsyncIterator[Database]:
    """An open database in the test's own directory, closed after it."""
    database = Database(tmp_path / "bot.db")
    await database.open()
    yield database
    await database.close()


def make_settings(data_dir: Path, llm_url: str, **overrides: Any) -> Settings:
    llm: dict[str, Any] = {
        "model": "openai/fake-model",
        "api_base": llm_url,
        "api_key": "sk-test-secret",
        "timeout_s": 5,
        "max_retries": 1,
    }
    llm.update(overrides.pop("llm", {}))
    # Port 0: tests run several daemons at once; each binds a free port for /healthz.
    web: dict[str, Any] = {"port": 0, **overrides.pop("web", {})}
    sections: dict[str, Any] = {"llm": llm, "web": web, **overrides}  # pydantic checks them
    return Settings(data_dir=data_dir, **sections)


@pytest_asyncio.fixture
async def daemon_factory(tmp_path: Path, fake_llm: FakeLLM) -> AsyncIterator[DaemonFactory]:
    """Start daemons on a fake channel against the fake LLM; all stopped after the test."""
    started: list[Daemon] = []

    async def factory(
        data_dir: Path | None = None,
        channel: FakeChannel | None = None,
        stores: Callable[[Database], Storage] | None = None,
        **overrides: Any,
    ) -> tuple[Daemon, FakeChannel]:
        channel = channel or FakeChannel()
        settings = make_settings(data_dir or tmp_path / "data", fake_llm.url, **overrides)
        store: dict[str, Any] = {"stores": stores} if stores else {}
        daemon = build_daemon(settings, [channel], **store)
        await daemon.start()
        started.append(daemon)
        return daemon, channel

    yield factory
    for daemon in started:
        db: Any = daemon.db  # the SQLite backend's connection: None once stopped
        if db._conn is not None:
            await daemon.stop(timeout=2)
