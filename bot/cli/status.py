"""``bot status``: whether the daemon runs and what it is doing, for a person or a script.

Two sources, each read without changing anything: the running daemon's ``GET /status``
on its ``[web]`` address (:mod:`bot.ops.status`: health, channels, model, queues, MCP
servers), and the store (reminders, the inbox and outbox when no daemon answers, and
with PostgreSQL every replica's heartbeat and leases from the cluster tables). A missing
SQLite file is not created and a schema behind this release is not migrated.

Exit codes (see :data:`EXIT_CODES`): 0 running and healthy, 1 running with a failing
part (what ``/healthz`` answers 503 for), 2 a configuration or usage error, 3 not
running (nothing accepts a connection at its address), 4 cannot tell from here (among
them a daemon that accepts the connection but does not answer: stalled, say on its
database).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from bot.cli.shared import ConfigOpt, fail, load_or_exit
from bot.cli.status_store import stored
from bot.cli.status_text import render
from bot.config import Settings

HEALTHY, FAILING, NOT_RUNNING, UNKNOWN = 0, 1, 3, 4
EXIT_CODES = {
    HEALTHY: "running and healthy",
    FAILING: "running, a part failing",
    2: "a configuration or usage error",
    NOT_RUNNING: "not running",
    UNKNOWN: "cannot tell from here",
}
FETCH_TIMEOUT_S = 10.0  # the daemon's own database reads give up after 2 s
DOWN, SILENT = "not running", "not answering"  # the daemon's states fetch_live tells apart
STALLED = ": it runs but does not answer (its /healthz and log say why)"

app = typer.Typer(
    add_completion=False,
    rich_markup_mode=None,
    help="Whether the daemon runs, and what it is doing.",
)


@app.command()
def status(
    config: ConfigOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object, for scripts.")] = False,
    url: Annotated[
        str | None,
        typer.Option("--url", help="The daemon's [web] address (default: from the config)."),
    ] = None,
    reminders: Annotated[int, typer.Option(min=0, help="Upcoming reminders to list.")] = 5,
) -> None:
    """Whether the daemon runs, and what it is doing: its channels, model, inbox and
    outbox, the next reminders (and due ones waiting for a channel that is not running),
    MCP servers and, with PostgreSQL, the replicas and their leases. Exit code: 0 running
    and healthy, 1 running with a failing part, 2 a config or usage error, 3 not running,
    4 cannot tell ([web] disabled, only other replicas seen, or a daemon that takes the
    connection but does not answer)."""
    checked = _checked_url(url) if url is not None else None
    settings = load_or_exit(config)
    address = checked if checked is not None else web_address(settings)
    report = asyncio.run(collect(settings, address, reminders))
    typer.echo(json.dumps(report, indent=2) if as_json else render(report))
    raise typer.Exit(int(report["exit_code"]))


def _checked_url(url: str) -> str:
    """``--url`` as given when it is an http(s) address with a host; else a usage error
    (exit 2): "notaurl" used to read as a daemon that is not running."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        good = parts.scheme in ("http", "https") and bool(parts.hostname)
        good = good and (parts.port is None or parts.port > 0)  # port: ValueError if bad
    except ValueError:
        good = False
    if not good:
        raise fail(f"--url {url!r} is not an http address (like http://127.0.0.1:8765)")
    return url


def web_address(settings: Settings) -> str | None:
    """Where this host reaches the configured ``[web]`` app (a wildcard bind through
    loopback); None when it is disabled."""
    web = settings.web
    if not web.enabled:
        return None
    host = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}.get(web.host, web.host)
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{web.port}"


