"""Workspace folders: templates created once, customised files read live."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.workspaces.folders import BOOTSTRAP_FILES, BootstrapFile, Workspaces, template_text


@pytest.fixture
def ws(tmp_path: Path) -> Workspaces:
    return Workspaces(tmp_path / "workspaces")


def test_templates_ship_with_the_package() -> None:
    for name in BOOTSTRAP_FILES:
        assert template_text(name).strip()


def test_ensure_creates_missing_files_from_templates(ws: Workspaces) -> None:
    folder = ws.ensure()
    assert folder == ws.root / "default"
    assert sorted(p.name for p in folder.iterdir()) == sorted(BOOTSTRAP_FILES)
    for name in BOOTSTRAP_FILES:
        assert (folder / name).read_text(encoding="utf-8") == template_text(name)


def test_ensure_never_overwrites_and_fills_gaps(ws: Workspaces) -> None:
    folder = ws.ensure("team")
    (folder / "SOUL.md").write_text("Be terse.\n", encoding="utf-8")
    (folder / "USER.md").write_text("", encoding="utf-8")  # emptied on purpose: keep it
    (folder / "AGENTS.md").unlink()
    ws.ensure("team")
    assert (folder / "SOUL.md").read_text(encoding="utf-8") == "Be terse.\n"
    assert (folder / "USER.md").read_text(encoding="utf-8") == ""
    assert (folder / "AGENTS.md").read_text(encoding="utf-8") == template_text("AGENTS.md")


def test_bootstrap_skips_templates_and_empty_files(ws: Workspaces) -> None:
    folder = ws.ensure()
    assert ws.bootstrap() == []  # fresh templates are placeholders, never prompt text

    # Template with only extra surrounding whitespace still counts as the template.
    (folder / "AGENTS.md").write_text("\n\n" + template_text("AGENTS.md") + "\n  \n")
    (folder / "SOUL.md").write_text("   \n\t\n")
    (folder / "USER.md").write_text("")
    assert ws.bootstrap() == []


def test_a_file_saved_by_a_windows_editor_reads_as_written(ws: Workspaces) -> None:
    """A UTF-8 BOM and CRLF line ends: the template saved again unchanged is still the
    template (it went into the prompt), and an edit reaches the prompt without a BOM."""
    folder = ws.ensure()
    windows = "\ufeff" + template_text("AGENTS.md").replace("\n", "\r\n")
    (folder / "AGENTS.md").write_bytes(windows.encode("utf-8"))
    assert ws.bootstrap() == []
    (folder / "SOUL.md").write_bytes("\ufeffBe terse.\r\nNo emoji.\r\n".encode())
    assert ws.bootstrap() == [BootstrapFile("SOUL.md", "Be terse.\nNo emoji.")]


def test_bootstrap_returns_customised_files_in_order(ws: Workspaces) -> None:
    folder = ws.ensure()
    # Written in reverse order so the result order cannot come from mtimes.
    (folder / "USER.md").write_text("  The user is Ada.\n\n")
    (folder / "AGENTS.md").write_text("Always answer in French.\n")
    assert ws.bootstrap() == [
        BootstrapFile("AGENTS.md", "Always answer in French."),
        BootstrapFile("USER.md", "The user is Ada."),
    ]
    (folder / "SOUL.md").write_text(template_text("SOUL.md") + "\nAlso: be kind.\n")
    assert [f.name for f in ws.bootstrap()] == ["AGENTS.md", "SOUL.md", "USER.md"]
    assert ws.bootstrap()[1].text.endswith("Also: be kind.")


def test_bootstrap_of_missing_workspace_is_empty(ws: Workspaces) -> None:
    assert ws.bootstrap("never-created") == []


def test_edits_are_picked_up_without_restart(ws: Workspaces) -> None:
    folder = ws.ensure()
    soul = folder / "SOUL.md"
    soul.write_text("version one")
    assert ws.bootstrap() == [BootstrapFile("SOUL.md", "version one")]

    soul.write_text("version two, longer")  # size changes
    assert ws.bootstrap() == [BootstrapFile("SOUL.md", "version two, longer")]

    # Same size, different content: the mtime tells the cache.
    stat = soul.stat()
    soul.write_text("version TWO, LONGER")
    os.utime(soul, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert ws.bootstrap() == [BootstrapFile("SOUL.md", "version TWO, LONGER")]

    soul.unlink()
    assert ws.bootstrap() == []
    soul.write_text("back again")
    assert ws.bootstrap() == [BootstrapFile("SOUL.md", "back again")]


def test_unchanged_files_are_served_from_cache(
    ws: Workspaces, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = ws.ensure()
    (folder / "USER.md").write_text("cached")
    assert ws.bootstrap() == [BootstrapFile("USER.md", "cached")]

    reads: list[Path] = []
    original = Path.read_text

    def counting(self: Path, *args: object, **kwargs: object) -> str:
        reads.append(self)
        return original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "read_text", counting)
    for _ in range(3):
        assert ws.bootstrap() == [BootstrapFile("USER.md", "cached")]
    assert reads == []


def test_invalid_utf8_does_not_crash(ws: Workspaces) -> None:
    folder = ws.ensure()
    (folder / "USER.md").write_bytes(b"caf\xe9 owner")
    [only] = ws.bootstrap()
    assert only.name == "USER.md"
    assert only.text.startswith("caf")


@pytest.mark.parametrize(
    "name",
    [
        "../x",
        "..",
        ".",
        ".hidden",
        "a/b",
        "a\\b",
        "",
        "x" * 65,
        "with space",
        "/abs",
        "a_b.c",
        "Team",
    ],
)
def test_invalid_workspace_names_rejected(ws: Workspaces, name: str) -> None:
    with pytest.raises(ValueError, match="invalid workspace name"):
        ws.path(name)
    with pytest.raises(ValueError):
        ws.ensure(name)
    with pytest.raises(ValueError):
        ws.bootstrap(name)
    assert not ws.root.exists()  # nothing was created outside (or inside) the root


@pytest.mark.parametrize("name", ["default", "team-1", "a_b-c", "x" * 64])
def test_valid_workspace_names(ws: Workspaces, name: str) -> None:
    assert ws.path(name) == ws.root / name
