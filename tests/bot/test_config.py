"""Settings: defaults, TOML, env overrides, and one-line errors that never leak secrets."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.config import DEFAULT_CONFIG_NAME, Settings, load_settings
from bot.config.settings import load_settings_noted
from bot.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]

SECRETS = {
    "llm_key": "sk-LLM-SECRET-1111",
    "telegram": "TG-SECRET-2222",
    "slack_bot": "xoxb-SLACK-SECRET-3333",
    "slack_app": "xapp-SLACK-SECRET-4444",
    "slack_signing": "SIGNING-SECRET-5555",
    "discord": "DISCORD-SECRET-6666",
}


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No stray ./bot.toml or BOT_* variable changes what a test sees."""
    monkeypatch.chdir(tmp_path)
    for name in [v for v in os.environ if v.startswith("BOT_")]:
        monkeypatch.delenv(name)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def config_error(path: str | Path | None) -> str:
    with pytest.raises(ConfigError) as info:
        load_settings(path)
    message = str(info.value)
    assert message, "empty error"
    assert "\n" not in message, f"not one line: {message!r}"
    return message


# --- defaults and sources ------------------------------------------------------------


def test_defaults_without_any_file() -> None:
    assert not Path(DEFAULT_CONFIG_NAME).exists()
    settings = load_settings(None)
    assert settings == Settings()
    assert settings.timezone == "UTC"
    assert settings.admins == []
    assert settings.llm.model == "openai/gpt-4o-mini"
    assert settings.llm.api_key.get_secret_value() == ""
    assert settings.agent.max_concurrent_chats == 1024
    assert settings.data_dir == Path("data")


