"""``bot doctor``: check everything a deployment depends on, before users find out.

Each check returns a :class:`Check` with the reason and the fix, so an operator reads
one table instead of a traceback in the logs hours later. The model is asked one tiny
question through the daemon's own LLMClient (same code path as a turn, no retries);
channel checks come from each channel package's spec.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import re
import shutil
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from bot.agent.llm.client import LLMClient, litellm_module
from bot.agent.llm.credentials import CONFIGURE_HINT, check_configured
from bot.config import Settings
from bot.config.channels import enabled_channels, secret_values
from bot.config.settings import load_settings_noted
from bot.errors import ConfigError, LLMError, ModelNotConfiguredError, StoreError
from bot.ops.checks import Check, HttpProblem, failed, get_json, ok
from bot.ops.datadir import nearest_existing, unwritable_fix
from bot.ops.redaction import maskable
from bot.store.location import describe, peek_version
from bot.store.schema import MIGRATIONS

CHECK_CITY = "Berlin"
MIN_FREE_BYTES = 100 * 1024 * 1024
MODEL_TIMEOUT_S = 30.0
# The sentence naming the settings to change: the fix line under the row says it.
_CONFIGURE_SENTENCE = re.compile(
    re.escape(CONFIGURE_HINT).replace(re.escape("{env}"), r"[A-Za-z0-9_]+")
)
_CONFIGURE_FIX = "set llm.model, llm.api_key, llm.api_base"


def check_config(path: str | Path | None) -> tuple[list[Check], Settings | None]:
    """The config's row, then a note for each line the load said about the file (a key
    that went, a value that only pins an earlier version's default): the doctor runs
    with logging off, and these are what an upgrade leaves behind."""
    try:
        settings, notes = load_settings_noted(path)
    except ConfigError as exc:
        # deploy/ is the source tree's, not an installed package's: a config bot init
        # wrote is where every key is at hand, commented at its default
        fix = "correct what is named above (a config `bot init` wrote lists every key)"
        return [failed("config", str(exc), fix)], None
    loaded = ok("config", str(path) if path else "loaded (file, environment, defaults)")
    return [loaded, *(Check("config", "note", line) for line in notes)], settings


def check_data_dir(data_dir: Path) -> Check:
    """Writable, with room. A missing folder is said, never made: a relative data_dir
    read from an operator's shell (without the unit's BOT_DATA_DIR) made a second, empty
    data folder there, which the next commands then took for the daemon's."""
    name = "data dir"
    if not data_dir.is_dir():
        return _missing_data_dir(data_dir)
    try:
        probe = data_dir / f".doctor-{uuid.uuid4().hex}"
        probe.write_bytes(b"ok")
        probe.unlink()
        free = shutil.disk_usage(data_dir).free
    except OSError as exc:
        return failed(
            name, f"{data_dir} is not writable ({exc.strerror or exc})", unwritable_fix(data_dir)
        )
    if low := _low_space(data_dir, free):
        return low
    return ok(name, f"{data_dir} (writable, {free / 2**30:.1f} GB free)")


def _missing_data_dir(data_dir: Path) -> Check:
    """A data folder not there yet: a note when ``bot run`` can make it (its nearest
    existing parent writable), else a failure."""
    where = data_dir.absolute()
    parent = nearest_existing(where.parent)
    relative = "" if data_dir.is_absolute() else " (data_dir is relative: read from here)"
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        return failed(
            "data dir",
            f"{where} does not exist and {parent} is not writable{relative}",
            unwritable_fix(where),
        )
    try:
        free = shutil.disk_usage(parent).free
    except OSError as exc:
        return failed("data dir", f"{parent}: {exc.strerror or exc}", "check the disk")
    if low := _low_space(where, free):
        return low
    detail = f"{where} does not exist yet{relative}: bot run creates it (not made here)"
    return Check("data dir", "note", detail)


def _low_space(data_dir: Path, free: int) -> Check | None:
    if free >= MIN_FREE_BYTES:
        return None
    return failed(
        "data dir",
        f"{data_dir}: only {free / 2**20:.0f} MB free",
        f"free disk space (at least {MIN_FREE_BYTES // 2**20} MB) or move data_dir",
    )


def _not_configured(exc: ModelNotConfiguredError) -> str:
    """The message whole but for the settings to change (the fix line): cut at its
    first ". ", it ended inside "(use e.g" and lost a local server's placeholder hint."""
    return " ".join(_CONFIGURE_SENTENCE.sub("", str(exc)).split())


async def check_model(settings: Settings) -> Check:
    llm = settings.llm
    name = f"model {llm.model}"
    client = LLMClient(
        llm.model,
        api_base=llm.api_base,
        api_key=llm.api_key.get_secret_value(),
        timeout_s=min(llm.timeout_s, MODEL_TIMEOUT_S),
        max_retries=0,
    )
    started = time.perf_counter()
    try:
        await client.complete([{"role": "user", "content": "Reply with the word OK."}], None)
    except ModelNotConfiguredError as exc:
        return failed(name, _not_configured(exc), _CONFIGURE_FIX)
    except LLMError as exc:
        return failed(
            name, str(exc), "check llm.api_base, the provider's status and llm.model's name"
        )
    return ok(name, f"answered in {time.perf_counter() - started:.1f} s")


