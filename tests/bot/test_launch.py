"""``bot run`` is parsed by bot.cli.launch without Typer; every other command line, and any
``run`` it does not recognise, goes to the Typer app unchanged."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import pytest

from bot.cli import launch
from bot.cli.launch import RunArgs, plain_run


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["run"], RunArgs()),
        (["run", "--config", "a.toml"], RunArgs(Path("a.toml"))),
        (["run", "-c", "/etc/bot.toml"], RunArgs(Path("/etc/bot.toml"))),
        (["run", "--config=b.toml"], RunArgs(Path("b.toml"))),
    ],
)
def test_plain_run_forms_are_parsed_here(argv, expected):
    assert plain_run(argv) == expected


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["chat"],
        ["run", "--help"],
        ["run", "--config"],  # missing value: Typer says so
        ["run", "--config="],
        ["run", "--config", ""],
        ["run", "--config", "--help"],
        ["run", "-c", "a.toml", "extra"],
        ["run", "--bogus"],
        ["run", "--config", "a.toml", "--config", "b.toml"],
        ["doctor", "--config", "a.toml"],
    ],
)
def test_everything_else_goes_to_typer(argv):
    assert plain_run(argv) is None


def _main(monkeypatch, capsys, *argv: str) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["bot", *argv])
    with pytest.raises(SystemExit) as raised:
        launch.main()
    captured = capsys.readouterr()
    return int(raised.value.code or 0), captured.out + captured.err


def test_run_help_is_typers(monkeypatch, capsys):
    code, out = _main(monkeypatch, capsys, "run", "--help")
    assert code == 0
    assert "--config" in out and "Run the daemon" in out


def test_unknown_run_option_is_typers_usage_error(monkeypatch, capsys):
    code, out = _main(monkeypatch, capsys, "run", "--bogus")
    assert code == 2
    assert "No such option" in out


@pytest.fixture
def collector_restored():
    """``bot run`` pauses the collector until ready:; this process must get it back."""
    yield
    gc.enable()


def test_plain_run_with_a_bad_config_exits_2_with_the_error(
    monkeypatch, capsys, tmp_path, collector_restored
):
    bad = tmp_path / "bad.toml"
    bad.write_text('[llm]\ntimeout_s = "soon"\n')
    for argv in (["run", "-c", str(bad)], ["run", f"--config={bad}"]):
        code, out = _main(monkeypatch, capsys, *argv)
        assert code == 2
        assert out.startswith("error: ") and "llm.timeout_s" in out
        assert "Traceback" not in out
