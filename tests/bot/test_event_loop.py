"""``event_loop``: ``bot run`` runs on uvloop where it is installed (a dependency on CPython
for Linux and macOS), on asyncio's loop when asked or when uvloop is missing, and a
``"uvloop"`` it cannot honour is one clear config error, not a traceback."""

from __future__ import annotations

import asyncio
import sys

import pytest

from bot.cli import process
from bot.config import load_settings
from bot.errors import ConfigError
from bot.ops.loop import EventLoopChoice, loop_factory, loop_name
from tests.fakes.process import DEFAULT_LOOP, UVLOOP_INSTALLED


@pytest.fixture
def no_uvloop(monkeypatch):
    """uvloop cannot be imported, as on a platform it does not build for."""
    monkeypatch.setitem(sys.modules, "uvloop", None)


def _finished_on(choice: EventLoopChoice) -> str:
    seen: list[str] = []

    async def command() -> int:
        seen.append(loop_name(asyncio.get_running_loop()))
        return 0

    assert process.finish(command(), choice) == 0
    return seen[0]


def test_auto_runs_on_uvloop_wherever_the_dependency_installs_it():
    """Where the marker installs uvloop, auto and uvloop run on it; elsewhere auto is
    asyncio's loop and "uvloop" is the config error below."""
    assert _finished_on("auto") == DEFAULT_LOOP
    if UVLOOP_INSTALLED:
        import uvloop

        assert loop_factory("auto") is uvloop.new_event_loop
        assert _finished_on("uvloop") == "uvloop"
    else:
        assert loop_factory("auto") is None


def test_asyncio_runs_on_the_standard_loop():
    assert loop_factory("asyncio") is None
    assert _finished_on("asyncio") == "asyncio"


def test_auto_falls_back_to_asyncio_without_uvloop(no_uvloop):
    assert loop_factory("auto") is None
    assert _finished_on("auto") == "asyncio"


def test_uvloop_required_but_missing_is_a_config_error(no_uvloop, capsys):
    with pytest.raises(ConfigError, match=r'event_loop = "uvloop" but uvloop cannot be imported'):
        loop_factory("uvloop")

    async def never_run() -> int:
        raise AssertionError("the command ran without its loop")

    coro = never_run()
    assert process.finish(coro, "uvloop") == 2
    coro.close()
    err = capsys.readouterr().err
    assert err.startswith("error: ") and 'event_loop = "auto"' in err and "Traceback" not in err


def test_event_loop_setting_defaults_to_auto_and_names_its_choices(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert load_settings(None).event_loop == "auto"
    monkeypatch.setenv("BOT_EVENT_LOOP", "asyncio")
    assert load_settings(None).event_loop == "asyncio"
    monkeypatch.setenv("BOT_EVENT_LOOP", "trio")
    with pytest.raises(ConfigError, match=r"event_loop.*'auto', 'uvloop' or 'asyncio'"):
        load_settings(None)
