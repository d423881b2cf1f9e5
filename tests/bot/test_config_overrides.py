"""A key the config file sets that a ``BOT_`` variable overrides with another value is
named at load and in ``bot doctor``, by key and variable, a secret's values never shown:
the image's ``BOT_WEB__PORT=8765`` beat ``[web] port = 9000`` of a mounted bot.toml, and
the log said only "serving on 8765"."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bot.config.settings import load_settings_noted
from bot.ops.doctor import check_config

FILE_KEY = "sk-file-secret-1111"
ENV_KEY = "sk-env-secret-2222"


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bot.toml"
    path.write_text(text, encoding="utf-8")
    return path


def _overrides(notes: list[str]) -> list[str]:
    return [line for line in notes if "overridden by" in line]


def test_each_key_the_environment_overrides_is_named_with_its_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    text = f'data_dir = "/srv/bot"\n[llm]\napi_key = "{FILE_KEY}"\ntimeout_s = 30\n'
    path = _config(tmp_path, text + "[web]\nport = 9000\n")
    environment = {
        "BOT_DATA_DIR": "/data",
        "BOT_WEB__PORT": "8765",
        "BOT_WEB__HOST": "0.0.0.0",  # not in the file: nothing overridden
        "BOT_LLM__TIMEOUT_S": "30.0",  # the file's value again
        "BOT_LLM__API_KEY": ENV_KEY,
    }
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    with caplog.at_level(logging.WARNING):
        settings, notes = load_settings_noted(path)
    assert settings.web.port == 8765 and settings.data_dir == Path("/data")
    assert _overrides(notes) == [
        'data_dir = "/srv/bot" in bot.toml is overridden by BOT_DATA_DIR=/data from the '
        "environment",
        "llm.api_key in bot.toml is overridden by BOT_LLM__API_KEY from the environment "
        "(a secret: values not shown)",
        "web.port = 9000 in bot.toml is overridden by BOT_WEB__PORT=8765 from the environment",
    ]
    logged = [r.getMessage() for r in caplog.records if "overridden by" in r.getMessage()]
    assert len(logged) == 3 and all(str(path) in line for line in logged)
    assert not any(s in caplog.text + "".join(notes) for s in (FILE_KEY, ENV_KEY))


def test_a_table_variable_names_each_key_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _config(tmp_path, '[web]\nport = 9000\nhost = "127.0.0.2"\n')
    monkeypatch.setenv("BOT_WEB", '{"port": 9001}')
    assert _overrides(load_settings_noted(path)[1]) == [
        "web.port = 9000 in bot.toml is overridden by BOT_WEB (web.port = 9001) from the "
        "environment"
    ]


def test_an_empty_value_the_environment_fills_in_is_no_override(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The example config's `token = ""` and `admins = []`, filled in from bot.env.
    path = _config(tmp_path, 'admins = []\n[channels.telegram]\ntoken = ""\n')
    monkeypatch.setenv("BOT_CHANNELS__TELEGRAM__TOKEN", "123:from-env")
    monkeypatch.setenv("BOT_ADMINS", '["telegram:1"]')
    assert _overrides(load_settings_noted(path)[1]) == []


def test_doctor_names_the_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _config(tmp_path, "[web]\nport = 9000\n")
    monkeypatch.setenv("BOT_WEB__PORT", "8765")
    checks, settings = check_config(path)
    assert settings is not None
    notes = [c.detail for c in checks if c.status == "note"]
    assert notes == [
        "web.port = 9000 in bot.toml is overridden by BOT_WEB__PORT=8765 from the environment"
    ]
