"""``bot workspace ...`` through the CLI entry (in-process), and once as a real process."""

from __future__ import annotations

import asyncio
import getpass
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from bot.cli.app import app, main
from bot.store.workspaces import WorkspaceStore

TEXT = "Line one.\n  Indented $HOME `x`.\n\nLast line without newline"


def _config(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "bot.toml"
    path.write_text(f'data_dir = "{tmp_path / "data"}"\n{extra}', encoding="utf-8")
    return path


def cli(config: Path, *args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(app, ["workspace", *args, "--config", str(config)], input=stdin)


def test_set_show_history_diff_rollback(tmp_path: Path) -> None:
    cfg = _config(tmp_path, '[workspaces.routes]\n"*" = "default"\n"telegram:5" = "team"\n')
    done = cli(cfg, "set", "team", "SOUL.md", stdin=TEXT)
    assert done.exit_code == 0, done.output
    assert "SOUL.md of workspace team: version 2" in done.output
    assert (tmp_path / "data/workspaces/team/SOUL.md").read_text(encoding="utf-8") == TEXT

    shown = cli(cfg, "show", "team", "soul")
    assert shown.exit_code == 0 and shown.stdout == TEXT  # exactly as given, nothing added

    assert cli(cfg, "set", "team", "soul", stdin="Second.\n").exit_code == 0
    history = cli(cfg, "history", "team", "SOUL.md").stdout.splitlines()
    assert [line.split()[0] for line in history] == ["#1", "#2", "#3"]
    assert f"cli:{getpass.getuser()}  via cli" in history[1]
    assert "via template" in history[0]

    diff = cli(cfg, "diff", "team", "SOUL.md", "2").stdout
    assert diff.startswith("--- SOUL.md version 2\n+++ SOUL.md current\n")
    assert "-Line one.\n" in diff and "+Second.\n" in diff

    rolled = cli(cfg, "rollback", "team", "SOUL.md", "2")
    assert rolled.exit_code == 0 and "version 4" in rolled.output
    assert cli(cfg, "show", "team", "SOUL.md").stdout == TEXT

    listed = cli(cfg, "list").stdout.split()
    assert listed == ["default", "team"]  # on disk, or named by the config


def test_refusals_are_one_line_and_exit_2(tmp_path: Path) -> None:
    cfg = _config(tmp_path, "[workspaces]\nmax_file_chars = 100\n")
    over = cli(cfg, "set", "default", "USER.md", stdin="x" * 101)
    assert over.exit_code == 2
    assert "101 characters, over its budget of 100; nothing was changed" in over.output
    for ws, file, why in [
        ("../../etc/passwd", "SOUL.md", "invalid workspace name"),
        ("SOUL.md/../x", "SOUL.md", "invalid workspace name"),
        ("default", "../../etc/passwd", "not a persona file"),
        ("default", "SOUL.md/../x", "not a persona file"),
    ]:
        result = cli(cfg, "set", ws, file, stdin="x")
        assert result.exit_code == 2 and why in result.output, result.output
    assert not (tmp_path / "etc").exists()
    assert cli(cfg, "diff", "default", "SOUL.md", "7").exit_code == 2

    assert cli(cfg, "show", "default", "SOUL.md").exit_code == 0  # created from templates
    folder = tmp_path / "data/workspaces/default"
    outside = tmp_path / "outside"
    outside.write_text("keep")
    (folder / "AGENTS.md").unlink(missing_ok=True)
    (folder / "AGENTS.md").symlink_to(outside)
    linked = cli(cfg, "set", "default", "AGENTS.md", stdin="through?")
    assert linked.exit_code == 2 and "symbolic link" in linked.output
    assert outside.read_text() == "keep"


def test_text_that_is_not_utf8_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Latin-1 on stdin, or saved by the editor, ended in a traceback (UnicodeEncodeError:
    surrogates not allowed); a Latin-1 file on disk is refused, not rewritten."""
    cfg = _config(tmp_path)
    assert cli(cfg, "set", "default", "soul", stdin="Original.\n").exit_code == 0
    piped = CliRunner().invoke(
        app, ["workspace", "set", "default", "soul", "--config", str(cfg)], input=b"caf\xe9\n"
    )
    assert piped.exit_code == 2, piped.output
    assert "stdin is not UTF-8 text (byte 3); nothing was changed" in piped.output
    script = tmp_path / "editor.py"
    script.write_text("import sys\nopen(sys.argv[1], 'ab').write(b'caf\\xe9\\n')\n")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the kept copy
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    monkeypatch.delenv("VISUAL", raising=False)
    edited = cli(cfg, "edit", "default", "soul")
    assert edited.exit_code == 2 and "is not UTF-8 text" in edited.output, edited.output
    soul = tmp_path / "data/workspaces/default/SOUL.md"
    assert soul.read_text(encoding="utf-8") == "Original.\n"
    soul.write_bytes(b"caf\xe9\n")
    on_disk = cli(cfg, "set", "default", "soul", stdin="Replaced.\n")
    assert on_disk.exit_code == 2, on_disk.output
    assert "SOUL.md of workspace default is not UTF-8 text (byte 3)" in on_disk.output
    assert soul.read_bytes() == b"caf\xe9\n"


def test_a_typo_creates_no_workspace(tmp_path: Path) -> None:
    cfg = _config(tmp_path, '[workspaces.routes]\n"*" = "default"\n"telegram:5" = "team"\n')
    folders = tmp_path / "data/workspaces"
    shown = cli(cfg, "show", "nope", "SOUL.md")  # a read creates nothing
    assert shown.exit_code == 2
    assert "there is no workspace 'nope' (workspaces: default, team)" in shown.output
    assert cli(cfg, "history", "nope", "SOUL.md").exit_code == 2
    refused = cli(cfg, "set", "default", "SOUL.md", stdin="x")  # a known one is fine
    assert refused.exit_code == 0
    typo = cli(cfg, "set", "nope2", "SOUL.md", stdin="Mine.\n")
    assert typo.exit_code == 2 and "--create" in typo.output
    assert sorted(p.name for p in folders.iterdir()) == ["default"]
    # The configured workspace reads as its templates before anything made it.
    assert cli(cfg, "show", "team", "SOUL.md").exit_code == 0
    assert not (folders / "team").exists()
    made = cli(cfg, "set", "nope2", "SOUL.md", "--create", stdin="Mine.\n")
    assert made.exit_code == 0, made.output
    assert (folders / "nope2/SOUL.md").read_text(encoding="utf-8") == "Mine.\n"
    assert cli(cfg, "list").stdout.split() == ["default", "nope2", "team"]


def test_edit_runs_the_editor_on_a_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = _config(tmp_path)
    assert cli(cfg, "set", "default", "USER.md", stdin="The user is Ada.\n").exit_code == 0
    script = tmp_path / "editor.py"
    script.write_text(
        "import sys\n"
        "p = sys.argv[1]\n"
        "assert 'workspaces' not in p\n"  # never the live file
        "open(p, 'a').write('She likes tea.\\n')\n"
    )
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    monkeypatch.delenv("VISUAL", raising=False)
    edited = cli(cfg, "edit", "default", "user")
    assert edited.exit_code == 0, edited.output
    assert "version 3" in edited.output
    text = (tmp_path / "data/workspaces/default/USER.md").read_text(encoding="utf-8")
    assert text == "The user is Ada.\nShe likes tea.\n"


def test_edit_does_not_overwrite_an_edit_saved_while_the_editor_was_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`bot workspace edit` saved over whatever had been saved meanwhile, unseen."""
    cfg = _config(tmp_path)
    assert cli(cfg, "set", "default", "soul", stdin="Original.\n").exit_code == 0
    live = tmp_path / "data/workspaces/default/SOUL.md"
    script = tmp_path / "editor.py"
    script.write_text(
        "import sys\n"
        f"open({str(live)!r}, 'w').write('Alice saved this meanwhile.\\n')\n"
        "open(sys.argv[1], 'a').write('Bob: be terse.\\n')\n"
    )
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setenv("EDITOR", f"{sys.executable} {script}")
    monkeypatch.delenv("VISUAL", raising=False)
    edited = cli(cfg, "edit", "default", "soul")
    assert edited.exit_code == 2, edited.output
    line = edited.output.strip()
    assert "SOUL.md of workspace default changed since you opened it" in line
    assert "\n" not in line and "Traceback" not in line
    assert live.read_text(encoding="utf-8") == "Alice saved this meanwhile.\n"
    kept = Path(line.rsplit("Your edit is kept in ", 1)[1])
    assert kept.read_text(encoding="utf-8") == "Original.\nBob: be terse.\n"
    assert kept.parent == tmp_path


async def test_a_cli_edit_reaches_a_running_daemon_once(
    tmp_path: Path, daemon_factory, fake_llm
) -> None:
    daemon, chat = await daemon_factory(data_dir=tmp_path / "data")
    cfg = _config(tmp_path)
    await chat.ask("hello")  # the daemon has looked at the files
    done = await asyncio.to_thread(cli, cfg, "set", "default", "SOUL.md", stdin="From the CLI.")
    assert done.exit_code == 0, done.output
    await chat.ask("again")
    assert "From the CLI." in fake_llm.requests[-1].json["messages"][0]["content"]
    versions = await WorkspaceStore(daemon.db).versions("default", "SOUL.md")
    assert [v.via for v in versions] == ["template", "cli"]  # not counted again as "disk"


def test_the_main_entry_takes_argv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = _config(tmp_path, '[workspaces.routes]\n"*" = "lobby"\n')
    monkeypatch.setattr(sys, "argv", ["bot", "workspace", "list", "--config", str(cfg)])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 0
    assert capsys.readouterr().out.split() == ["lobby"]


@pytest.mark.slow
def test_workspace_cli_as_a_process(tmp_path: Path) -> None:
    cfg = _config(tmp_path)
    run = [sys.executable, "-m", "bot", "workspace"]
    subprocess.run([*run, "set", "default", "SOUL.md", "-c", str(cfg)], input="Be brief.\n",
                   text=True, check=True, capture_output=True, timeout=60)  # fmt: skip
    shown = subprocess.run([*run, "show", "default", "SOUL.md", "-c", str(cfg)],
                           text=True, check=True, capture_output=True, timeout=60)  # fmt: skip
    assert shown.stdout == "Be brief.\n"
    assert "10 chars" in shown.stderr


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_root_writes_no_file_in_a_folder_the_daemon_owns(tmp_path: Path) -> None:
    """As systemd's DynamicUser sets it up, the data folder is the daemon's user's; a
    persona file or skills list that `sudo bot ...` wrote there was root's, private, and
    the daemon could not read it. Those commands refuse; nothing in the folder changes."""
    from bot.cli.shared import owned_elsewhere

    cfg = _config(tmp_path)
    assert cli(cfg, "set", "default", "soul", stdin="Be brief.\n").exit_code == 0
    data = tmp_path / "data"
    soul = data / "workspaces/default/SOUL.md"
    before = {p: p.read_bytes() for p in data.rglob("*") if p.is_file()}
    for path in [data, *data.rglob("*")]:
        os.chown(path, 4242, 4242, follow_symlinks=False)
    for args, stdin in [
        (["workspace", "set", "default", "soul"], "Obey root.\n"),
        (["workspace", "rollback", "default", "soul", "1"], None),
        (["skills", "disable", "reminders"], None),
    ]:
        done = CliRunner().invoke(app, [*args, "--config", str(cfg)], input=stdin)
        assert done.exit_code == 2, done.output
        assert "is uid 4242's (the daemon's user)" in done.output, done.output
    after = {p: p.read_bytes() for p in data.rglob("*") if p.is_file()}
    assert after == before and soul.read_text(encoding="utf-8") == "Be brief.\n"
    assert all(p.stat().st_uid == 4242 for p in data.rglob("*"))
    assert owned_elsewhere(data, euid=4242) is None  # the owner itself writes as ever
    assert owned_elsewhere(tmp_path / "missing", euid=0) is None  # whoever makes it owns it
