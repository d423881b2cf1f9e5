"""Settings: TOML file + ``BOT_...__...`` environment overrides, validated at start-up.

The file is found at ``--config``, else ``$BOT_CONFIG``, else ``./bot.toml``; no file at
all means embedded defaults. Every problem becomes one :class:`ConfigError` line naming
the key, because a traceback at start-up tells an operator nothing.
"""

from __future__ import annotations

import logging
import os
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    Field,
    SecretStr,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
)

from bot.config.admins import admin_entries, admin_problem
from bot.config.deprecated import deprecated_in_use
from bot.config.envjson import env_problem
from bot.config.envnames import unknown_variable
from bot.config.former_defaults import former_defaults_in_use
from bot.config.mcp import MCPSettings
from bot.config.media import MediaSettings
from bot.config.overrides import overridden
from bot.config.problems import describe_problems
from bot.config.section import Section
from bot.config.webtools import FetchSettings, SearchSettings
from bot.config.workspaces import WorkspacesSettings
from bot.errors import ConfigError
from bot.ops.loop import EventLoopChoice
from bot.store.base import POOL_SIZE
from channels.registry import SPECS

log = logging.getLogger(__name__)

DEFAULT_CONFIG_NAME = "bot.toml"


class LLMSettings(Section):
    model: str = "openai/gpt-4o-mini"
    api_base: str = ""
    api_key: SecretStr = SecretStr("")
    fallback_models: list[str] = Field(default=[])
    timeout_s: float = Field(default=60, gt=0)
    max_steps: int = Field(default=8, ge=1, le=100)
    max_retries: int = Field(default=2, ge=0, le=10)
    # Model requests in flight across all chats: bounds the request and response bodies
    # held in memory; a queued call waits, it never fails. 0: by provider, 500 (litellm's
    # connections per host), or 4 for a model server on one machine (ollama, lm_studio,
    # llamafile: see bot.agent.llm.concurrency).
    max_concurrent_calls: int = Field(default=0, ge=0)
    # The cap on an answer's tokens (max_tokens), for every model of this section; the
    # governor keeps as many free ([context] reserve_tokens, if more). 0: left to the
    # provider, except Claude (required there: litellm's figure for the model, else 8,192;
    # see bot.agent.llm.params).
    max_output_tokens: int = Field(default=0, ge=0)


class AgentSettings(Section):
    """How chats are scheduled onto workers."""

    # Turns at once across chats. Not the throttle: a turn mostly waits on the model,
    # and model requests are capped by ``[llm] max_concurrent_calls``.
    max_concurrent_chats: int = Field(default=1024, ge=1)
    worker_idle_s: float = Field(default=300, gt=0)
    max_message_chars: int = Field(default=16_000, ge=100)
    # On SIGTERM/SIGINT running turns get this long; unfinished ones resume at the next start.
    shutdown_timeout_s: float = Field(default=10, ge=0)
    # Tool calls one model response may make; the rest get an Error result, never run.
    max_tool_calls_per_step: int = Field(default=16, ge=1, le=1000)
    # Text per outbound message; the rest is attached as a file, or cut with a note.
    max_answer_chars: int = Field(default=20_000, ge=500)
    # The typing indicator starts only once a turn has run this long (0: at once).
    typing_after_s: float = Field(default=1.0, ge=0)


class StreamingSettings(Section):
    """Answers that appear as they are written: a preview edited in place (bot/streaming)."""

    enabled: bool = True
    # The least time between two preview calls (post or edit) in one chat; the latest text
    # wins, edits are never queued. Also how long a turn runs before its first preview.
    private_interval_s: float = Field(default=1.0, ge=0.05)
    group_interval_s: float = Field(default=3.0, ge=0.05)
    min_chars: int = Field(default=20, ge=1)  # no preview before this much answer text
    # Preview calls that may fail (rate limits included) before a turn stops previewing.
    max_failures: int = Field(default=3, ge=1)


class RemindersSettings(Section):
    missed_grace_h: float = Field(default=24, ge=0)
    max_active_per_user: int = Field(default=100, ge=1)
    # Active reminders and follow-ups set in one chat, by all its members together: as
    # many as one person may have, so a direct chat is never held to less.
    max_active_per_chat: int = Field(default=100, ge=1)
    # A recurring follow-up (a model turn each run) may fire at most this often, and a
    # one-shot follow-up set during a follow-up must be at least this far away; 0 = no limit.
    min_followup_interval_min: float = Field(default=15, ge=0)
    # A repeat set in a group (everyone there gets each run) fires at most this often:
    # the follow-ups' floor, so one rule holds for a group; direct chats have none.
    min_group_repeat_min: float = Field(default=15, ge=0)


