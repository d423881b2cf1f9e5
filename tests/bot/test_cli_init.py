"""``bot init``: the questions at a terminal (fed on stdin here), then the doctor; the
same answers as options for scripts; the next step printed either way."""

from __future__ import annotations

import asyncio
import stat
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bot.cli.app import app
from bot.cli.toml_edit import parse_value, set_key
from bot.config import load_settings
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


@pytest.mark.parametrize(
    ("typed", "admins"),
    [
        ("Telegram:42\n", ["telegram:42"]),  # was "telegram:Telegram:42": nobody
        ("@alice\n42\n", ["telegram:42"]),  # a name matches nobody: asked again
        ("@alice\n\n", []),  # ... until an id, or nothing (pairing)
    ],
)
def test_the_admin_question_takes_an_id_as_people_type_it(
    tmp_path: Path, monkeypatch, typed: str, admins: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["init", "--interactive", "--offline", "-c", "bot.toml"]
    result = CliRunner().invoke(app, args, input=f"\n\n\n123:token\n{typed}")
    assert _read(tmp_path / "bot.toml")["admins"] == admins, result.output  # (no key: doctor fails)
    assert ("names a user by name" in result.output) is typed.startswith("@")


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
    again = CliRunner().invoke(app, ["init", "-c", "bot.toml"])
    assert "exists; not overwritten" in again.output and _read(tmp_path / "bot.toml") == written


def test_answers_for_a_config_that_exists_change_it_in_place(tmp_path: Path, monkeypatch) -> None:
    """README's local-model step after its quick start: "bot.toml exists; not
    overwritten", exit 0, the answers ignored; --force then dropped the token and the
    admins without a word."""
    monkeypatch.chdir(tmp_path)
    first = ["init", "-c", "bot.toml", "--model", "openai/gpt-4o-mini", "--api-key", "sk-1"]
    first += ["--set", "channels.telegram.token=123456:ABC", "--admin", "telegram:42"]
    assert CliRunner().invoke(app, first).exit_code == 0
    local = ["--model", "ollama_chat/llama3.1", "--api-base", "http://127.0.0.1:11434"]
    result = CliRunner().invoke(app, ["init", "-c", "bot.toml", *local, "--admin", "slack:U1"])
    assert result.exit_code == 0, result.output
    assert "changed in bot.toml: llm.model, llm.api_base, admins (the rest kept)" in result.output
    text = (tmp_path / "bot.toml").read_text(encoding="utf-8")
    written = tomllib.loads(text)
    assert written["llm"]["model"] == "ollama_chat/llama3.1"
    assert written["llm"]["api_base"] == "http://127.0.0.1:11434"
    assert written["llm"]["api_key"] == "sk-1"  # kept
    assert written["channels"]["telegram"]["token"] == "123456:ABC"
    assert written["admins"] == ["telegram:42", "slack:U1"]  # joined, not replaced
    assert "# any litellm model string" in text  # the comments stay
    assert "sk-1" not in result.output and "123456:ABC" not in result.output
    same = CliRunner().invoke(app, ["init", "-c", "bot.toml", *local])
    assert (
        "already so, nothing changed" in same.output
        and (tmp_path / "bot.toml").read_text(encoding="utf-8") == text
    )
    refused = CliRunner().invoke(app, ["init", "-c", "bot.toml", "--set", "web.port=x"])
    assert refused.exit_code == 2 and "web.port" in refused.stderr, refused.output
    assert (tmp_path / "bot.toml").read_text(encoding="utf-8") == text  # nothing written

    force = CliRunner().invoke(app, ["init", "-c", "bot.toml", "--force", *local])
    assert force.exit_code == 0, force.output
    assert (
        "--force: started from scratch; not kept from the old bot.toml: admins, llm.api_key,"
        " channels.telegram.token" in force.stderr
    ), force.stderr
    assert "sk-1" not in force.output and "123456:ABC" not in force.output


def test_set_key_keeps_the_comment_and_adds_a_missing_key() -> None:
    text = 'top = 1\n\n[llm]\nmodel = "a"   # the model\n\n[web]\nport = 1\n'
    changed = set_key(set_key(text, "llm", "model", "b"), "llm", "extra", "c")
    assert 'model = "b"   # the model' in changed
    assert tomllib.loads(changed) == {
        "top": 1,
        "llm": {"model": "b", "extra": "c"},
        "web": {"port": 1},
    }


def test_set_values_are_toml_and_keys_are_quoted(tmp_path: Path, monkeypatch) -> None:
    # Each was written as a string (allow_from = "[\"42\"]" refused at load, port = "9000"),
    # and telegram:1 = "team" was not TOML at all.
    monkeypatch.chdir(tmp_path)
    args = ["init", "-c", "bot.toml", "--set", 'channels.telegram.allow_from=["42"]']
    args += ["--set", "web.port=9000", "--set", "streaming.enabled=false"]
    args += ["--set", "workspaces.routes.telegram:1=team", "--set", "llm.model=openai/x"]
    args += ["--set", "llm.fallback_models=[]"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    written = _read(tmp_path / "bot.toml")
    assert written["channels"]["telegram"]["allow_from"] == ["42"]
    assert written["web"]["port"] == 9000 and written["streaming"]["enabled"] is False
    assert written["workspaces"]["routes"] == {"*": "default", "telegram:1": "team"}
    assert written["llm"]["model"] == "openai/x"  # not TOML: the text itself
    settings = load_settings(tmp_path / "bot.toml")
    assert settings.web.port == 9000 and settings.workspaces.routes["telegram:1"] == "team"


def test_a_text_setting_that_looks_like_a_number_is_written_as_text(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["init", "-c", "bot.toml", "--set", "cluster.replica=2", "--set", "web.port=9000"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    written = _read(tmp_path / "bot.toml")
    assert written["cluster"]["replica"] == "2" and written["web"]["port"] == 9000


@pytest.mark.parametrize(
    ("option", "named"),
    [
        ("web.port=not-a-port", "'web.port'"),
        ("channels.telegram.allow_from=42", "'channels.telegram.allow_from'"),
        ("llm.no_such_key=1", "'llm.no_such_key'"),
        ("llm=x", "llm: cannot be set here"),  # over the [llm] table: not TOML
    ],
)
def test_a_refused_config_is_one_line_and_leaves_nothing(
    tmp_path: Path, monkeypatch, option: str, named: str
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["init", "-c", "bot.toml", "--set", option])
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and named in lines[0], lines
    assert list(tmp_path.iterdir()) == []  # no config, no temporary file, no data
    # So the corrected command runs, instead of "bot.toml exists; not overwritten".
    again = CliRunner().invoke(app, ["init", "-c", "bot.toml", "--set", "web.port=9000"])
    assert again.exit_code == 0, again.output
    assert _read(tmp_path / "bot.toml")["web"]["port"] == 9000
    assert stat.S_IMODE((tmp_path / "bot.toml").stat().st_mode) == 0o600


@pytest.mark.parametrize(
    ("admin", "said"),
    [
        ("42", "write it with its channel, e.g. 'telegram:42'"),  # matched nobody
        ("telegarm:42", "did you mean 'telegram:42'?"),
        ("telegram:", "is not <channel>:<user id>"),
        ("@alice", "names a user by name; admins are user ids, e.g. 'telegram:42' (your"),
    ],
)
def test_an_admin_the_daemon_would_match_to_nobody_is_refused(
    tmp_path: Path, monkeypatch, admin: str, said: str
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["init", "-c", "bot.toml", "--admin", admin])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: --admin: admin '{admin}'") and said in result.stderr
    assert list(tmp_path.iterdir()) == []
    # Stray spaces and the channel's case are what the matching forgives: written plain.
    fine = CliRunner().invoke(app, ["init", "-c", "bot.toml", "--admin", "Telegram: 42"])
    assert fine.exit_code == 0, fine.output
    assert _read(tmp_path / "bot.toml")["admins"] == ["telegram:42"]


def test_every_refused_set_is_named_one_a_line(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["init", "-c", "bot.toml", "--set", "web.port=x", "--set", "llm.max_steps=0"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 2 and all(line.startswith("error: config bot.toml: ") for line in lines)
    assert "'llm.max_steps'" in lines[0] and "'web.port'" in lines[1]
    assert lines[1].endswith("; nothing written") and list(tmp_path.iterdir()) == []


def test_force_replaces_the_config_whole_and_private(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bot.toml").write_text("old = 1\n", encoding="utf-8")
    (tmp_path / "bot.toml").chmod(0o644)
    result = CliRunner().invoke(app, ["init", "-c", "bot.toml", "--force", "--model", "x/y"])
    assert result.exit_code == 0, result.output
    assert _read(tmp_path / "bot.toml")["llm"]["model"] == "x/y"
    assert stat.S_IMODE((tmp_path / "bot.toml").stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bot.toml", "data"]


def test_init_writes_where_bot_config_points(tmp_path: Path, monkeypatch) -> None:
    # It wrote ./bot.toml, and `bot doctor` (which reads $BOT_CONFIG) found no config.
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "etc" / "bot.toml"
    target.parent.mkdir()
    monkeypatch.setenv("BOT_CONFIG", str(target))
    result = CliRunner().invoke(app, ["init", "--model", "x/from-env-path"])
    assert result.exit_code == 0, result.output
    assert target.exists() and not (tmp_path / "bot.toml").exists()
    assert load_settings().llm.model == "x/from-env-path"  # what every command reads
    again = CliRunner().invoke(app, ["init"])
    assert f"{target} exists; not overwritten" in again.output


def test_set_key_quotes_keys_and_writes_toml_values() -> None:
    text = '[workspaces.routes]\n"*" = "default"   # the default\n'
    changed = set_key(text, "workspaces.routes", "*", "team")
    changed = set_key(changed, "workspaces.routes", "slack:T1", "ops")
    changed = set_key(changed, "mcp.servers.my files", "env", {"A-B": "x\x7f", "n": [1.5, True]})
    assert '"*" = "team"   # the default' in changed
    assert tomllib.loads(changed) == {
        "workspaces": {"routes": {"*": "team", "slack:T1": "ops"}},
        "mcp": {"servers": {"my files": {"env": {"A-B": "x\x7f", "n": [1.5, True]}}}},
    }


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('["42"]', ["42"]),
        ("9000", 9000),
        ("true", True),
        ('"123"', "123"),
        ("openai/gpt-4o", "openai/gpt-4o"),
        ("123:token", "123:token"),
        ("1\nw = 2", "1\nw = 2"),
        ("", ""),
    ],
)
def test_parse_value_is_toml_else_text(text: str, value: object) -> None:
    assert parse_value(text) == value


def test_init_pins_no_default_but_documents_every_key(tmp_path: Path, monkeypatch) -> None:
    # It wrote every key live (max_concurrent_chats = 64 in the first release), so after
    # an upgrade the config kept the defaults of the day it was written.
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["init", "-c", "bot.toml", "--admin", "telegram:42"])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "bot.toml").read_text(encoding="utf-8")
    written = tomllib.loads(text)
    assert written["agent"] == {} and written["access"] == {} and written["web"] == {}
    assert set(written["llm"]) == {"model", "api_base", "api_key"}
    assert written["admins"] == ["telegram:42"]
    assert "\n# max_concurrent_chats = 1024 " in text and "\n# max_pending = 10 " in text
    assert load_settings(tmp_path / "bot.toml").agent.max_concurrent_chats == 1024


def test_set_makes_the_commented_default_live_in_its_place(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    args = ["init", "-c", "bot.toml", "--set", "agent.max_concurrent_chats=200"]
    args += ["--set", "web.port=9000", "--set", 'channels.telegram.allow_from=["42"]']
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    text = (tmp_path / "bot.toml").read_text(encoding="utf-8")
    lines = text.splitlines()
    chats = [line for line in lines if "max_concurrent_chats =" in line]
    assert chats == [  # its comment where it was
        "max_concurrent_chats = 200     # turns running at once across chats (one at a time"
        " per chat);"
    ]
    assert lines.index(chats[0]) == lines.index("[agent]") + 1  # where the default was
    port = [line for line in lines if "port =" in line]
    assert port == [
        "port = 9000                  # /healthz (200 or 503 + JSON naming the failing part),"
        " /metrics"
    ]
    written = tomllib.loads(text)
    assert written["agent"] == {"max_concurrent_chats": 200}
    assert written["channels"]["telegram"]["allow_from"] == ["42"]
    assert text.count("allow_from = ") == 3  # one per platform: made live, not added


def test_set_key_makes_a_commented_default_live_only_in_its_own_section() -> None:
    text = (
        "[llm]\n# max_steps = 8   # calls per turn\n\n[mcp.servers]\n# [mcp.servers.files]\n"
        '# command = "npx"   # the child\n\n[agent]\n# max_steps = 3\n'
    )
    changed = set_key(text, "llm", "max_steps", 12)
    assert "\nmax_steps = 12    # calls per turn\n" in changed  # the comment in its column
    assert "# max_steps = 3" in changed  # [agent]'s line is not [llm]'s
    assert tomllib.loads(changed) == {"llm": {"max_steps": 12}, "mcp": {"servers": {}}, "agent": {}}
    served = set_key(text, "mcp.servers.files", "command", "uvx")
    assert '# command = "npx"' in served  # the example in a comment stays one
    assert tomllib.loads(served)["mcp"]["servers"] == {"files": {"command": "uvx"}}