def test_list_and_dict_defaults_are_not_shared_between_loads() -> None:
    """Empty-collection defaults are plain values (``Field(default=[])``: pydantic
    copies them for each model), not ``default_factory=list``, whose signature pydantic
    inspects by parsing the builtin's text signature (about 5 ms of every start)."""
    from channels.telegram.settings import TelegramSettings

    first, second = load_settings(None), load_settings(None)
    first.admins.append("telegram:1")
    first.llm.fallback_models.append("openai/other")
    first.mcp.servers["x"] = second.mcp  # type: ignore[assignment]
    assert second.admins == second.llm.fallback_models == [] and second.mcp.servers == {}
    one, other = TelegramSettings(), TelegramSettings()
    one.allow_from.append("*")
    assert other.allow_from == []
    probe = (
        "import inspect\n"
        "parsed = []\n"
        "real = inspect._signature_fromstr\n"
        "inspect._signature_fromstr = lambda *a, **k: parsed.append(a[1]) or real(*a, **k)\n"
        "import bot.config.settings, channels.registry\n"
        "print(parsed)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]", done.stdout


def test_a_config_saved_with_a_bom_and_crlf_loads(tmp_path: Path) -> None:
    """It was "invalid TOML (Invalid statement (at line 1, column 1))"."""
    path = tmp_path / "bot.toml"
    path.write_bytes(b'\xef\xbb\xbftimezone = "Asia/Tokyo"\r\n[llm]\r\nmodel = "openai/x"\r\n')
    settings = load_settings(path)
    assert (settings.timezone, settings.llm.model) == ("Asia/Tokyo", "openai/x")


def test_toml_values_load(tmp_path: Path) -> None:
    path = write(
        tmp_path / "custom.toml",
        """
        timezone = "Asia/Shanghai"
        admins = ["telegram:42"]
        data_dir = "/srv/bot"

        [llm]
        model = "anthropic/claude"
        fallback_models = ["openai/a", "openai/b"]
        timeout_s = 12.5

        [agent]
        max_concurrent_chats = 3

        [channels.telegram]
        allow_from = ["@alice", "7"]

        [web]
        port = 9000
        """,
    )
    settings = load_settings(path)
    assert settings.timezone == "Asia/Shanghai"
    assert settings.admins == ["telegram:42"]
    assert settings.data_dir == Path("/srv/bot")
    assert settings.llm.model == "anthropic/claude"
    assert settings.llm.fallback_models == ["openai/a", "openai/b"]
    assert settings.llm.timeout_s == 12.5
    assert settings.agent.max_concurrent_chats == 3
    assert settings.channels.telegram.allow_from == ["@alice", "7"]
    assert settings.web.port == 9000
    # Keys not in the file keep their defaults.
    assert settings.llm.max_steps == 8


def test_env_overrides_beat_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(
        tmp_path / "bot.toml",
        """
        admins = ["slack:U1"]
        [llm]
        model = "from/file"
        max_steps = 4
        [agent]
        max_concurrent_chats = 5
        """,
    )
    monkeypatch.setenv("BOT_LLM__MODEL", "from/env")
    monkeypatch.setenv("BOT_ADMINS", '["telegram:1", "discord:2"]')
    monkeypatch.setenv("BOT_AGENT__MAX_CONCURRENT_CHATS", "9")
    monkeypatch.setenv("BOT_CHANNELS__TELEGRAM__ALLOW_FROM", '["bob"]')
    settings = load_settings(path)
    assert settings.llm.model == "from/env"
    assert settings.admins == ["telegram:1", "discord:2"]
    assert settings.agent.max_concurrent_chats == 9
    assert settings.channels.telegram.allow_from == ["bob"]
    # A sibling key only in the file is kept (the env merges, it does not replace [llm]).
    assert settings.llm.max_steps == 4


def test_an_empty_variable_leaves_the_files_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # bot.env.example's blank `BOT_LLM__API_KEY=`, loaded by compose's env_file as written,
    # wiped the key bot.toml held: doctor then said to set llm.api_key, which was set.
    path = write(
        tmp_path / "bot.toml",
        """
        data_dir = "/srv/bot"
        [llm]
        api_key = "sk-from-toml"
        [channels.telegram]
        token = "123:from-toml"
        """,
    )
    monkeypatch.setenv("BOT_LLM__API_KEY", "")
    monkeypatch.setenv("BOT_CHANNELS__TELEGRAM__TOKEN", "")
    monkeypatch.setenv("BOT_DATA_DIR", "")
    monkeypatch.setenv("BOT_LLM__MODEL", "")
    settings = load_settings(path)
    assert settings.llm.api_key.get_secret_value() == "sk-from-toml"
    assert settings.channels.telegram.token.get_secret_value() == "123:from-toml"
    assert settings.data_dir == Path("/srv/bot")
    assert settings.llm.model == Settings().llm.model  # not in the file: the default


def test_default_bot_toml_in_cwd_is_used(tmp_path: Path) -> None:
    write(tmp_path / DEFAULT_CONFIG_NAME, 'timezone = "Europe/Paris"\n')
    assert load_settings(None).timezone == "Europe/Paris"


def test_default_bot_toml_missing_is_fine() -> None:
    assert load_settings(None).timezone == "UTC"


def test_explicit_path_missing_is_an_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    message = config_error(missing)
    assert str(missing) in message
    assert "not found" in message


def test_bot_config_env_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / DEFAULT_CONFIG_NAME, 'timezone = "Europe/Paris"\n')
    other = write(tmp_path / "elsewhere.toml", 'timezone = "Asia/Tokyo"\n')
    monkeypatch.setenv("BOT_CONFIG", str(other))
    assert load_settings(None).timezone == "Asia/Tokyo"
    # An explicit --config still wins over $BOT_CONFIG.
    assert load_settings(tmp_path / DEFAULT_CONFIG_NAME).timezone == "Europe/Paris"


def test_bot_config_env_missing_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BOT_CONFIG", str(tmp_path / "gone.toml"))
    assert "not found" in config_error(None)


# --- errors --------------------------------------------------------------------------


def test_unknown_top_level_key(tmp_path: Path) -> None:
    path = write(tmp_path / "c.toml", 'timezon = "UTC"\n')
    message = config_error(path)
    assert "unknown key 'timezon'" in message
    assert str(path) in message