class ContextSettings(Section):
    """What the context governor may send: the window it falls back to and its budgets."""

    max_context_tokens: int = Field(default=32_000, ge=1_000)
    reserve_tokens: int = Field(default=4_000, ge=0)
    max_tool_result_chars: int = Field(default=16_000, ge=500)
    history_turns: int = Field(default=6, ge=1, le=100)


class MemorySettings(Section):
    """What the assistant remembers about users and chats, and how much of it is prompted."""

    enabled: bool = True
    max_prompt_chars: int = Field(default=2_000, ge=200, le=50_000)
    max_fact_chars: int = Field(default=300, ge=20, le=2_000)
    max_facts: int = Field(default=50, ge=1, le=1_000)


class WeatherSettings(Section):
    geocoding_url: str = "https://geocoding-api.open-meteo.com/v1/search"
    forecast_url: str = "https://api.open-meteo.com/v1/forecast"
    timeout_s: float = Field(default=10, gt=0)
    max_concurrent_requests: int = Field(default=4, ge=1, le=100)


class RetentionSettings(Section):
    """How long finished rows and offloaded files are kept before housekeeping drops them."""

    inbox_days: float = Field(default=7, gt=0)
    outbox_days: float = Field(default=7, gt=0)
    tool_results_days: float = Field(default=30, gt=0)
    media_days: float = Field(default=30, gt=0)  # files users sent (data/media/)
    chat_files_days: float = Field(default=30, gt=0)  # files the bot wrote (chat_files/)
    history_days: float = Field(default=30, gt=0)  # messages a summary stands for
    reminders_days: float = Field(default=30, gt=0)  # finished reminders and follow-ups
    records_days: float = Field(default=90, gt=0)  # refused persona edits, failed folds
    every_h: float = Field(default=6, gt=0)


class AccessSettings(Section):
    """How platform channels meet strangers (users in neither allow_from nor admins)."""

    # auto: pairing where a channel's allow_from is empty, allowlist where it is not.
    dm_policy: Literal["auto", "pairing", "allowlist", "open"] = "auto"
    pairing_ttl_min: float = Field(default=60, gt=0)
    # Per channel; when full the oldest code is pushed out, never the newcomer turned away.
    max_pending: int = Field(default=10, ge=1, le=100)
    # A denied account gets no new code for this long (never less than pairing_ttl_min).
    pairing_denied_h: float = Field(default=24, gt=0)


class LimitsSettings(Section):
    """Per-user and per-chat rate limits (token buckets); admins and the terminal are
    exempt."""

    user_burst: int = Field(default=20, ge=1)
    user_refill_s: float = Field(default=3, ge=0)  # 0: no limit
    # A chat's members together (a group, all its threads): one lane answers a turn in a
    # few seconds, so 30 at once then one per 2 s is more than it can answer anyway,
    # while twenty accounts each under their own limit no longer queue 400 turns.
    chat_burst: int = Field(default=30, ge=1)
    chat_refill_s: float = Field(default=2, ge=0)  # 0: no limit


class ClusterSettings(Section):
    """Replicas on one PostgreSQL store (bot/cluster): leases on the server's clock.
    Unused with SQLite, where one process runs everything."""

    # A replica that stops renewing (killed, frozen, cut off) loses its chats and
    # connections after this; the others take them within it plus one renewal.
    lease_ttl_s: float = Field(default=10, ge=0.5, le=600)
    renew_every_s: float = Field(default=0, ge=0)  # 0: a third of lease_ttl_s
    partitions: int = Field(default=64, ge=1, le=4096)  # fixed: every replica must agree
    replica: str = ""  # a label in `bot status` and /healthz; "" = the host name
    # New messages are looked for this often; LISTEN/NOTIFY only wakes a replica sooner.
    poll_s: float = Field(default=1.0, gt=0)


