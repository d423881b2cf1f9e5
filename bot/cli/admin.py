"""``bot admin link | logout-all``: a one-time login link to the admin page, and ending
every admin session. Works on the store directly, also while the daemon runs
(the daemon reads sessions and links from the same table)."""

from __future__ import annotations

import typer

from bot.admin.auth import LINK_TTL, AdminAuth, base_url
from bot.cli.shared import ConfigOpt, with_storage
from bot.config import Settings
from bot.store.base import Storage

app = typer.Typer(no_args_is_help=True, help="The admin page: login links and sessions.")


@app.command()
def link(config: ConfigOpt = None) -> None:
    """Print a login link for the admin page (works once, for 10 minutes)."""

    async def run(settings: Settings, storage: Storage) -> tuple[Settings, str]:
        web = settings.web
        base = base_url(settings.admin.public_url, web.host, web.port)
        return settings, await AdminAuth(storage.admin).new_link("cli", base)

    settings, url = with_storage(config, run)
    if not settings.admin.enabled:
        typer.echo("note: [admin] enabled is false: the daemon does not serve /admin", err=True)
    typer.echo(url)
    typer.echo(f"(works once, for {int(LINK_TTL.total_seconds() // 60)} minutes)", err=True)


@app.command("logout-all")
def logout_all(config: ConfigOpt = None) -> None:
    """End every admin page session (each browser must log in again)."""

    async def run(settings: Settings, storage: Storage) -> int:
        return await AdminAuth(storage.admin).log_out_all()

    ended = with_storage(config, run)
    typer.echo(f"ended {ended} admin session{'s' if ended != 1 else ''}")
