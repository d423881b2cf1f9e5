"""Workspace names, persona file names, symlinks and atomic writes (no I/O through links)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.config import Settings, load_settings
from bot.config.workspaces import WorkspacesSettings
from bot.errors import ConfigError, WorkspaceError
from bot.workspaces.files import persona_file, read_text, workspace_name, write_text
from bot.workspaces.folders import Workspaces

BAD_NAMES = ["../../etc/passwd", "SOUL.md/../x", "..", ".", "", "Team", "a/b", "-x", "_x",
             "x" * 65, "a b", "a\nb", "é"]  # fmt: skip


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_workspace_names_are_refused(name: str) -> None:
    with pytest.raises(WorkspaceError, match="invalid workspace name"):
        workspace_name(name)


@pytest.mark.parametrize("name", ["default", "team-1", "a", "0_x", "x" * 64])
def test_good_workspace_names(name: str) -> None:
    assert workspace_name(name) == name


@pytest.mark.parametrize(
    "name", ["../../etc/passwd", "SOUL.md/../x", "soul.md", "MEMORY.md", "SOUL.md ", "./SOUL.md"]
)
def test_only_the_three_files(name: str) -> None:
    with pytest.raises(WorkspaceError, match="not a persona file"):
        persona_file(name)


def test_file_aliases() -> None:
    assert [persona_file(n) for n in ("soul", "agents", "user", "USER.md")] == [
        "SOUL.md",
        "AGENTS.md",
        "USER.md",
        "USER.md",
    ]


def test_a_planted_symlink_is_never_written_through_nor_read(tmp_path: Path) -> None:
    folders = Workspaces(tmp_path / "workspaces")
    ws = folders.ensure("team")
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    (ws / "SOUL.md").unlink()
    (ws / "SOUL.md").symlink_to(outside)
    with pytest.raises(WorkspaceError, match="symbolic link"):
        folders.write("team", "SOUL.md", "overwritten?")
    with pytest.raises(WorkspaceError, match="symbolic link"):
        read_text(ws / "SOUL.md")
    assert outside.read_text() == "secret\n"
    assert (ws / "SOUL.md").is_symlink()
    assert all(b.name != "SOUL.md" for b in folders.bootstrap("team"))  # not in the prompt
    folders.ensure("team")  # a link in place is not "missing": never replaced or followed
    assert outside.read_text() == "secret\n"


def test_a_workspace_folder_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    folders = Workspaces(tmp_path / "workspaces")
    folders.root.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "SOUL.md").write_text("not yours")
    (folders.root / "evil").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(WorkspaceError, match="not a plain directory"):
        folders.write("evil", "SOUL.md", "x")
    assert folders.bootstrap("evil") == []
    assert (elsewhere / "SOUL.md").read_text() == "not yours"
    assert "evil" not in folders.names()


def test_writes_are_atomic_and_leave_no_temp_files(tmp_path: Path) -> None:
    folder = tmp_path / "ws"
    folder.mkdir()
    write_text(folder, "SOUL.md", "one")
    inode = os.stat(folder / "SOUL.md").st_ino
    write_text(folder, "SOUL.md", "two $HOME {{x}} `ls`\n")
    assert (folder / "SOUL.md").read_text() == "two $HOME {{x}} `ls`\n"  # no expansion
    assert os.stat(folder / "SOUL.md").st_ino != inode  # replaced, not rewritten in place
    assert sorted(p.name for p in folder.iterdir()) == ["SOUL.md"]


def test_config_routes_and_sections() -> None:
    cfg = WorkspacesSettings.model_validate(
        {"routes": {"*": "default", "telegram:5": "team"}, "team": {"admins": ["telegram:9"]}}
    )
    assert cfg.routes == {"*": "default", "telegram:5": "team"}
    assert cfg.admins_of("team") == ["telegram:9"] and cfg.admins_of("default") == []
    assert cfg.names() == ["default", "team"]
    assert Settings().workspaces.routes == {"*": "default"}
    assert Settings().workspaces.max_file_chars == 8000


@pytest.mark.parametrize(
    ("toml", "error"),
    [
        ('[workspaces.routes]\n"*" = "../etc"\n', "invalid workspace name"),
        ('[workspaces."Bad..Name"]\nadmins = []\n', "invalid workspace name"),
        ("[workspaces.team]\nadmin = []\n", "admin"),
    ],
)
def test_config_errors_name_the_key(tmp_path: Path, toml: str, error: str) -> None:
    path = tmp_path / "bot.toml"
    path.write_text(toml)
    with pytest.raises(ConfigError, match=error):
        load_settings(path)