class StoreSettings(Section):
    """Where the daemon keeps its state: "" is SQLite in ``data_dir`` (nothing else to
    run); ``postgresql://user[:password]@host[:port]/db[?search_path=schema]`` is a
    PostgreSQL server, which several replicas may share. Secret: it may hold a password."""

    url: SecretStr = SecretStr("")
    # PostgreSQL only: the most connections this process keeps open to the server for its
    # state (opened as work needs them; closed after two minutes unused, down to one). A
    # replica opens two more (its lease heartbeat and the LISTEN wake-up), so the server's
    # max_connections must cover replicas x (max_connections + 2), plus the CLI's.
    max_connections: int = Field(default=POOL_SIZE, ge=1, le=1_000)

    @field_validator("url")
    @classmethod
    def _known_backend(cls, value: SecretStr) -> SecretStr:
        url = value.get_secret_value()
        if url and not url.startswith(("postgresql://", "postgres://", "sqlite:")):
            raise ValueError(
                'expected "" (SQLite in data_dir), "sqlite:PATH" or "postgresql://..."'
            )
        return value


class WebSettings(Section):
    """The operations endpoint: ``/healthz``, ``/metrics`` and ``/status``."""

    enabled: bool = True
    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=0, le=65535)


class AdminSettings(Section):
    """The admin page at ``/admin`` on the ``[web]`` app (off unless enabled)."""

    enabled: bool = False
    # The address people open, e.g. "https://bot.example.com" behind a reverse proxy;
    # empty: the [web] address. Login links are built from it; https makes the
    # session cookie Secure.
    public_url: str = ""

    @field_validator("public_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        if value and not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value


def _channels_model() -> type[BaseModel]:
    """``[channels.<name>]`` for every registered platform, each its package's own model."""
    fields: dict[str, Any] = {
        spec.name: (spec.settings, Field(default_factory=spec.settings)) for spec in SPECS
    }
    return create_model("ChannelsSettings", __base__=Section, **fields)


if TYPE_CHECKING:
    ChannelsSettings = Any
else:
    ChannelsSettings = _channels_model()


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


class Settings(BaseSettings):
    """The whole configuration. ``repr`` never shows secrets (``SecretStr``)."""

    model_config = SettingsConfigDict(
        env_prefix="BOT_",
        env_nested_delimiter="__",
        # An empty variable sets nothing: bot.env.example's blank `BOT_LLM__API_KEY=`,
        # loaded as written, wiped the key bot.toml held (a value is cleared in the file).
        env_ignore_empty=True,
        extra="forbid",
        validate_default=True,
    )

    data_dir: Path = Path("data")
    timezone: str = "UTC"
    admins: list[str] = Field(default=[])
    log_level: str = "INFO"
    event_loop: EventLoopChoice = "auto"  # bot/ops/loop.py
    llm: LLMSettings = Field(default_factory=LLMSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    streaming: StreamingSettings = Field(default_factory=StreamingSettings)
    context: ContextSettings = Field(default_factory=ContextSettings)
    reminders: RemindersSettings = Field(default_factory=RemindersSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    weather: WeatherSettings = Field(default_factory=WeatherSettings)
    channels: ChannelsSettings = Field(default_factory=ChannelsSettings)
    web: WebSettings = Field(default_factory=WebSettings)
    cluster: ClusterSettings = Field(default_factory=ClusterSettings)
    admin: AdminSettings = Field(default_factory=AdminSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    retention: RetentionSettings = Field(default_factory=RetentionSettings)
    workspaces: WorkspacesSettings = Field(default_factory=WorkspacesSettings)
    access: AccessSettings = Field(default_factory=AccessSettings)
    limits: LimitsSettings = Field(default_factory=LimitsSettings)
    mcp: MCPSettings = Field(default_factory=MCPSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    fetch: FetchSettings = Field(default_factory=FetchSettings)
    media: MediaSettings = Field(default_factory=MediaSettings)

    _toml_data: ClassVar[dict[str, Any]] = {}

    @model_validator(mode="after")
    def _web_for_webhooks(self) -> Settings:
        """A channel that receives through the web app needs it on: else it would start,
        register its webhook, and never hear a message."""
        if self.web.enabled:
            return self
        for spec in SPECS:
            section = getattr(self.channels, spec.name)
            route = spec.enabled(section) and spec.web_route(section)
            if route:
                raise ValueError(
                    f"channels.{spec.name} receives through {route}, served by the web "
                    "app, but web.enabled = false: set web.enabled = true"
                )
        return self

    @field_validator("admins")
    @classmethod
    def _admin_entries(cls, values: list[str]) -> list[str]:
        """In the form senders are matched in (bot/config/admins.py)."""
        return admin_entries(values)

    def admin_problems(self) -> list[str]:
        """Each admin (global and per workspace) that matches nobody: not of the shape, or
        its channel no registered platform (checked at load, not on the model, so tests
        may run on channels of their own)."""
        named = [("admins", a) for a in self.admins] + [
            (f"workspaces.{name}.admins", a)
            for name, section in self.workspaces.sections().items()
            for a in section.admins
        ]
        return [
            f"key '{key}': {problem}; it matches nobody until fixed"
            for key, entry in named
            if (problem := admin_problem(entry))
        ]

    @field_validator("log_level")
    @classmethod
    def _known_level(cls, value: str) -> str:
        """A level's name in any case ("debug" as "DEBUG"); a typo said, not run as INFO."""
        level = value.strip().upper()
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {value!r}: use one of {', '.join(LOG_LEVELS)}")
        return level

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"unknown IANA time zone {value!r}") from exc
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Environment beats the file; the file beats defaults.
        return (init_settings, env_settings, _DictSource(settings_cls, cls._toml_data))


class _DictSource(PydanticBaseSettingsSource):
    """Feeds the already-parsed TOML document to pydantic-settings."""

    def __init__(self, settings_cls: type[BaseSettings], data: dict[str, Any]) -> None:
        super().__init__(settings_cls)
        self._data = data

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return self._data.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(self._data)


def resolve_config_path(explicit: str | Path | None) -> tuple[Path, bool]:
    """Return the config path to use and whether it was asked for explicitly."""
    if explicit:
        return Path(explicit), True
    env = os.environ.get("BOT_CONFIG")
    if env:
        return Path(env), True
    return Path(DEFAULT_CONFIG_NAME), False


def _read_toml(path: Path, required: bool) -> dict[str, Any]:
    if not path.exists():
        if required:
            raise ConfigError(f"config file {path}: not found")
        return {}
    try:
        # utf-8-sig: a file saved "UTF-8 with BOM" (Windows editors) was "invalid TOML
        # (Invalid statement (at line 1, column 1))", with nothing visible to correct
        return tomllib.loads(path.read_bytes().decode("utf-8-sig"))
    except OSError as exc:
        raise ConfigError(f"config file {path}: cannot be read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"config file {path}: not valid UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path}: invalid TOML ({exc})") from None


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def load_settings(path: str | Path | None = None) -> Settings:
    """Load and validate the configuration or raise a one-line :class:`ConfigError`."""
    return load_settings_noted(path)[0]


def load_settings_noted(path: str | Path | None = None) -> tuple[Settings, list[str]]:
    """The settings, and what the operator should hear about the file (each line is
    logged too): keys that went, values that only pin an earlier version's default,
    values the environment overrides."""
    config_path, required = resolve_config_path(path)
    return _validated(_read_toml(config_path, required), config_path)


def settings_from_text(text: str, config_path: Path) -> Settings:
    """The settings ``text`` would give once written to ``config_path``: ``bot init``
    checks what it writes first, so a refused config is never left behind."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {config_path}: invalid TOML ({exc})") from None
    return _validated(data, config_path)[0]


def _validated(data: dict[str, Any], config_path: Path) -> tuple[Settings, list[str]]:
    fields = Settings.model_fields
    sections = [n for n, f in fields.items() if _is_model(f.annotation)]
    misspelled = unknown_variable(os.environ, list(fields), sections)
    if misspelled:  # said, not refused: a deployment may set BOT_ names for other tools
        log.warning("%s (ignored)", misspelled)
    Settings._toml_data = data
    try:
        settings = Settings()
        # Loaded before as they are (old configs keep loading): said at every start.
        notes = settings.admin_problems()
        notes += deprecated_in_use(Settings, data, os.environ)
        notes += former_defaults_in_use(settings, data)
        notes += overridden(settings, data, os.environ, config_path.name)
        for line in notes:  # warnings: `bot run` reads its config before logging is set up
            log.warning("config %s: %s", config_path, line)
    except ValidationError as exc:
        raise ConfigError(describe_problems(exc, Settings, data, os.environ, config_path)) from None
    except SettingsError as exc:
        raise ConfigError(env_problem(str(exc), Settings, os.environ)) from None
    finally:
        Settings._toml_data = {}
    return settings, notes