async def check_model_offline(settings: Settings) -> Check:
    """A remote model is not called offline, but a missing key or an unknown provider is
    found without the network: the chat would otherwise answer every message with how
    to configure it, after a doctor that said all was well."""
    llm = settings.llm
    name = f"model {llm.model}"
    try:
        check_configured(
            await litellm_module(),
            llm.model,
            api_base=llm.api_base,
            api_key=llm.api_key.get_secret_value(),
        )
    except ModelNotConfiguredError as exc:
        return failed(name, _not_configured(exc), _CONFIGURE_FIX)
    return ok(name, "configured (not called: --offline)")


async def check_store(settings: Settings) -> Check:
    """The store answers, at a schema version this release can run (read, not migrated)."""
    url = settings.store.url.get_secret_value()
    where = describe(url, settings.data_dir)
    name = "store"
    try:
        version = await peek_version(url, settings.data_dir)
    except StoreError as exc:
        return failed(
            name, str(exc), "check [store] url (BOT_STORE__URL): server running, user allowed"
        )
    latest = len(MIGRATIONS)
    if version is None:
        return ok(name, f"{where} (new: created at the first start)")
    if version > latest:
        return failed(
            name,
            f"{where}: schema version {version} is newer than this release ({latest})",
            "upgrade the daemon (or point [store] url at this release's database)",
        )
    if version < latest:
        return ok(name, f"{where}: schema version {version}, migrated to {latest} at next start")
    return ok(name, f"{where}: schema version {version} (latest)")


ExtraChecks = Callable[[Settings], Awaitable[list[Check]]]
Notes = Callable[[Settings], list[Check]]


async def run_checks(
    config: str | Path | None,
    extra: ExtraChecks | None = None,
    *,
    offline: bool = False,
    notes: Notes | None = None,
) -> list[Check]:
    """Every check, the network ones concurrently; never raises for a failed check.

    ``extra`` adds checks the composition root knows of (the MCP servers). ``offline``
    skips what needs the internet (platforms, weather, MCP servers, a model that is not
    on this machine or its network), so a set-up can be checked on a plane or in CI.
    ``notes`` adds what the composition root finds in the config itself (the tools)."""
    config_checks, settings = check_config(config)
    if settings is None:
        return config_checks
    config_checks += notes(settings) if notes else []
    checks = [*config_checks, check_data_dir(settings.data_dir), await check_store(settings)]
    if offline:  # what the platforms' own checks find without the network, said first
        checks += [
            problem
            for spec, section in enabled_channels(settings)
            if (problem := spec.config_check(section)) is not None
        ]
        skipped = Check("internet", "skipped", "--offline: platforms, weather, MCP servers")
        local = _is_local(settings.llm.api_base)
        model = await (check_model if local else check_model_offline)(settings)
        return [*checks, skipped, model]
    async with aiohttp.ClientSession() as http:
        pending: list[Awaitable[Check]] = [
            spec.doctor(http, section)
            for spec, section in enabled_channels(settings)
            if spec.doctor is not None
        ]
        if not pending:
            checks.append(Check("channels", "skipped", "no platform token set (terminal only)"))
        pending += [check_model(settings), check_weather(http, settings)]
        found, more = await asyncio.gather(
            asyncio.gather(*pending), extra(settings) if extra else _none()
        )
        checks += [*found, *more]
    return [_redacted(c, settings) for c in checks]


def _is_local(api_base: str) -> bool:
    """A model server on this machine or its private network needs no internet."""
    host = urlsplit(api_base).hostname or ""
    if host == "localhost" or host.endswith(".local"):
        return True
    try:
        return ipaddress.ip_address(host).is_private  # loopback included
    except ValueError:
        return False


async def _none() -> list[Check]:
    return []


def _redacted(check: Check, settings: Settings) -> Check:
    """Tokens appear in URLs and errors; never in the report."""
    detail = check.detail
    for secret in filter(maskable, secret_values(settings)):
        detail = detail.replace(secret, "***")
    return Check(check.name, check.status, detail, check.fix)


async def check_weather(http: aiohttp.ClientSession, settings: Settings) -> Check:
    weather = settings.weather
    params = {"name": CHECK_CITY, "count": "1", "language": "en", "format": "json"}
    fix = "check weather.geocoding_url and outbound network access"
    try:
        status, body = await get_json(
            http, "GET", weather.geocoding_url, params=params, timeout=weather.timeout_s
        )
    except HttpProblem as exc:
        return failed("weather", f"{weather.geocoding_url}: {exc}", fix)
    results = body.get("results") if isinstance(body, dict) else None
    if status != 200 or not isinstance(results, list) or not results:
        return failed("weather", f"geocoding {CHECK_CITY}: HTTP {status}, no result", fix)
    first: Any = results[0]
    where = f"{first.get('latitude')}, {first.get('longitude')}" if isinstance(first, dict) else ""
    return ok("weather", f"geocoded {CHECK_CITY} ({where})")


def render(checks: list[Check]) -> str:
    """A plain table: CHECK, STATUS, DETAIL, with a ``fix:`` line under each failure."""
    width = max([len("CHECK"), *(len(c.name) for c in checks)]) + 2
    lines = [f"{'CHECK':<{width}}{'STATUS':<9}DETAIL"]
    for c in checks:
        detail = c.detail.replace("\n", "\n" + " " * (width + 9))  # a config's problems
        lines.append(
            f"{c.name:<{width}}{c.status.upper() if c.status == 'failed' else c.status:<9}{detail}"
        )
        if c.fix:
            lines.append(f"{'':<{width + 9}}fix: {c.fix}")
    bad = sum(c.status == "failed" for c in checks)
    lines.append("all checks passed" if not bad else f"{bad} check(s) failed")
    return "\n".join(lines)


def exit_code(checks: list[Check]) -> int:
    return 1 if any(c.status == "failed" for c in checks) else 0