def test_unknown_nested_key(tmp_path: Path) -> None:
    path = write(tmp_path / "c.toml", '[channels.telegram]\ntokn = "x"\n')
    assert "unknown key 'channels.telegram.tokn'" in config_error(path)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[llm]\nmodle = 'a/b'", "unknown key 'llm.modle'; did you mean 'llm.model'?"),
        ("[channels.telegram]\ntokn = 'x'", "did you mean 'channels.telegram.token'?"),
        ("[channels]\ntelegram_token = 'x'", "did you mean 'channels.telegram.token'?"),
        ("[mcp.servers.fs]\ncomand = 'x'", "did you mean 'mcp.servers.fs.command'?"),
        # [admin] is the admin page's table: a list there meant the admins
        ("admin = ['telegram:42']", "key 'admin' is a table ([admin]), not a value; "),
        ("admin = ['telegram:42']", "did you mean 'admins'?"),
    ],
)
def test_a_misspelled_key_is_said_with_the_one_it_likely_meant(
    tmp_path: Path, text: str, said: str
) -> None:
    message = config_error(write(tmp_path / "c.toml", text + "\n"))
    assert message.startswith(f"config {tmp_path / 'c.toml'}: ") and said in message, message


def test_a_key_like_none_gets_no_guess(tmp_path: Path) -> None:
    assert config_error(write(tmp_path / "c.toml", "zzzz = 1\n")).endswith("unknown key 'zzzz'")


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("BOT_LLM__MODLE", "no setting 'llm.modle'; did you mean BOT_LLM__MODEL?"),
        (
            "BOT_CHANNELS__TELEGRAM_TOKEN",  # one underscore where a section ends
            "no setting 'channels.telegram_token'; did you mean BOT_CHANNELS__TELEGRAM__TOKEN?",
        ),
    ],
)
def test_unknown_key_in_env_is_said_as_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, said: str
) -> None:
    # It was "config ok.toml: unknown key ...", a key the file does not have.
    monkeypatch.setenv(name, "x")
    assert config_error(write(tmp_path / "ok.toml", "")) == f"environment variable {name}: {said}"


@pytest.mark.parametrize(
    ("name", "intended"),
    [
        ("BOT_LLM_MODEL", "BOT_LLM__MODEL"),  # one underscore where the section ends
        ("BOT_CHANNEL__TELEGRAM__TOKEN", "BOT_CHANNELS__TELEGRAM__TOKEN"),
        ("BOT_DATA_DIRS", "BOT_DATA_DIR"),
        ("bot_time_zone", "BOT_TIMEZONE"),
        ("BOT_TOKEN", None),  # nothing close: how a name is made
    ],
)
def test_a_variable_naming_no_setting_is_said(
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    name: str,
    intended: str | None,
) -> None:
    # Silently ignored before (the setting left at its default), while BOT_LLM__MODLE
    # was reported; a warning, so a deployment's own BOT_ names never stop a start.
    monkeypatch.setenv(name, "x")
    with caplog.at_level(logging.WARNING):
        load_settings(None)
    [message] = [r.getMessage() for r in caplog.records if "environment variable" in r.getMessage()]
    assert message.startswith(f"environment variable {name}: ") and message.endswith("(ignored)")
    assert f"did you mean {intended}?" in message if intended else "BOT_LLM__MODEL" in message


def test_variables_read_by_name_are_no_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BOT_CONFIG", str(write(tmp_path / "c.toml", "[llm]\nmodel = 'a/b'\n")))
    monkeypatch.setenv("BOT_TEST_POSTGRES_URL", "postgresql://x")  # the tests' own server
    monkeypatch.setenv("BOT_BENCH_POSTGRES_URL", "postgresql://x")  # make bench's
    monkeypatch.setenv("BOT_LLM__API_KEY", "sk-1")
    assert load_settings(None).llm.model == "a/b"


def test_wrong_type_names_the_key(tmp_path: Path) -> None:
    path = write(tmp_path / "c.toml", '[agent]\nmax_concurrent_chats = "many"\n')
    message = config_error(path)
    assert "'agent.max_concurrent_chats'" in message
    assert "many" in message  # non-secret values are shown to help the operator


def test_wrong_type_from_env_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOT_WEB__PORT", "abc")
    message = config_error(None)
    assert "'web.port'" in message
    assert "BOT_WEB__PORT" in message


