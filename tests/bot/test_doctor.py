"""`bot doctor` against the fakes: every check ok, then every check failing for a reason."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from bot.cli.app import app
from bot.ops import doctor
from tests.fakes import platform_auth, telegram_api
from tests.fakes.llm_server import FakeLLM
from tests.fakes.open_meteo import FakeOpenMeteo
from tests.fakes.platform_auth import FakeDiscordAuth, FakeSlackAuth
from tests.fakes.telegram_api import FakeTelegram

fake_telegram = telegram_api.fake_telegram
fake_slack_auth = platform_auth.fake_slack_auth
fake_discord_auth = platform_auth.fake_discord_auth


def _toml(data: dict[str, Any], prefix: str = "") -> str:
    """Enough TOML for these tests (JSON strings and lists are valid TOML values)."""
    scalars = [f"{k} = {json.dumps(v)}" for k, v in data.items() if not isinstance(v, dict)]
    out = ([f"[{prefix}]"] if prefix and scalars else []) + scalars
    for key, value in data.items():
        if isinstance(value, dict):
            out.append(_toml(value, f"{prefix}.{key}" if prefix else key))
    return "\n".join(out) + "\n"


def _dead_url(path: str = "") -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}{path}"


def _config(tmp_path: Path, **sections: Any) -> Path:
    path = tmp_path / "bot.toml"
    path.write_text(_toml({"data_dir": str(tmp_path / "data"), **sections}))
    return path


def _all_ok_config(tmp_path, llm, weather, tg, *, slack, discord) -> Path:
    return _config(
        tmp_path,
        llm={"model": "openai/fake-model", "api_base": llm.url, "api_key": "sk-doctor-secret"},
        weather={"geocoding_url": weather.settings().geocoding_url},
        channels={
            "telegram": {"token": tg.token, "base_url": tg.base_url},
            "slack": {"bot_token": slack.token, "app_token": "xapp-1", "api_url": slack.api_url},
            "discord": {"token": discord.token, "api_base": discord.api_base},
        },
    )


async def _cli(*args: str) -> tuple[int, str]:
    # In a thread: the command runs its own event loop while the fakes serve on ours.
    result = await asyncio.to_thread(CliRunner().invoke, app, list(args))
    return result.exit_code, result.output


async def test_every_check_ok_exits_zero(
    tmp_path: Path,
    fake_llm: FakeLLM,
    fake_telegram: FakeTelegram,
    fake_slack_auth: FakeSlackAuth,
    fake_discord_auth: FakeDiscordAuth,
) -> None:
    (tmp_path / "data").mkdir()  # a missing one is a note: the doctor never makes it
    async with FakeOpenMeteo() as weather:
        weather.add_place("Berlin", "Germany", 52.52, 13.41, "Europe/Berlin")
        config = _all_ok_config(
            tmp_path,
            fake_llm,
            weather,
            fake_telegram,
            slack=fake_slack_auth,
            discord=fake_discord_auth,
        )
        checks = await doctor.run_checks(config)
        code, out = await _cli("doctor", "--config", str(config))

    assert [(c.name, c.status) for c in checks] == [
        ("config", "ok"),
        ("data dir", "ok"),
        ("store", "ok"),
        ("telegram", "ok"),
        ("slack", "ok"),
        ("discord", "ok"),
        ("model openai/fake-model", "ok"),
        ("weather", "ok"),
    ], checks
    assert "@test_bot" in checks[3].detail and "testbot" in checks[5].detail
    assert "52.52" in checks[7].detail
    assert fake_llm.requests, "the model check made a real call"
    assert code == 0, out
    assert "all checks passed" in out and "FAILED" not in out
    assert fake_discord_auth.calls == [f"Bot {fake_discord_auth.token}"] * 2


async def test_every_check_failing_names_reason_and_fix(
    tmp_path: Path,
    fake_llm: FakeLLM,
    fake_telegram: FakeTelegram,
    fake_slack_auth: FakeSlackAuth,
    fake_discord_auth: FakeDiscordAuth,
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    fake_llm.reply_error(401).reply_error(401)  # one per run: in-process, then the CLI
    async with FakeOpenMeteo() as weather:
        weather.fail("geocoding", status=500)
        weather.fail("geocoding", status=500)
        config = _config(
            tmp_path,
            data_dir=str(blocker / "data"),
            store={"url": _dead_url("/bot").replace("http://", "postgresql://pg:pw-wrong@")},
            llm={"model": "openai/fake-model", "api_base": fake_llm.url, "api_key": "sk-wrong"},
            weather={"geocoding_url": weather.settings().geocoding_url},
            channels={
                "telegram": {"token": "999:wrong-secret", "base_url": fake_telegram.base_url},
                "slack": {
                    "bot_token": "xoxb-wrong",
                    "app_token": "xapp-1",
                    "api_url": fake_slack_auth.api_url,
                },
                "discord": {"token": "wrong-discord", "api_base": fake_discord_auth.api_base},
            },
        )
        checks = {c.name: c for c in await doctor.run_checks(config)}
        code, out = await _cli("doctor", "--config", str(config))

    assert {n: c.status for n, c in checks.items()} == {
        "config": "ok",
        "data dir": "failed",
        "store": "failed",
        "telegram": "failed",
        "slack": "failed",
        "discord": "failed",
        "model openai/fake-model": "failed",
        "weather": "failed",
    }
    assert "not writable" in checks["data dir"].detail
    assert "cannot connect to PostgreSQL" in checks["store"].detail
    assert "401" in checks["telegram"].detail and "BotFather" in checks["telegram"].fix
    assert "invalid_auth" in checks["slack"].detail and "xoxb" in checks["slack"].fix
    assert "401" in checks["discord"].detail
    assert "rejected the credentials" in checks["model openai/fake-model"].detail
    assert "HTTP 500" in checks["weather"].detail
    assert all(c.fix for c in checks.values() if c.status == "failed")
    assert code == 1
    assert out.count("FAILED") == 7 and out.count("fix: ") == 7 and "7 check(s) failed" in out
    assert "wrong-secret" not in out and "sk-wrong" not in out and "pw-wrong" not in out


async def test_dead_ports_and_missing_slack_mode(tmp_path):
    config = _config(
        tmp_path,
        llm={"model": "openai/fake-model", "api_base": _dead_url("/v1"), "api_key": "sk-x"},
        weather={"geocoding_url": _dead_url("/v1/search")},
        channels={
            "telegram": {"token": "1:t", "base_url": _dead_url("/bot")},
            "slack": {"bot_token": "xoxb-1", "api_url": _dead_url("/api/")},
            "discord": {"token": "d", "api_base": _dead_url("/api/v10")},
        },
    )
    checks = {c.name: c for c in await doctor.run_checks(config)}
    for name in ("telegram", "discord", "weather"):
        assert checks[name].status == "failed"
        assert "cannot connect" in checks[name].detail, checks[name]
    assert "neither app_token" in checks["slack"].detail
    assert "connection error" in checks["model openai/fake-model"].detail
    assert doctor.exit_code(list(checks.values())) == 1


async def test_offline_skips_what_needs_the_internet_and_exits_zero(tmp_path, fake_llm: FakeLLM):
    """Platforms and weather unreachable (they would fail online); the model on this
    machine is still asked."""
    unreachable = {
        "weather": {"geocoding_url": _dead_url("/v1/search")},
        "channels": {"telegram": {"token": "1:t", "base_url": _dead_url("/bot")}},
    }
    config = _config(
        tmp_path,
        llm={"model": "openai/fake-model", "api_base": fake_llm.url, "api_key": "sk-1"},
        **unreachable,
    )
    code, out = await _cli("doctor", "--offline", "--config", str(config))
    assert code == 0, out
    rows = [line.split()[0] for line in out.splitlines() if line]
    assert "internet" in rows and "telegram" not in rows and "weather" not in rows
    assert "model openai/fake-model" in out and fake_llm.requests

    remote = {"model": "openai/gpt-4o-mini", "api_base": "https://api.example.com/v1"}
    keyed = _config(tmp_path, llm={**remote, "api_key": "sk-remote-1"}, **unreachable)
    checks = await doctor.run_checks(keyed, offline=True)
    assert [c.name for c in checks] == [
        "config",
        "data dir",
        "store",
        "internet",
        "model openai/gpt-4o-mini",
    ]
    assert checks[-1].status == "ok" and "not called" in checks[-1].detail
    # no key: found without the network, where it passed before
    keyless = _config(tmp_path, llm=remote, **unreachable)
    model = (await doctor.run_checks(keyless, offline=True))[-1]
    assert model.status == "failed" and "OPENAI_API_KEY" in model.detail, model


async def test_offline_still_says_what_a_channel_lacks_without_the_network(tmp_path):
    """A Slack bot token with neither app_token nor signing_secret: `bot run` fails the
    channel, and `--offline` said all was well (its check sat behind the network's)."""
    slack = {"bot_token": "xoxb-1", "api_url": _dead_url("/api/")}
    llm = {"model": "openai/gpt-4o-mini", "api_key": "sk-remote-1"}
    config = _config(tmp_path, llm=llm, channels={"slack": slack})
    checks = {c.name: c for c in await doctor.run_checks(config, offline=True)}
    assert checks["slack"].status == "failed" and "neither app_token" in checks["slack"].detail
    assert doctor.exit_code(list(checks.values())) == 1
    # One that can receive has nothing to say offline: its token needs the network.
    slack["app_token"] = "xapp-1"
    fine = _config(tmp_path, llm=llm, channels={"slack": slack})
    assert "slack" not in {c.name for c in await doctor.run_checks(fine, offline=True)}


async def test_bad_config_and_low_disk_fail(tmp_path, monkeypatch):
    bad = tmp_path / "bad.toml"
    bad.write_text('[llm]\ntimeout_s = "soon"\n')
    code, out = await _cli("doctor", "--config", str(bad))
    assert code == 1
    assert "config" in out and "llm.timeout_s" in out and "fix: " in out
    # deploy/ is not installed with the package: the fix names what every install has
    assert "deploy/" not in out and "a config `bot init` wrote lists every key" in out

    monkeypatch.setattr(doctor, "MIN_FREE_BYTES", 1 << 60)
    check = doctor.check_data_dir(tmp_path / "data")
    assert check.status == "failed" and "MB free" in check.detail


async def test_no_channel_is_skipped_not_failed(tmp_path, fake_llm: FakeLLM):
    async with FakeOpenMeteo() as weather:
        weather.add_place("Berlin", "Germany", 52.52, 13.41, "Europe/Berlin")
        config = _config(
            tmp_path,
            llm={"model": "openai/fake-model", "api_base": fake_llm.url, "api_key": "sk-1"},
            weather={"geocoding_url": weather.settings().geocoding_url},
        )
        checks = await doctor.run_checks(config)
    assert ("channels", "skipped") in [(c.name, c.status) for c in checks]
    assert doctor.exit_code(checks) == 0


async def test_slack_and_discord_checks_against_the_full_fakes(tmp_path, fake_llm: FakeLLM):
    """`bot doctor` runs each channel's own check: auth.test and the app token (Socket
    Mode) for Slack, users/@me for Discord, against the fakes the adapters run on."""
    from tests.fakes.discord_api import FakeDiscord
    from tests.fakes.slack_api import FakeSlack

    async with FakeOpenMeteo() as weather, FakeSlack() as slack, FakeDiscord() as dc:
        weather.add_place("Berlin", "Germany", 52.52, 13.41, "Europe/Berlin")
        slack_section = {"bot_token": slack.bot_token, "api_url": slack.api_url}
        config = _config(
            tmp_path,
            llm={"model": "openai/fake-model", "api_base": fake_llm.url, "api_key": "sk-1"},
            weather={"geocoding_url": weather.settings().geocoding_url},
            channels={
                "slack": {**slack_section, "app_token": slack.app_token},
                "discord": {"token": dc.token, "api_base": dc.api_base},
            },
        )
        checks = {c.name: c for c in await doctor.run_checks(config)}
        assert (checks["slack"].status, checks["discord"].status) == ("ok", "ok"), checks
        assert "Socket Mode" in checks["slack"].detail and "testbot" in checks["discord"].detail
        assert [c.token for c in slack.calls_to("auth.test")] == [slack.bot_token]
        assert [c.token for c in slack.calls_to("apps.connections.open")] == [slack.app_token]
        assert len(dc.calls_to("GET /users/@me")) == 1
        slack.app_token = "xapp-rotated"  # the configured app token no longer works
        dc.token = "rotated"
        checks = {c.name: c for c in await doctor.run_checks(config)}
    assert checks["slack"].status == "failed" and "apps.connections.open" in checks["slack"].detail
    assert checks["discord"].status == "failed" and "401" in checks["discord"].detail


async def test_a_model_not_configured_is_said_whole_with_the_placeholder_hint(monkeypatch):
    """The message was cut at its first ". ": inside "(use e.g", and a local server's
    hint (a placeholder key) was lost; the settings to change stay on the fix line."""
    from bot.config import Settings

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    no_provider = Settings(llm={"model": "llama3.1"})
    keyless = Settings(llm={"model": "openai/llama", "api_base": _dead_url("/v1")})
    for check in (doctor.check_model_offline, doctor.check_model):
        unknown = await check(no_provider)
        assert unknown.status == "failed", unknown
        assert unknown.detail == (
            "Model 'llama3.1' names no known provider (use e.g. 'openai/gpt-4o-mini')."
        )
        assert unknown.fix == "set llm.model, llm.api_key, llm.api_base"
        local = await check(keyless)
        assert local.status == "failed", local
        assert local.detail == (
            "No credentials for model 'openai/llama' (missing OPENAI_API_KEY). A local"
            ' server that ignores keys still needs a placeholder, e.g. llm.api_key = "none".'
        )


async def test_a_disabled_tool_that_is_no_tool_is_a_note_offline_too(tmp_path, fake_llm: FakeLLM):
    """A misspelled `disabled_tools` name turns nothing off; only the daemon's start-up
    log said so, and `bot doctor`, which an operator runs to check a config, did not."""
    config = _config(
        tmp_path,
        llm={"model": "openai/fake-model", "api_base": fake_llm.url, "api_key": "sk-1"},
        workspaces={"kids": {"disabled_tools": ["web-fetch", "web_search", "mcp_x_y"]}},
    )
    code, out = await _cli("doctor", "--offline", "--config", str(config))
    assert code == 0, out  # a note, not a failure: the config loaded before
    notes = [line for line in out.splitlines() if line.startswith("tools")]
    assert len(notes) == 1 and "'web-fetch' names no tool; did you mean 'web_fetch'?" in notes[0]
