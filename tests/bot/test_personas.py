"""Persona versions: every change from chat, CLI or disk is a version; budgets refuse."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sqlite3
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from bot.errors import WorkspaceError
from bot.store.db import Database
from bot.store.workspaces import WorkspaceStore
from bot.workspaces.folders import Workspaces, template_text
from bot.workspaces.personas import Personas


@pytest_asyncio.fixture
async def personas(tmp_path: Path) -> AsyncIterator[Personas]:
    db = Database(tmp_path / "bot.db")
    await db.open()
    folders = Workspaces(tmp_path / "workspaces")
    folders.ensure("team")
    yield Personas(folders, WorkspaceStore(db), max_chars=100)
    await db.close()


async def test_first_look_records_the_template_then_edits_count_up(personas: Personas) -> None:
    v = await personas.set("team", "SOUL.md", "line one\n  line two\n", author="t:1", via="chat")
    assert v is not None and v.version == 2
    history = await personas.history("team", "SOUL.md")
    assert [(h.version, h.via, h.author) for h in history] == [
        (1, "template", "template"),
        (2, "chat", "t:1"),
    ]
    assert history[0].text == template_text("SOUL.md")
    assert (personas.folders.path("team") / "SOUL.md").read_text() == "line one\n  line two\n"


async def test_over_budget_is_refused_whole_and_recorded(personas: Personas) -> None:
    await personas.set("team", "USER.md", "short", author="t:1", via="chat")
    with pytest.raises(WorkspaceError, match="101 characters, over its budget of 100"):
        await personas.set("team", "USER.md", "x" * 101, author="t:1", via="chat")
    with pytest.raises(WorkspaceError, match="over its budget"):
        await personas.append("team", "USER.md", "y" * 96, author="t:1", via="chat")
    assert await personas.current("team", "USER.md") == "short"
    assert (await personas.records.refusals("team"))[0][2:] == ("set", "over budget")
    assert await personas.set("team", "USER.md", "x" * 100, author="t:1", via="cli")


async def test_append_diff_and_rollback_as_a_new_version(personas: Personas) -> None:
    await personas.set("team", "AGENTS.md", "a\nb", author="t:1", via="chat")
    await personas.append("team", "AGENTS.md", "c\n", author="t:1", via="chat")
    assert await personas.current("team", "AGENTS.md") == "a\nb\nc\n"
    diff = await personas.diff("team", "AGENTS.md", 2)
    assert diff.splitlines()[:2] == ["--- AGENTS.md version 2", "+++ AGENTS.md current"]
    assert "+c" in diff.splitlines() and "-b" in diff.splitlines()
    back = await personas.rollback("team", "AGENTS.md", 2, author="cli:ann", via="cli")
    assert back is not None and back.version == 4 and back.text == "a\nb"
    assert await personas.current("team", "AGENTS.md") == "a\nb"
    assert "same as the current" in await personas.diff("team", "AGENTS.md", 2)
    with pytest.raises(WorkspaceError, match="no version 9"):
        await personas.rollback("team", "AGENTS.md", 9, author="x", via="cli")
    assert await personas.set("team", "AGENTS.md", "a\nb", author="x", via="cli") is None


async def test_disk_edits_are_noticed_once_via_disk(personas: Personas) -> None:
    await personas.sync("team")
    soul = personas.folders.path("team") / "SOUL.md"
    soul.write_text("edited in vim\n")
    (found,) = await personas.sync("team")
    assert (found.version, found.via, found.text) == (2, "disk", "edited in vim\n")
    assert await personas.sync("team") == []  # unchanged stamp: not even read again
    soul.write_text("z" * 150)  # over the budget of 100: recorded and used whole, flagged
    (big,) = await personas.sync("team")
    assert big.text == "z" * 150
    shown = await personas.show("team", "SOUL.md")
    assert shown.startswith("SOUL.md of workspace team: 150 / 100 chars (over budget")
    assert shown.endswith("z" * 150)
    soul.write_text("edited in vim\n")
    await personas.sync("team")
    # Same size and content rewritten (a new mtime): hashed, equal, not a new version.
    soul.write_text("edited in vim\n")
    os.utime(soul, ns=(1, 1))
    assert await personas.sync("team") == []


async def test_a_file_not_in_utf8_keeps_its_last_good_version_and_refuses_edits(
    personas: Personas,
) -> None:
    """A Latin-1 SOUL.md was read with U+FFFD for its letters, recorded so as a "disk"
    version, and /soul append wrote the replaced text back: no version held the
    original and its bytes were gone."""
    await personas.set("team", "SOUL.md", "Be kind.\n", author="t:1", via="chat")
    await personas.sync("team")
    soul = personas.folders.path("team") / "SOUL.md"
    latin1 = "Tu es un bot fran\xe7ais.\n".encode("latin-1")
    soul.write_bytes(latin1)
    assert await personas.sync("team") == []  # nothing recorded
    assert [f.text for f in personas.folders.bootstrap("team")] == ["Be kind."]
    for edit in (
        personas.append("team", "SOUL.md", "Sois bref.", author="t:1", via="chat"),
        personas.set("team", "SOUL.md", "new", author="t:1", via="chat"),
    ):
        with pytest.raises(WorkspaceError, match=r"SOUL\.md of workspace team is not UTF-8 text"):
            await edit
    with pytest.raises(WorkspaceError, match="not UTF-8"):
        await personas.show("team", "SOUL.md")
    assert soul.read_bytes() == latin1
    assert "\ufffd" not in "".join(v.text for v in await personas.history("team", "SOUL.md"))
    # Saved as UTF-8: recorded, used, and editable again.
    soul.write_text("Tu es un bot fran\xe7ais.\n", encoding="utf-8")
    (found,) = await personas.sync("team")
    assert found.text == "Tu es un bot fran\xe7ais.\n"
    assert await personas.append("team", "SOUL.md", "Sois bref.", author="t:1", via="chat")


async def test_a_rollback_restores_a_recorded_version_over_a_file_not_in_utf8(
    personas: Personas,
) -> None:
    """A rollback was refused like any edit, so an admin without an editor on the
    server had no way back to a good version; it writes that version, as UTF-8."""
    good = await personas.set(
        "team", "SOUL.md", "Sois gentil, \xe9l\xe8ve.\n", author="t:1", via="chat"
    )
    assert good is not None
    soul = personas.folders.path("team") / "SOUL.md"
    latin1 = "Tu es un bot fran\xe7ais.\n".encode("latin-1")
    soul.write_bytes(latin1)
    store = personas.records
    assert isinstance(store, WorkspaceStore)
    await store._db.run(lambda c: c.execute("PRAGMA busy_timeout = 0"))
    with contextlib.closing(sqlite3.connect(store._db.path, isolation_level=None)) as other:
        other.execute("BEGIN IMMEDIATE")  # the version cannot be recorded: nothing changes
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            await personas.rollback("team", "SOUL.md", good.version, author="t:1", via="chat")
        other.execute("ROLLBACK")
    assert soul.read_bytes() == latin1
    restored = await personas.rollback("team", "SOUL.md", good.version, author="t:1", via="chat")
    assert restored is not None and restored.version == good.version + 1
    assert soul.read_bytes() == "Sois gentil, \xe9l\xe8ve.\n".encode()
    assert await personas.current("team", "SOUL.md") == "Sois gentil, \xe9l\xe8ve.\n"
    assert await personas.sync("team") == []  # written by the rollback: no disk edit


async def test_a_file_not_in_utf8_with_no_good_version_is_read_as_cp1252(
    personas: Personas,
) -> None:
    """The prompt only: what a Windows editor meant, never recorded nor written back."""
    soul = personas.folders.path("team") / "SOUL.md"
    soul.write_bytes(b"Tu es un bot fran\xe7ais \x96 poli.\n")  # cp1252
    assert "SOUL.md" not in [v.file for v in await personas.sync("team")]
    assert [f.text for f in personas.folders.bootstrap("team")] == [
        "Tu es un bot fran\xe7ais \u2013 poli."
    ]
    assert await personas.history("team", "SOUL.md") == []


async def test_a_folder_removed_while_running_is_made_again_by_the_next_edit(
    personas: Personas,
) -> None:
    """Every edit failed ("cannot lock SOUL.md ... No such file or directory") until a
    restart: the folder was made once per process."""
    await personas.set("team", "SOUL.md", "v1\n", author="t:1", via="chat")
    shutil.rmtree(personas.folders.path("team"))
    assert await personas.current("team", "SOUL.md") == template_text("SOUL.md")
    v2 = await personas.set("team", "SOUL.md", "v2\n", author="t:1", via="chat")
    assert v2 is not None and v2.text == "v2\n"
    shutil.rmtree(personas.folders.path("team"))
    assert await personas.set("team", "USER.md", "Ada.", author="t:1", via="chat")
    assert (personas.folders.path("team") / "SOUL.md").read_text() == template_text("SOUL.md")


async def test_append_to_an_untouched_template_starts_from_empty(personas: Personas) -> None:
    """The template ("While it is unchanged from this template it is ignored") went into
    every prompt once a line was appended to it."""
    personas.max_chars = 10_000
    await personas.append("team", "USER.md", "The user is Ana.", author="t:1", via="chat")
    assert await personas.current("team", "USER.md") == "The user is Ana."
    assert [(f.name, f.text) for f in personas.folders.bootstrap("team")] == [
        ("USER.md", "The user is Ana.")
    ]
    await personas.append("team", "USER.md", "She lives in Porto.", author="t:1", via="chat")
    assert await personas.current("team", "USER.md") == "The user is Ana.\nShe lives in Porto."


async def test_a_disk_edit_keeping_size_and_mtime_is_noticed(
    personas: Personas, tmp_path: Path
) -> None:
    """A restore with `cp -p` of a same-size version kept (mtime, size): the edit was
    neither recorded nor used until a restart."""
    await personas.set("team", "SOUL.md", "Be brief.\n", author="t:1", via="chat")
    await personas.sync("team")
    soul = personas.folders.path("team") / "SOUL.md"
    assert [f.text for f in personas.folders.bootstrap("team")] == ["Be brief."]
    kept = tmp_path / "SOUL.md.bak"
    kept.write_text("Be rude!!\n")
    before = os.stat(soul)
    os.utime(kept, ns=(before.st_atime_ns, before.st_mtime_ns))
    shutil.copy2(kept, soul)  # cp -p: same size, same mtime
    after = os.stat(soul)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    (found,) = await personas.sync("team")
    assert (found.via, found.text) == ("disk", "Be rude!!\n")
    assert [f.text for f in personas.folders.bootstrap("team")] == ["Be rude!!"]


async def test_traversal_names_are_refused(personas: Personas) -> None:
    for ws, file in [("../../etc", "SOUL.md"), ("team", "../../etc/passwd"),
                     ("SOUL.md/../x", "SOUL.md"), ("team", "SOUL.md/../x")]:  # fmt: skip
        with pytest.raises(WorkspaceError):
            await personas.set(ws, file, "x", author="t:1", via="cli")


async def test_concurrent_editors_each_get_a_version_and_the_file_is_the_last(
    personas: Personas,
) -> None:
    await personas.set("default", "SOUL.md", "start", author="owner", via="cli")
    results = await asyncio.gather(
        *(
            personas.append("default", "SOUL.md", f"line {n}", author=f"u{n}", via="chat")
            for n in range(4)
        )
    )
    versions = await personas.history("default", "SOUL.md")
    assert all(r is not None for r in results)
    assert [v.author for v in versions if v.author.startswith("u")] == ["u0", "u1", "u2", "u3"]
    assert all(v.author != "disk" for v in versions)
    assert personas.folders.read("default", "SOUL.md") == versions[-1].text
    assert all(f"line {n}" in versions[-1].text for n in range(4))


async def test_two_connections_adding_versions_at_once_get_distinct_numbers(
    tmp_path: Path,
) -> None:
    """The daemon and the CLI are two processes, each with its own connection."""
    dbs = [Database(tmp_path / "shared.db") for _ in range(2)]
    for db in dbs:
        await db.open()
    stores = [WorkspaceStore(db) for db in dbs]
    added = await asyncio.gather(
        *(
            stores[n % 2].add_version("w", "SOUL.md", f"t{n}", author="a", via="cli")
            for n in range(8)
        )
    )
    assert sorted(v.version for v in added) == list(range(1, 9))
    for db in dbs:
        await db.close()


EDITOR = """
import asyncio, sys
from pathlib import Path
from bot.store.db import Database
from bot.store.workspaces import WorkspaceStore
from bot.workspaces.folders import Workspaces
from bot.workspaces.personas import Personas