@pytest.mark.parametrize(
    ("env", "blamed", "example"),
    [
        # the innocent sibling sorts first: it was the one named, told to become a list
        (
            {"BOT_LLM__API_BASE": "http://127.0.0.1:8000/v1", "BOT_LLM__FALLBACK_MODELS": "a/b"},
            "BOT_LLM__FALLBACK_MODELS",
            """BOT_LLM__FALLBACK_MODELS='["a/b"]'""",
        ),
        (
            {"BOT_CHANNELS__DISCORD__TOKEN": "abc", "BOT_CHANNELS__TELEGRAM__ALLOW_FROM": "42,43"},
            "BOT_CHANNELS__TELEGRAM__ALLOW_FROM",
            """BOT_CHANNELS__TELEGRAM__ALLOW_FROM='["42", "43"]'""",
        ),
        ({"BOT_ADMINS": "telegram:42"}, "BOT_ADMINS", """BOT_ADMINS='["telegram:42"]'"""),
        ({"BOT_WEB": "on"}, "BOT_WEB", """BOT_WEB='{"key": "value"}'"""),
    ],
)
def test_a_list_variable_not_json_is_the_one_named(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], blamed: str, example: str
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    message = config_error(None)
    assert message.startswith(f"environment variable {blamed}: not valid JSON"), message
    assert message.endswith(f"is written as {example}"), message


def test_out_of_range_value(tmp_path: Path) -> None:
    path = write(tmp_path / "c.toml", "[llm]\nmax_steps = 0\n")
    assert "'llm.max_steps'" in config_error(path)


def test_access_and_limits_defaults_and_a_bad_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = load_settings(None)
    assert settings.access.dm_policy == "auto" and settings.access.max_pending == 10
    assert settings.access.pairing_denied_h == 24
    assert settings.access.pairing_ttl_min == 60
    assert (settings.limits.user_burst, settings.limits.user_refill_s) == (20, 3)
    monkeypatch.setenv("BOT_ACCESS__DM_POLICY", "open")
    assert load_settings(None).access.dm_policy == "open"
    path = write(tmp_path / "c.toml", '[access]\ndm_policy = "everyone"\n')
    monkeypatch.delenv("BOT_ACCESS__DM_POLICY")
    message = config_error(path)
    assert "'access.dm_policy'" in message and "everyone" in message


