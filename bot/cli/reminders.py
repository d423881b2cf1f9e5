"""``bot reminders list | cancel <id>``: every active reminder and follow-up, from the
database (also while the daemon runs: SQLite takes a second connection). One overdue
and waiting for its channel (not running anywhere) shows as such."""

from __future__ import annotations

import typer

from bot.cli.shared import ConfigOpt, with_storage
from bot.config import Settings
from bot.messages import utcnow
from bot.reminders.service import describe
from bot.store.base import Storage
from bot.store.reminders import Reminder, ReminderStatus

app = typer.Typer(no_args_is_help=True, help="Reminders and follow-ups of every chat.")


@app.command("list")
def list_(config: ConfigOpt = None) -> None:
    """Every active reminder: id, when, chat, text; overdue ones are marked."""

    async def run(settings: Settings, storage: Storage) -> list[Reminder]:
        return await storage.reminders.active()

    now = utcnow()
    active = with_storage(config, run)
    if not active:
        typer.echo("no active reminders")
    for r in active:
        late = r.next_fire_at is not None and r.next_fire_at < now
        waiting = f"  (overdue: waits for channel {r.key.channel})" if late else ""
        typer.echo(f"{describe(r)}  [{r.key} user {r.user_id}]{waiting}")


@app.command()
def cancel(reminder_id: int, config: ConfigOpt = None) -> None:
    """Cancel reminder ``reminder_id`` (see ``bot reminders list``)."""

    async def run(settings: Settings, storage: Storage) -> Reminder | None:
        store = storage.reminders
        found = await store.get(reminder_id)
        if found is not None and found.status is ReminderStatus.ACTIVE:
            await store.set_status(reminder_id, ReminderStatus.CANCELLED)
            return found
        return None

    found = with_storage(config, run)
    if found is None:
        typer.echo(f"error: there is no active reminder #{reminder_id}", err=True)
        raise typer.Exit(2)
    typer.echo(f"Cancelled {describe(found)}")
