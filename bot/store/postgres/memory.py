"""Remembered facts, speakers and failed folds on PostgreSQL (see :mod:`bot.store.memory`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from bot.messages import ChatKey, utcnow
from bot.store.memory import (
    COLUMNS,
    Fact,
    Failure,
    Forgotten,
    Scope,
    fact_of,
    failure_of,
    forgotten_rows,
)
from bot.store.postgres.database import PostgresDatabase, changed
from bot.store.postgres.statements import FENCE


class PgMemory:
    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db

    async def facts(self, workspace: str, scope: Scope, owner: str) -> list[Fact]:
        rows = await self._db.fetch(
            f"SELECT {COLUMNS} FROM memory_facts WHERE workspace = $1 AND scope = $2"
            " AND owner = $3 ORDER BY id",
            workspace,
            scope.value,
            owner,
        )
        return [fact_of(r) for r in rows]

    async def facts_of_both(
        self, workspace: str, user_owner: str, chat_owner: str
    ) -> tuple[list[Fact], list[Fact]]:
        """A turn's facts: read by its start when the chat's last turn read them in the
        same workspace (bot/store/postgres/turnreads.py), else here."""
        reads = self._db.reads
        reads.facts_read(chat_owner, workspace)
        known, facts = reads.get(("facts", workspace, user_owner, chat_owner))
        if not known:
            rows = await self._db.fetch(
                f"SELECT {COLUMNS} FROM memory_facts WHERE workspace = $1 AND ((scope = $2"
                " AND owner = $3 AND chat IN ('', $5)) OR (scope = $4 AND owner = $5))"
                " ORDER BY id",
                workspace,
                Scope.USER.value,
                user_owner,
                Scope.CHAT.value,
                chat_owner,
            )
            facts = [fact_of(r) for r in rows]
        users = [f for f in facts if f.scope is Scope.USER]
        return users, [f for f in facts if f.scope is Scope.CHAT]

    async def learned_in(self, workspace: str, chat_owner: str) -> list[Fact]:
        rows = await self._db.fetch(
            f"SELECT {COLUMNS} FROM memory_facts WHERE workspace = $1 AND ("
            "(scope = $2 AND owner = $3) OR (scope = $4 AND chat = $3)) ORDER BY id",
            workspace,
            Scope.CHAT.value,
            chat_owner,
            Scope.USER.value,
        )
        return [fact_of(r) for r in rows]

    async def all_facts(self, workspace: str | None = None) -> list[Fact]:
        rows = await self._db.fetch(
            f"SELECT {COLUMNS} FROM memory_facts WHERE ($1::text IS NULL OR workspace = $1)"
            " ORDER BY workspace, scope, owner, id",
            workspace,
        )
        return [fact_of(r) for r in rows]

    async def facts_page(self, workspace: str, limit: int, offset: int = 0) -> list[Fact]:
        rows = await self._db.fetch(
            f"SELECT {COLUMNS} FROM memory_facts WHERE workspace = $1"
            " ORDER BY scope DESC, owner, id LIMIT $2 OFFSET $3",
            workspace,
            limit,
            offset,
        )
        return [fact_of(r) for r in rows]

    async def get(self, fact_id: int) -> Fact | None:
        row = await self._db.fetchrow(f"SELECT {COLUMNS} FROM memory_facts WHERE id = $1", fact_id)
        return fact_of(row) if row else None

    async def add(
        self,
        workspace: str,
        scope: Scope,
        owner: str,
        text: str,
        source: str,
        *,
        author: str = "",
        chat: str = "",
    ) -> Fact:
        self._db.reads.drop("facts")
        now = utcnow().isoformat()
        row = await self._db.fetchrow(
            "INSERT INTO memory_facts (workspace, scope, owner, fact, source, created_at,"
            " updated_at, author, chat) VALUES ($1, $2, $3, $4, $5, $6, $6, $7, $8)"
            f" RETURNING {COLUMNS}",
            workspace,
            scope.value,
            owner,
            text,
            source,
            now,
            author,
            chat,
        )
        assert row is not None  # RETURNING of an INSERT without ON CONFLICT: always a row
        return fact_of(row)

    async def update(self, fact_id: int, text: str) -> bool:
        self._db.reads.drop("facts")
        changed = await self._db.execute(
            "UPDATE memory_facts SET fact = $1, updated_at = $2 WHERE id = $3",
            text,
            utcnow().isoformat(),
            fact_id,
        )
        return changed > 0

    async def remove(self, fact_ids: Sequence[int]) -> int:
        if not fact_ids:
            return 0
        self._db.reads.drop("facts")
        return await self._db.execute(
            "DELETE FROM memory_facts WHERE id = ANY($1::bigint[])", list(fact_ids)
        )

    async def forget(self, facts: Sequence[Fact]) -> int:
        if not facts:
            return 0
        self._db.reads.drop("facts")
        async with self._db.transaction() as conn:
            await conn.executemany(
                "INSERT INTO memory_forgotten (workspace, owner, fact, forgotten_at)"
                " VALUES ($1, $2, $3, $4) ON CONFLICT (workspace, owner, fact)"
                " DO UPDATE SET forgotten_at = excluded.forgotten_at",
                forgotten_rows(facts),
            )
            status = await conn.execute(
                "DELETE FROM memory_facts WHERE id = ANY($1::bigint[])", [f.id for f in facts]
            )
        return changed(status)

    async def forgotten(self, workspace: str, owners: Sequence[str]) -> list[Forgotten]:
        if not owners:
            return []
        rows = await self._db.fetch(
            "SELECT owner, fact FROM memory_forgotten WHERE workspace = $1"
            " AND owner = ANY($2::text[]) ORDER BY forgotten_at DESC, fact",
            workspace,
            list(owners),
        )
        return [Forgotten(str(r["owner"]), str(r["fact"])) for r in rows]

    async def prune_forgotten(self, older_than: datetime) -> int:
        return await self._db.execute(
            "DELETE FROM memory_forgotten WHERE forgotten_at < $1", older_than.isoformat()
        )

    async def note_speaker(self, key: ChatKey, message_id: int, user_id: str) -> None:
        await self._db.execute(
            "INSERT INTO memory_speakers (chat, message_id, user_id)"
            f" SELECT $1, $2, $3 WHERE {FENCE}"
            " ON CONFLICT (chat, message_id) DO UPDATE SET user_id = excluded.user_id",
            str(key),
            message_id,
            user_id,
        )

    async def speakers(self, key: ChatKey, first_id: int, last_id: int) -> dict[int, str]:
        rows = await self._db.fetch(
            "SELECT message_id, user_id FROM memory_speakers WHERE chat = $1"
            " AND message_id BETWEEN $2 AND $3",
            str(key),
            first_id,
            last_id,
        )
        return {int(r["message_id"]): str(r["user_id"]) for r in rows}

    async def record_failure(
        self, workspace: str, key: ChatKey, from_id: int, through_id: int, error: str
    ) -> None:
        await self._db.execute(
            "INSERT INTO memory_failures (workspace, chat, from_id, through_id, error,"
            " created_at) VALUES ($1, $2, $3, $4, $5, $6)",
            workspace,
            str(key),
            from_id,
            through_id,
            error[:2_000],
            utcnow().isoformat(),
        )

    async def failures(self, workspace: str) -> list[Failure]:
        rows = await self._db.fetch(
            "SELECT chat, from_id, through_id, error, created_at FROM memory_failures"
            " WHERE workspace = $1 ORDER BY id",
            workspace,
        )
        return [failure_of(r) for r in rows]

    async def prune_speakers(self) -> int:
        return await self._db.execute(
            "DELETE FROM memory_speakers WHERE NOT EXISTS (SELECT 1 FROM messages m"
            " WHERE m.id = memory_speakers.message_id AND m.id > COALESCE((SELECT"
            " s.through_id FROM summaries s WHERE s.session_id = m.session_id), 0))"
        )

    async def prune_failures(self, older_than: datetime) -> int:
        return await self._db.execute(
            "DELETE FROM memory_failures WHERE created_at < $1", older_than.isoformat()
        )