async def main(root: Path, who: str, edits: int) -> None:
    db = Database(root / "bot.db")
    await db.open()
    personas = Personas(Workspaces(root / "workspaces"), WorkspaceStore(db), max_chars=100_000)
    for n in range(edits):
        await personas.append("team", "SOUL.md", f"{who} line {n}", author=who, via="cli")
    await db.close()

asyncio.run(main(Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])))
"""


async def test_editing_processes_take_turns_per_file(personas: Personas, tmp_path: Path) -> None:
    """The daemon and `bot workspace` are separate processes: each edit's file write and
    version row go together, so no edit is lost, none is recorded as made on disk, and
    the file is the last version."""
    await personas.set("team", "SOUL.md", "start", author="owner", via="cli")
    editors, edits = 4, 4
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable, "-c", EDITOR, str(tmp_path), f"cli:e{n}", str(edits)
        )
        for n in range(editors)
    ]
    codes = await asyncio.wait_for(asyncio.gather(*(p.wait() for p in procs)), timeout=60)
    assert codes == [0] * editors
    versions = await personas.history("team", "SOUL.md")
    assert [v.author for v in versions if v.author in ("disk", "template")] == ["template"]
    assert len(versions) == 2 + editors * edits
    final = personas.folders.read("team", "SOUL.md")
    assert final == versions[-1].text
    assert final is not None
    assert all(f"cli:e{n} line {i}" in final for n in range(editors) for i in range(edits))
