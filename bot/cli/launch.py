"""The ``bot`` entry point (also ``python -m bot``): ``bot run`` starts the daemon without
the command-line framework; every other command line goes to the Typer app.

Why: Typer is ~10 ms of import and, when it parses, builds a pydantic adapter per option
(~15 ms more) before ``bot run`` has done anything, all for one optional ``--config``.
Only the exact forms ``run``, ``run --config PATH``, ``run -c PATH`` and
``run --config=PATH`` take this path; anything else (``run --help``, a typo, another
command) is parsed by :mod:`bot.cli.app` exactly as before, errors and help included.
The daemon's start and its exit codes live in :mod:`bot.cli.process`, which both
paths share.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.cli import process


@dataclass(frozen=True, slots=True)
class RunArgs:
    """A ``bot run`` command line this module parses itself."""

    config: Path | None = None


def plain_run(argv: Sequence[str]) -> RunArgs | None:
    """``argv`` (without the program name) as a plain ``bot run``, or None for Typer."""
    match list(argv):
        case ["run"]:
            return RunArgs()
        case ["run", "--config" | "-c", str(path)] if path and not path.startswith("-"):
            return RunArgs(Path(path))
        case ["run", str(option)] if option.startswith("--config=") and option[9:]:
            return RunArgs(Path(option[9:]))
    return None


def main() -> None:
    """The console script."""
    args = plain_run(sys.argv[1:])
    if args is None:
        from bot.cli.app import main as cli

        cli()
        return
    sys.exit(process.run(args.config))
