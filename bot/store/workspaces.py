"""Persona file versions, refused edits and each chat's chosen workspace.

Every change to a persona file, from chat, the CLI or a direct edit on disk, is one
row with the full text, so any version can be shown, diffed and restored.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

from bot.messages import utcnow
from bot.store.db import Database
from bot.store.rows import Row


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class PersonaVersion:
    workspace: str
    file: str
    version: int
    text: str
    sha256: str
    author: str
    via: str
    created_at: datetime


COLUMNS = "workspace, file, version, text, sha256, author, via, created_at"


def version_of(row: Row) -> PersonaVersion:
    return PersonaVersion(
        workspace=row["workspace"],
        file=row["file"],
        version=int(row["version"]),
        text=row["text"],
        sha256=row["sha256"],
        author=row["author"],
        via=row["via"],
        created_at=datetime.fromisoformat(row["created_at"]),
    )


class WorkspaceStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def add_version(
        self, workspace: str, file: str, text: str, *, author: str, via: str
    ) -> PersonaVersion:
        """Store ``text`` as the next version (numbers start at 1 and never repeat).
        The number is taken in the INSERT itself: another process (the CLI beside the
        daemon) adding a version at the same time cannot be given the same one."""
        number = await self._db.run(
            lambda c: c.execute(
                f"INSERT INTO persona_versions ({COLUMNS}) SELECT ?, ?,"
                " COALESCE(MAX(version), 0) + 1, ?, ?, ?, ?, ? FROM persona_versions"
                " WHERE workspace = ? AND file = ? RETURNING version",
                (
                    workspace,
                    file,
                    text,
                    text_hash(text),
                    author,
                    via,
                    utcnow().isoformat(),
                    workspace,
                    file,
                ),
            ).fetchone()[0]
        )
        found = await self.version(workspace, file, number)
        assert found is not None
        return found

    async def latest(self, workspace: str, file: str) -> PersonaVersion | None:
        row = await self._db.fetchone(
            f"SELECT {COLUMNS} FROM persona_versions WHERE workspace = ? AND file = ?"
            " ORDER BY version DESC LIMIT 1",
            (workspace, file),
        )
        return version_of(row) if row else None

    async def version(self, workspace: str, file: str, number: int) -> PersonaVersion | None:
        row = await self._db.fetchone(
            f"SELECT {COLUMNS} FROM persona_versions WHERE workspace = ? AND file = ?"
            " AND version = ?",
            (workspace, file, number),
        )
        return version_of(row) if row else None

    async def versions(self, workspace: str, file: str) -> list[PersonaVersion]:
        rows = await self._db.fetchall(
            f"SELECT {COLUMNS} FROM persona_versions WHERE workspace = ? AND file = ?"
            " ORDER BY version",
            (workspace, file),
        )
        return [version_of(r) for r in rows]

    async def recent_versions(
        self, workspace: str, file: str, limit: int, offset: int = 0
    ) -> list[PersonaVersion]:
        """One page of the history, newest first (the admin page never loads it all)."""
        rows = await self._db.fetchall(
            f"SELECT {COLUMNS} FROM persona_versions WHERE workspace = ? AND file = ?"
            " ORDER BY version DESC LIMIT ? OFFSET ?",
            (workspace, file, limit, offset),
        )
        return [version_of(r) for r in rows]

    async def refused(
        self, workspace: str, file: str, *, author: str, via: str, action: str, reason: str
    ) -> None:
        await self._db.execute(
            "INSERT INTO persona_refusals (workspace, file, author, via, action, reason,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (workspace, file, author, via, action, reason, utcnow().isoformat()),
        )

    async def refusals(self, workspace: str) -> list[tuple[str, str, str, str]]:
        """(file, author, action, reason) of refused attempts, oldest first (for audits)."""
        rows = await self._db.fetchall(
            "SELECT file, author, action, reason FROM persona_refusals WHERE workspace = ?"
            " ORDER BY id",
            (workspace,),
        )
        return [(r["file"], r["author"], r["action"], r["reason"]) for r in rows]

    async def prune_refusals(self, older_than: datetime) -> int:
        """Forget refused edit attempts made before ``older_than``: one row per refused
        command, so a persistent caller would otherwise grow the table without end."""
        return await self._db.execute_count(
            "DELETE FROM persona_refusals WHERE created_at < ?", (older_than.isoformat(),)
        )

    async def chat_workspace(self, channel: str, chat_id: str) -> str | None:
        row = await self._db.fetchone(
            "SELECT workspace FROM chat_workspaces WHERE channel = ? AND chat_id = ?",
            (channel, chat_id),
        )
        return str(row["workspace"]) if row else None

    async def set_chat_workspace(
        self, channel: str, chat_id: str, workspace: str, *, set_by: str
    ) -> None:
        await self._db.execute(
            "INSERT INTO chat_workspaces (channel, chat_id, workspace, set_by, set_at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (channel, chat_id) DO UPDATE SET"
            " workspace = excluded.workspace, set_by = excluded.set_by, set_at = excluded.set_at",
            (channel, chat_id, workspace, set_by, utcnow().isoformat()),
        )