def test_every_problem_is_named_one_a_line(tmp_path: Path) -> None:
    # Only the first was named ("and 2 more problems"): one start per mistake to find them.
    path = write(tmp_path / "c.toml", "foo = 1\nbar = 2\n[web]\nport = -1\n")
    with pytest.raises(ConfigError) as info:
        load_settings(path)
    lines = str(info.value).splitlines()
    assert sorted(line.split(": ", 2)[1] for line in lines) == [
        "key 'web.port'",
        "unknown key 'bar'",
        "unknown key 'foo'",
    ]
    assert all(line.startswith(f"config {path}: ") for line in lines)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('admins = ["42"]', "key 'admins': admin '42' is not <channel>:<user id>"),
        ('admins = ["telegram:"]', "admin 'telegram:' is not <channel>:<user id>"),
        ('admins = ["telegarm:42"]', "key 'admins': admin 'telegarm:42' names no channel: "),
        (
            '[workspaces.team]\nadmins = ["discrod:7"]',
            "key 'workspaces.team.admins': admin 'discrod:7' names no channel: "
            "did you mean 'discord:7'?",
        ),
        ('[workspaces.team]\nadmins = ["7"]', "'workspaces.team.admins': admin '7' is not"),
        (  # allow_from takes @names; an admin is matched by id, so a name matched nobody
            'admins = ["telegram:@alice"]',
            "admin 'telegram:@alice' names a user by name; admins are user ids, e.g. 'telegram:42'"
            " (your Telegram user id, from @userinfobot)",
        ),
        (  # a bare @name was told to write 'telegram:@alice', itself refused
            'admins = ["@alice"]',
            "admin '@alice' names a user by name; admins are user ids, e.g. 'telegram:42'"
            " (your Telegram user id, from @userinfobot)",
        ),
        ('admins = ["slack:@bob"]', "admins are user ids, e.g. 'slack:42'; it matches"),
    ],
)
def test_an_admin_that_matches_nobody_is_said_at_every_start(
    tmp_path: Path, text: str, said: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Matched to nobody, the operator had no admin and no word of it. The config loads
    as it did (old configs keep loading); each load warns, and bot doctor lists it."""
    path = write(tmp_path / "c.toml", text + "\n")
    with caplog.at_level(logging.WARNING, logger="bot.config.settings"):
        _, notes = load_settings_noted(path)
    assert any(said in note and note.endswith("it matches nobody until fixed") for note in notes)
    assert said in caplog.text


def test_admins_forgive_case_and_stray_spaces_as_the_matching_does(tmp_path: Path) -> None:
    path = write(tmp_path / "c.toml", 'admins = ["Telegram: 42", " slack:U1 ", "cli:local"]\n')
    assert load_settings(path).admins == ["telegram:42", "slack:U1", "cli:local"]


def test_invalid_timezone(tmp_path: Path) -> None:
    path = write(tmp_path / "c.toml", 'timezone = "Mars/Olympus"\n')
    message = config_error(path)
    assert "'timezone'" in message
    assert "Mars/Olympus" in message


def test_log_level_in_any_case_and_a_typo_said(tmp_path: Path) -> None:
    assert load_settings(write(tmp_path / "a.toml", 'log_level = "debug"\n')).log_level == "DEBUG"
    message = config_error(write(tmp_path / "b.toml", 'log_level = "verbose"\n'))
    assert "'log_level'" in message and "verbose" in message and "WARNING" in message


WEBHOOK = '[channels.telegram]\ntoken = "123:abc"\nmode = "webhook"\n'
HOOKED = f'{WEBHOOK}webhook_url = "https://bot.example.com/tg"\nwebhook_secret = "s3cret-path"\n'


def test_a_webhook_missing_its_url_or_secret_is_said_at_load(tmp_path: Path) -> None:
    message = config_error(write(tmp_path / "a.toml", WEBHOOK))
    assert "'channels.telegram'" in message
    assert "webhook mode needs webhook_url and webhook_secret" in message
    no_token = "[channels.telegram]\nmode = 'webhook'\n"  # the channel is off: no matter
    assert load_settings(write(tmp_path / "b.toml", no_token)).channels.telegram.mode == "webhook"


@pytest.mark.parametrize(
    ("section", "route"),
    [
        (HOOKED, "channels.telegram receives through a webhook"),
        (
            '[channels.slack]\nbot_token = "xoxb-1-a"\nsigning_secret = "signing-secret-1"\n',
            "channels.slack receives through the Events API",
        ),
    ],
)
def test_a_channel_that_receives_by_the_web_app_needs_it_on(
    tmp_path: Path, section: str, route: str
) -> None:
    """Else it would start, register its webhook, and never hear a message."""
    assert load_settings(write(tmp_path / "on.toml", section)).web.enabled
    message = config_error(write(tmp_path / "off.toml", f"{section}[web]\nenabled = false\n"))
    assert route in message and "set web.enabled = true" in message and "key" not in message


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("[workspaces]\nmax_file_char = 9000\n", "did you mean 'max_file_chars'?"),
        ("[workspaces.team]\nadmin = []\n", "unknown key 'workspaces.team.admin'"),
        (
            "[workspaces.team]\ndisabled_tools = ['final_result']\n",
            "'workspaces.team.disabled_tools': final_result cannot be disabled",
        ),
    ],
)
def test_a_workspaces_mistake_names_its_key(tmp_path: Path, text: str, said: str) -> None:
    # They said "valid dictionary or instance of WorkspaceSection (got 9000)", or named
    # 'workspaces.admin' without the workspace.
    assert said in config_error(write(tmp_path / "w.toml", text))


def test_invalid_toml(tmp_path: Path) -> None:
    path = write(tmp_path / "c.toml", "[llm\nmodel = \n")
    message = config_error(path)
    assert "invalid TOML" in message
    assert str(path) in message


def test_unreadable_file_directory(tmp_path: Path) -> None:
    folder = tmp_path / "dir.toml"
    folder.mkdir()
    message = config_error(folder)
    assert "cannot be read" in message
    assert str(folder) in message


def test_unreadable_file_invalid_utf8(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_bytes(b'timezone = "\xff\xfe"\n')
    message = config_error(path)
    assert str(path) in message
    assert "UTF-8" in message


# --- secrets -------------------------------------------------------------------------


def _secret_toml(tmp_path: Path) -> Path:
    return write(
        tmp_path / "secrets.toml",
        f"""
        [llm]
        api_key = "{SECRETS["llm_key"]}"
        [channels.telegram]
        token = "{SECRETS["telegram"]}"
        [channels.slack]
        bot_token = "{SECRETS["slack_bot"]}"
        app_token = "{SECRETS["slack_app"]}"
        signing_secret = "{SECRETS["slack_signing"]}"
        [channels.discord]
        token = "{SECRETS["discord"]}"
        """,
    )


def test_secrets_never_shown(tmp_path: Path) -> None:
    settings = load_settings(_secret_toml(tmp_path))
    # They are loaded...
    assert settings.llm.api_key.get_secret_value() == SECRETS["llm_key"]
    assert settings.channels.telegram.token.get_secret_value() == SECRETS["telegram"]
    assert settings.channels.slack.bot_token.get_secret_value() == SECRETS["slack_bot"]
    assert settings.channels.slack.app_token.get_secret_value() == SECRETS["slack_app"]
    assert settings.channels.slack.signing_secret.get_secret_value() == SECRETS["slack_signing"]
    assert settings.channels.discord.token.get_secret_value() == SECRETS["discord"]
    # ...but never rendered.
    renderings = {
        "repr": repr(settings),
        "str": str(settings),
        "json": settings.model_dump_json(),
        "repr(channels)": repr(settings.channels),
        "repr(llm)": repr(settings.llm),
    }
    for how, text in renderings.items():
        for secret in SECRETS.values():
            assert secret not in text, f"{secret} leaked by {how}"


def test_secret_from_env_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOT_LLM__API_KEY", SECRETS["llm_key"])
    settings = load_settings(None)
    assert settings.llm.api_key.get_secret_value() == SECRETS["llm_key"]
    assert SECRETS["llm_key"] not in repr(settings) + str(settings) + settings.model_dump_json()


@pytest.mark.parametrize(
    ("section", "key", "dotted"),
    [
        ("llm", "api_key", "llm.api_key"),
        ("channels.telegram", "token", "channels.telegram.token"),
        ("channels.slack", "bot_token", "channels.slack.bot_token"),
        ("channels.slack", "app_token", "channels.slack.app_token"),
        ("channels.slack", "signing_secret", "channels.slack.signing_secret"),
        ("channels.discord", "token", "channels.discord.token"),
    ],
)
def test_secret_with_wrong_type_not_in_error(
    tmp_path: Path, section: str, key: str, dotted: str
) -> None:
    # A number and a list: both invalid for a string and both easy to echo by mistake.
    for value, needle in [("987654321123", "987654321123"), ('["sk-LEAK-abc"]', "sk-LEAK-abc")]:
        path = write(tmp_path / "c.toml", f"[{section}]\n{key} = {value}\n")
        message = config_error(path)
        assert f"'{dotted}'" in message
        assert needle not in message, f"secret value leaked: {message}"


# --- the CLI -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "problems"),
    [(b"unknown_key = 1\n[llm]\napi_key = 12345\n", 2), (b"\xff\xfe\x00", 1)],
    ids=["bad-keys", "bad-utf8"],
)
def test_cli_bad_config_exits_2_with_a_line_per_problem(
    tmp_path: Path, content: bytes, problems: int
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_bytes(content)
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOT_")}
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "run", "--config", str(bad)],
        check=False,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == problems, proc.stderr
    assert all(line.startswith("error:") and str(bad) in line for line in lines), lines
    assert "12345" not in proc.stderr
