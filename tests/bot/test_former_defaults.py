"""A config an earlier ``bot init`` wrote pins that day's defaults: each key set to a
default that has since changed is named at load and in ``bot doctor``, with the default
it has now; a fresh config, or any value that is no former default, says nothing."""

from __future__ import annotations

import asyncio
import logging
import re
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli.app import app
from bot.config.former_defaults import FORMER_DEFAULTS, current_default
from bot.config.settings import Settings, load_settings
from tests.fakes.llm_server import FakeLLM

OLD_CONFIGS = sorted((Path(__file__).parent / "old_configs").glob("*.toml"))


def _former_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and "earlier version's default" in r.getMessage()
    ]


def _named(lines: list[str]) -> list[str]:
    return [re.search(r"'([\w.]+) = ", line).group(1) for line in lines]  # type: ignore[union-attr]


def _load(tmp_path: Path, text: str, caplog: pytest.LogCaptureFixture) -> list[str]:
    path = tmp_path / "bot.toml"
    path.write_text(text, encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        load_settings(path)
    return _former_lines(caplog)


def test_every_former_default_names_a_key_whose_default_has_since_changed() -> None:
    for path, former in FORMER_DEFAULTS.items():
        now = current_default(Settings, path)  # KeyError: the table names no key
        assert former.values, path
        for value in former.values:
            assert value != now, f"{path}: {value!r} is still the default"
            assert type(value) is type(now) or {type(value), type(now)} <= {int, float}, path


def test_the_three_defaults_earlier_inits_wrote_are_in_the_table() -> None:
    # What earlier `bot init`s wrote that differs from today's defaults (git history of
    # bot/config/ and the example config): each must be named.
    assert {p: f.values for p, f in FORMER_DEFAULTS.items()} == {
        "agent.max_concurrent_chats": (64,),
        "llm.max_concurrent_calls": (256,),
        "access.max_pending": (3,),
    }


def test_the_line_says_it_is_a_former_default_what_it_is_now_and_what_to_do(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    text = "[agent]\nmax_concurrent_chats = 64\n\n[llm]\nmax_concurrent_calls = 256\n"
    lines = _load(tmp_path, text, caplog)
    path = tmp_path / "bot.toml"
    assert lines == [
        f"config {path}: 'agent.max_concurrent_chats = 64' is an earlier version's default;"
        " the default is now 1024: delete the line to follow the default, or keep it to pin 64",
        f"config {path}: 'llm.max_concurrent_calls = 256' is an earlier version's default;"
        " the default is now 0 (by provider: 500 for a hosted API, 4 for a model server on"
        " one machine): delete the line to follow the default, or keep it to pin 256",
    ]


@pytest.mark.parametrize("config", OLD_CONFIGS, ids=lambda p: p.stem)
def test_a_config_an_earlier_init_wrote_names_each_former_default_it_pins(
    config: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    text = config.read_text(encoding="utf-8")
    data = tomllib.loads(text)
    pinned = []
    for path, former in FORMER_DEFAULTS.items():
        section, key = path.split(".")
        if data.get(section, {}).get(key, None) in former.values:
            pinned.append(path)
    assert _named(_load(tmp_path, text, caplog)) == pinned
    if config.stem == "fd975ce":  # the first release: 64 chats
        assert pinned == ["agent.max_concurrent_chats"]


@pytest.mark.parametrize(
    "text",
    [
        "",  # no file content at all
        "[agent]\nmax_concurrent_chats = 1024\n",  # today's default, written out
        "[agent]\nmax_concurrent_chats = 65\n",  # a value someone chose
        "[agent]\nmax_concurrent_chats = 32\n",
        "[access]\nmax_pending = 4\n",
        "[llm]\nmax_concurrent_calls = 255\n",
        "[llm]\nmax_concurrent_calls = 0\n",
        "[llm]\nmodel = 'openai/x'\n[channels.telegram]\nallow_from = ['3']\n",  # 3, elsewhere
    ],
)
def test_a_value_that_is_no_former_default_says_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, text: str
) -> None:
    assert _load(tmp_path, text, caplog) == []


def test_a_fresh_config_says_nothing(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from bot.app import example_config

    assert _load(tmp_path, example_config(), caplog) == []


def test_a_value_the_environment_overrides_pins_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BOT_AGENT__MAX_CONCURRENT_CHATS", "200")
    assert _load(tmp_path, "[agent]\nmax_concurrent_chats = 64\n", caplog) == []
    monkeypatch.setenv("BOT_ACCESS__MAX_PENDING", "3")  # the environment's own choice
    assert _load(tmp_path, "[access]\nmax_pending = 5\n", caplog) == []


async def test_bot_doctor_notes_each_former_default_and_still_passes(
    tmp_path: Path, fake_llm: FakeLLM
) -> None:
    config = tmp_path / "bot.toml"
    config.write_text(
        f'data_dir = "{tmp_path / "data"}"\n\n[llm]\nmodel = "openai/fake-model"\n'
        f'api_base = "{fake_llm.url}"\napi_key = "sk-1"\n\n[access]\nmax_pending = 3\n',
        encoding="utf-8",
    )
    args = ["doctor", "--offline", "--config", str(config)]
    # In a thread: the doctor runs its own event loop while the fake serves on ours.
    result = await asyncio.to_thread(CliRunner().invoke, app, args)
    assert result.exit_code == 0, result.output  # a note fails nothing
    notes = [line for line in result.output.splitlines() if line.split()[:2] == ["config", "note"]]
    assert len(notes) == 1, result.output
    assert "'access.max_pending = 3' is an earlier version's default" in notes[0]
    assert "the default is now 10: delete the line to follow the default" in notes[0]
