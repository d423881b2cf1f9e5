"""``bot pairing list | approve <code> | deny <code> | revoke <channel>:<user id>``.

Works on the store directly, also while the daemon runs (SQLite allows a second
connection, PostgreSQL many): the daemon reads approvals per message, so a change takes
effect at the user's next message. An approved stranger is told by the daemon only when
approved from chat; from here the operator tells them, or they simply write again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import typer

from bot.cli.shared import ConfigOpt, with_storage
from bot.config import Settings
from bot.dispatcher.pairing import Pairing, describe_request
from bot.messages import utcnow
from bot.store.base import Storage

app = typer.Typer(no_args_is_help=True, help="Pairing codes and approved users.")
T = TypeVar("T")


def _with_pairing(config: Path | None, work: Callable[[Pairing], Awaitable[T]]) -> T:
    async def run(settings: Settings, storage: Storage) -> T:
        return await work(Pairing.from_settings(storage.access, settings.access))

    return with_storage(config, run)


@app.command("list")
def list_(config: ConfigOpt = None) -> None:
    """Pending pairing codes, then approved users."""

    async def work(pairing: Pairing) -> list[str]:
        now = utcnow()
        lines = [describe_request(r, now) for r in await pairing.pending()] or ["(none)"]
        approved = [f"{u.sender}  by {u.approved_by}" for u in await pairing.approved()]
        return ["pending codes:", *lines, "approved users:", *(approved or ["(none)"])]

    typer.echo("\n".join(_with_pairing(config, work)))


@app.command()
def approve(code: str, config: ConfigOpt = None) -> None:
    """Approve the stranger who was given CODE."""
    request = _with_pairing(config, lambda p: p.approve(code, by="cli"))
    typer.echo(f"approved {request.sender}")


@app.command()
def deny(code: str, config: ConfigOpt = None) -> None:
    """Refuse the request with CODE (the code is void)."""
    request = _with_pairing(config, lambda p: p.deny(code, by="cli"))
    typer.echo(f"denied {request.sender}")


@app.command()
def revoke(user: str, config: ConfigOpt = None) -> None:
    """Take back an approval: USER is <channel>:<user id> as `bot pairing list` shows it."""
    revoked = _with_pairing(config, lambda p: p.revoke(user))
    typer.echo(f"revoked {revoked}")
