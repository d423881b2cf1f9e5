"""``bot init``: the questions at a terminal (fed on stdin here), then the doctor; the
same answers as options for scripts; the next step printed either way."""

from __future__ import annotations

import asyncio
import stat
import tomllib
from pathlib import Path

from typer.testing import CliRunner

from bot.cli.app import app
from bot.cli.init import set_key
from tests.fakes.llm_server import FakeLLM


def _read(path: Path) -> dict:
    return tomllib.loads(path.read_text(encoding="utf-8"))


async def test_the_questions_then_the_doctor(tmp_path: Path, fake_llm: FakeLLM, monkeypatch):
    monkeypatch.chdir(tmp_path)
    answers = f"openai/fake-model\n{fake_llm.url}\nsk-init-1\n123:token\n42\n"
    args = ["init", "--interactive", "--offline", "-c", "bot.toml"]
    # In a thread: the doctor runs its own event loop while the fake serves on ours.
    result = await asyncio.to_thread(CliRunner().invoke, app, args, input=answers)
    assert result.exit_code == 0, result.output
    written = _read(tmp_path / "bot.toml")
    assert written["llm"]["model"] == "openai/fake-model"
    assert written["llm"]["api_base"] == fake_llm.url and written["llm"]["api_key"] == "sk-init-1"
    assert written["channels"]["telegram"]["token"] == "123:token"
    assert written["admins"] == ["telegram:42"]
    assert stat.S_IMODE((tmp_path / "bot.toml").stat().st_mode) == 0o600
    assert "model openai/fake-model" in result.output and fake_llm.requests  # the doctor ran
    assert "sk-init-1" not in result.output
    assert result.output.rstrip().endswith("next: `bot run` starts the bot")


def test_an_empty_token_skips_the_platform(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["init", "--interactive", "--offline", "-c", "bot.toml"]
    result = CliRunner().invoke(app, args, input="\n\n\n\n")
    written = _read(tmp_path / "bot.toml")
    assert written["llm"]["model"] == "openai/gpt-4o-mini" and written["admins"] == []
    assert written["channels"]["telegram"]["token"] == ""
    assert "internet" in result.output  # the doctor ran (offline)


def test_options_for_scripts_and_the_next_step(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["init", "-c", "bot.toml", "--model", "ollama_chat/llama3.1"]
    args += ["--api-base", "http://127.0.0.1:11434", "--admin", "slack:U1"]
    args += ["--set", "channels.telegram.token=1:t", "--set", "agent.typing_after_s=2"]
    result = CliRunner().invoke(app, args)  # stdin is not a terminal: no question
    assert result.exit_code == 0, result.output
    written = _read(tmp_path / "bot.toml")
    assert written["llm"]["model"] == "ollama_chat/llama3.1"
    assert written["llm"]["api_base"] == "http://127.0.0.1:11434"
    assert written["admins"] == ["slack:U1"]
    assert written["channels"]["telegram"]["token"] == "1:t"
    assert "next: `bot doctor` checks the set-up, `bot run` starts the bot" in result.output
    again = CliRunner().invoke(app, ["init", "-c", "bot.toml", "--model", "x/y"])
    assert "exists; not overwritten" in again.output and _read(tmp_path / "bot.toml") == written


def test_set_key_keeps_the_comment_and_adds_a_missing_key() -> None:
    text = 'top = 1\n\n[llm]\nmodel = "a"   # the model\n\n[web]\nport = 1\n'
    changed = set_key(set_key(text, "llm", "model", "b"), "llm", "extra", "c")
    assert 'model = "b"   # the model' in changed
    assert tomllib.loads(changed) == {
        "top": 1,
        "llm": {"model": "b", "extra": "c"},
        "web": {"port": 1},
    }