async def fetch_live(url: str) -> tuple[dict[str, Any] | None, str, str]:
    """The daemon's ``/status`` body, or None and why nothing usable answered; and the
    daemon's state as far as that tells: ``running`` (the body), ``not running`` (the
    connection refused, or another program answers), ``not answering`` (a process took
    the connection, then sent nothing usable: a daemon stalled, say on its database) or
    ``unknown`` (the address is not reached from here)."""
    import aiohttp

    timeout = aiohttp.ClientTimeout(total=FETCH_TIMEOUT_S)
    try:
        async with (
            aiohttp.ClientSession(timeout=timeout) as http,
            http.get(url.rstrip("/") + "/status") as resp,
        ):
            if resp.status >= 500:
                return None, f"{url} answers /status with HTTP {resp.status}{STALLED}", SILENT
            if resp.status != 200:
                return None, f"{url} answers /status with HTTP {resp.status}: not this bot?", DOWN
            body = await resp.json(content_type=None)
    except aiohttp.ConnectionTimeoutError:
        return None, f"cannot connect to {url} within {FETCH_TIMEOUT_S:g} s", "unknown"
    except TimeoutError:
        return None, f"{url} sent no answer within {FETCH_TIMEOUT_S:g} s{STALLED}", SILENT
    except aiohttp.ClientConnectorError as exc:
        why = f"nothing answers at {url} ({exc.os_error.strerror or 'cannot connect'})"
        return None, why, DOWN if isinstance(exc.os_error, ConnectionRefusedError) else "unknown"
    except aiohttp.ClientError as exc:
        why = f"{url} took the connection, then failed ({type(exc).__name__}){STALLED}"
        return None, why, SILENT
    except ValueError:
        return None, f"{url} answers /status with something that is not JSON: not this bot?", DOWN
    if not isinstance(body, dict) or "status" not in body:
        return None, f"{url} answers /status without a status: not this bot?", DOWN
    return body, "", "running"


async def collect(settings: Settings, url: str | None, shown: int) -> dict[str, Any]:
    """The report: the live daemon's view when one answers, the store's always."""
    live, why, seen = (
        await fetch_live(url) if url is not None else (None, "[web] is disabled", "unknown")
    )
    store = await stored(settings, shown, running=_running_channels(live))
    replicas = store.get("replicas")
    beating = [r for r in replicas or () if r["live"]]
    if live is not None:
        state, code = "running", HEALTHY if live["status"] == "ok" else FAILING
    elif seen == SILENT:  # a running daemon that does not answer is not "not running"
        state, code = SILENT, UNKNOWN
    elif beating:
        state, code = "running elsewhere", UNKNOWN
        why += f"; {len(beating)} replica(s) beat in the store"
    elif seen == DOWN or replicas is not None:  # PostgreSQL: no replica beats either
        state, code = DOWN, NOT_RUNNING
    else:
        state, code = "unknown", UNKNOWN
        if url is None:
            why += ": enable it or pass --url to tell whether the daemon runs"
    return {
        "daemon": state,
        "exit_code": code,
        "web": url,
        "why": why,
        "model": live["model"] if live else settings.llm.model,
        "live": live,
        "channels": live["channels"] if live else _configured_channels(settings, bool(beating)),
        "mcp": live["mcp"] if live else dict.fromkeys(sorted(settings.mcp.servers), "not running"),
        "data_dir": str(settings.data_dir.resolve()),
        "daemon_data_dir": _other_data_dir(settings, live),
        **store,
    }


def _other_data_dir(settings: Settings, live: dict[str, Any] | None) -> str | None:
    """The running daemon's data folder when it is not the one read here (the unit's
    BOT_DATA_DIR missing from an operator's shell): the SQLite store shown is then
    another folder's. None when they agree, or the daemon does not say (older)."""
    from bot.store.location import is_postgres

    theirs = (live or {}).get("data_dir")
    if not isinstance(theirs, str) or is_postgres(settings.store.url.get_secret_value()):
        return None
    return None if Path(theirs) == settings.data_dir.resolve() else theirs


def _running_channels(live: dict[str, Any] | None) -> set[str] | None:
    """The channels a live daemon runs; None when none answered."""
    if live is None:
        return None
    return {name for name, state in live.get("channels", {}).items() if state == "ok"}


def _configured_channels(settings: Settings, elsewhere: bool) -> dict[str, str]:
    """The configured channels, as far as this host can tell: with replicas beating in
    the store they run there (each replica's /healthz says how they fare)."""
    from bot.config.channels import enabled_channels

    state = "run by the replicas (not seen from here)" if elsewhere else "not running"
    return {spec.name: state for spec, _ in enabled_channels(settings)}
