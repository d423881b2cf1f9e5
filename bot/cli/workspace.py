"""``bot workspace ...``: list workspaces and show, edit, diff and roll back persona files.

Runs next to a live daemon: both share the SQLite history (WAL), and the daemon's disk
check sees a CLI edit as already recorded (same hash), so it is not counted twice.
"""

from __future__ import annotations

import getpass
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, TypeVar

import typer

from bot.cli.shared import ConfigOpt, fail, with_storage
from bot.config import Settings
from bot.errors import BotError
from bot.store.base import Storage
from bot.store.workspaces import PersonaVersion, text_hash
from bot.workspaces.folders import Workspaces
from bot.workspaces.personas import Personas, describe

app = typer.Typer(no_args_is_help=True, help="Show and edit workspace persona files.")
VIA = "cli"
T = TypeVar("T")

Ws = Annotated[str, typer.Argument(help="workspace name")]
File = Annotated[str, typer.Argument(help="AGENTS.md, SOUL.md or USER.md (or agents/soul/user)")]
Number = Annotated[int, typer.Argument(help="version number (see history)")]
Create = Annotated[
    bool, typer.Option("--create", help="create the workspace if it does not exist yet")
]


def _author() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"


def _with_personas(
    config: Path | None,
    work: Callable[[Personas], Awaitable[T]],
    *,
    writes: bool = False,
    files: bool = True,
) -> T:
    """Open the store, run ``work``, close; a refusal is one line and exit code 2.
    ``writes``: an edit, which may be the store's first (before the daemon's first start);
    a read never makes a database where none was (a relative data_dir read elsewhere).
    ``files``: it may write a persona file (refused as root in another user's folder)."""

    async def run(settings: Settings, storage: Storage) -> T:
        folders = Workspaces(settings.data_dir / "workspaces")
        personas = Personas(
            folders,
            storage.workspaces,
            max_chars=settings.workspaces.max_file_chars,
            configured=settings.workspaces.names(),
        )
        return await work(personas)

    return with_storage(config, run, refusal_exit=2, new_store=writes, files=files)


def _report(file: str, ws: str, version: PersonaVersion | None, personas: Personas) -> None:
    if version is None:
        typer.echo(f"{file} of workspace {ws} unchanged")
    else:
        size = personas.size_line(version.text)
        typer.echo(f"{version.file} of workspace {ws}: version {version.version} ({size})")


@app.command("list")
def list_(config: ConfigOpt = None) -> None:
    """The workspaces on disk and in the config."""

    async def work(p: Personas) -> set[str]:
        return {*p.folders.names(), *p.configured}  # the config read once: warned once

    for name in sorted(_with_personas(config, work)):
        typer.echo(name)


@app.command()
def show(ws: Ws, file: File, config: ConfigOpt = None) -> None:
    """Print the file (its size against the budget goes to stderr)."""

    async def work(p: Personas) -> str:
        return await p.current(ws, file)

    text = _with_personas(config, work)
    typer.echo(text, nl=False)
    typer.echo(f"[{len(text):,} chars]", err=True)


@app.command("set")
def set_(ws: Ws, file: File, config: ConfigOpt = None, create: Create = False) -> None:
    """Replace the file with the text read from stdin, exactly as given (UTF-8)."""
    text = _utf8(sys.stdin.buffer.read(), "stdin")

    async def work(p: Personas) -> None:
        version = await p.set(ws, file, text, author=_author(), via=VIA, create=create)
        _report(file, ws, version, p)

    _with_personas(config, work, writes=True)


@app.command()
def edit(ws: Ws, file: File, config: ConfigOpt = None, create: Create = False) -> None:
    """Open the file in $EDITOR (a copy outside the workspace) and save it as a version.
    An edit saved by anyone else while the editor was open is not overwritten: the save
    is refused and the edited copy kept where the message says."""

    async def current(p: Personas) -> str:
        return await p.current(ws, file, create=create)

    text = _with_personas(config, current, writes=True)
    copy = _run_editor(text)  # kept until saved: a refused edit is not lost
    edited = _utf8(copy.read_bytes(), f"the edited copy {copy}")
    if edited == text:
        copy.unlink()
        typer.echo("no change")
        return

    async def work(p: Personas) -> None:
        try:
            version = await p.set(
                ws, file, edited, author=_author(), via=VIA, create=create, based_on=text_hash(text)
            )
        except BotError as exc:  # EditConflict, over budget, a file not in UTF-8
            raise fail(f"{exc} Your edit is kept in {copy}") from None
        copy.unlink()
        _report(file, ws, version, p)

    _with_personas(config, work, writes=True)


def _run_editor(text: str) -> Path:
    """The copy the editor saved (the caller removes it); removed here if it failed."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    fd, name = tempfile.mkstemp(suffix=".md", prefix="bot-persona-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        try:
            code = subprocess.call([*shlex.split(editor), name])
        except (OSError, ValueError) as exc:
            problem = exc.strerror if isinstance(exc, OSError) else str(exc)
            raise fail(
                f"cannot run the editor {editor!r} ({problem}); set $VISUAL or $EDITOR to an "
                "installed editor, or pipe the text to `bot workspace set`"
            ) from None
        if code != 0:
            raise fail("the editor failed; nothing was changed", 1)
    except BaseException:
        os.unlink(name)
        raise
    return Path(name)


def _utf8(data: bytes, source: str) -> str:
    """``data`` as UTF-8, or a one-line refusal: a file must never hold text whose
    undecodable bytes were carried along (they cannot be written, nor recorded)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail(
            f"{source} is not UTF-8 text (byte {exc.start}); nothing was changed. "
            "Save it as UTF-8 and try again"
        ) from None


@app.command()
def history(ws: Ws, file: File, config: ConfigOpt = None) -> None:
    """Every version: number, when, who, via, size."""

    async def work(p: Personas) -> list[PersonaVersion]:
        return await p.history(ws, file)

    for version in _with_personas(config, work):
        typer.echo(describe(version))


@app.command()
def diff(ws: Ws, file: File, n: Number, config: ConfigOpt = None) -> None:
    """Unified diff from version n to the current text."""

    async def work(p: Personas) -> str:
        return await p.diff(ws, file, n)

    typer.echo(_with_personas(config, work))


@app.command()
def rollback(ws: Ws, file: File, n: Number, config: ConfigOpt = None) -> None:
    """Make version n current again (recorded as a new version)."""

    async def work(p: Personas) -> None:
        _report(file, ws, await p.rollback(ws, file, n, author=_author(), via=VIA), p)

    _with_personas(config, work)
