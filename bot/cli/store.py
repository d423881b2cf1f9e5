"""``bot store copy --from URL --to URL``: the whole store from one backend to another.

A URL is ``sqlite:PATH`` (or a bare path to a ``.db`` file) or ``postgresql://...``, as
``[store] url`` takes them. Stop the daemon first: rows written during the copy would be
missed (the row counts would then disagree, and the copy says so). A store at an older
schema is refused, not migrated in place (the older daemon could not start on it again):
this release's ``bot run`` migrates it first.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer

from bot.cli.shared import fail, unmigrated
from bot.errors import BotError, StoreError
from bot.ops.redaction import masked_url

app = typer.Typer(no_args_is_help=True, help="The store: move it between SQLite and PostgreSQL.")

FromOpt = Annotated[str, typer.Option("--from", help="source: sqlite:PATH or postgresql://...")]
ToOpt = Annotated[str, typer.Option("--to", help="target (empty): sqlite:PATH or postgresql://")]


def _url(value: str, option: str) -> str:
    """The store URL an option names. Another scheme (``mysql://``, a typo such as
    ``postgresql+asyncpg://``) was taken for a file's path; it is refused, shown with its
    password masked."""
    if value.startswith(("postgresql://", "postgres://", "sqlite:")):
        return value
    if "://" in value:
        shown = masked_url(value)
        raise fail(f"{option} {shown}: expected sqlite:PATH, a path or postgresql://...")
    return f"sqlite:{value}"  # a bare path


@app.command()
def copy(source: FromOpt, target: ToOpt) -> None:
    """Copy every table (sessions, messages, summaries, reminders, persona versions,
    memory, access, channel state...) into an empty target; prints each table's rows."""
    from pathlib import Path

    from bot.store.copy import CopiedTable, copy_store
    from bot.store.location import describe, storage_for

    src_url, dst_url = _url(source, "--from"), _url(target, "--to")
    if describe(src_url, Path()) == describe(dst_url, Path()):
        raise fail("--from and --to name the same store")
    if not src_url.startswith("postgres") and not Path(src_url.removeprefix("sqlite:")).exists():
        raise fail(f"no database at {masked_url(source)}")

    def report(table: CopiedTable) -> None:
        typer.echo(f"{table.name}: {table.rows} rows")

    async def run() -> list[CopiedTable]:
        for url in (src_url, dst_url):  # an older daemon may still run on it
            if older := await unmigrated(url, Path()):
                raise StoreError(older)
        src, dst = storage_for(src_url, Path()), storage_for(dst_url, Path())
        await src.backend.open()
        try:
            await dst.backend.open()
            try:
                return await copy_store(src, dst, report)
            finally:
                await dst.backend.close()
        finally:
            await src.backend.close()

    try:
        copied = asyncio.run(run())
    except BotError as exc:
        raise fail(str(exc)) from None
    total = sum(t.rows for t in copied)
    typer.echo(
        f"copied {total} rows in {len(copied)} tables from {describe(src_url, Path())}"
        f" to {describe(dst_url, Path())}; row counts match"
    )
