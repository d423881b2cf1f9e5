"""The admin sub-command groups are imported only when named, yet listed and usable."""

from __future__ import annotations

import re

from typer.testing import CliRunner

from bot.cli.app import SUBCOMMANDS, app


def test_help_lists_every_group_with_its_help() -> None:
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0, result.output
    for name in ("run", "chat", "init", "doctor", "mcp", *SUBCOMMANDS):
        assert name in result.output
    assert "Show and edit workspace persona files." in result.output
    assert "Pairing codes and approved users." in result.output
    assert re.search(r"^  status +Whether the daemon runs, and what it is", result.output, re.M)


def test_a_group_is_reachable_by_name() -> None:
    result = CliRunner().invoke(app, ["pairing", "--help"])
    assert result.exit_code == 0, result.output
    assert "approve" in result.output


def test_an_unknown_command_is_refused() -> None:
    result = CliRunner().invoke(app, ["nosuch"])
    assert result.exit_code == 2


def test_help_is_plain_text_naming_every_command_and_the_version() -> None:
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0, result.output
    assert "``" not in result.output and ":mod:" not in result.output  # no reStructuredText
    for name in ("workspace", "pairing", "--version"):
        assert name in result.output
    version = CliRunner().invoke(app, ["--version"])
    assert version.exit_code == 0 and version.output.startswith("bot ")
