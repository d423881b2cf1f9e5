"""Persona versions, refused edits and chat workspaces on PostgreSQL
(see :mod:`bot.store.workspaces`)."""

from __future__ import annotations

from datetime import datetime

from bot.messages import utcnow
from bot.store.postgres.database import PostgresDatabase
from bot.store.workspaces import COLUMNS, PersonaVersion, text_hash, version_of

_OF_FILE = f"SELECT {COLUMNS} FROM persona_versions WHERE workspace = $1 AND file = $2"


class PgWorkspaces:
    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db

    async def add_version(
        self, workspace: str, file: str, text: str, *, author: str, via: str
    ) -> PersonaVersion:
        """Store ``text`` as the file's next version. The number is taken under a lock on
        the file (two processes adding versions at once get distinct numbers)."""
        async with self._db.transaction() as conn:
            await conn.execute(
                "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
                f"persona:{workspace}/{file}",
            )
            row = await conn.fetchrow(
                f"INSERT INTO persona_versions ({COLUMNS}) SELECT $1, $2,"
                " COALESCE(MAX(version), 0) + 1, $3, $4, $5, $6, $7 FROM persona_versions"
                f" WHERE workspace = $1 AND file = $2 RETURNING {COLUMNS}",
                workspace,
                file,
                text,
                text_hash(text),
                author,
                via,
                utcnow().isoformat(),
            )
        return version_of(row)

    async def latest(self, workspace: str, file: str) -> PersonaVersion | None:
        row = await self._db.fetchrow(f"{_OF_FILE} ORDER BY version DESC LIMIT 1", workspace, file)
        return version_of(row) if row else None

    async def version(self, workspace: str, file: str, number: int) -> PersonaVersion | None:
        row = await self._db.fetchrow(f"{_OF_FILE} AND version = $3", workspace, file, number)
        return version_of(row) if row else None

    async def versions(self, workspace: str, file: str) -> list[PersonaVersion]:
        rows = await self._db.fetch(f"{_OF_FILE} ORDER BY version", workspace, file)
        return [version_of(r) for r in rows]

    async def recent_versions(
        self, workspace: str, file: str, limit: int, offset: int = 0
    ) -> list[PersonaVersion]:
        rows = await self._db.fetch(
            f"{_OF_FILE} ORDER BY version DESC LIMIT $3 OFFSET $4", workspace, file, limit, offset
        )
        return [version_of(r) for r in rows]

    async def refused(
        self, workspace: str, file: str, *, author: str, via: str, action: str, reason: str
    ) -> None:
        await self._db.execute(
            "INSERT INTO persona_refusals (workspace, file, author, via, action, reason,"
            " created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
            workspace,
            file,
            author,
            via,
            action,
            reason,
            utcnow().isoformat(),
        )

    async def refusals(self, workspace: str) -> list[tuple[str, str, str, str]]:
        rows = await self._db.fetch(
            "SELECT file, author, action, reason FROM persona_refusals WHERE workspace = $1"
            " ORDER BY id",
            workspace,
        )
        return [(r["file"], r["author"], r["action"], r["reason"]) for r in rows]

    async def chat_workspace(self, channel: str, chat_id: str) -> str | None:
        found = await self._db.fetchval(
            "SELECT workspace FROM chat_workspaces WHERE channel = $1 AND chat_id = $2",
            channel,
            chat_id,
        )
        return str(found) if found is not None else None

    async def set_chat_workspace(
        self, channel: str, chat_id: str, workspace: str, *, set_by: str
    ) -> None:
        await self._db.execute(
            "INSERT INTO chat_workspaces (channel, chat_id, workspace, set_by, set_at)"
            " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (channel, chat_id) DO UPDATE SET"
            " workspace = excluded.workspace, set_by = excluded.set_by, set_at = excluded.set_at",
            channel,
            chat_id,
            workspace,
            set_by,
            utcnow().isoformat(),
        )

    async def prune_refusals(self, older_than: datetime) -> int:
        return await self._db.execute(
            "DELETE FROM persona_refusals WHERE created_at < $1", older_than.isoformat()
        )
