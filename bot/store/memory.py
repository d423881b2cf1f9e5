"""Remembered facts per workspace: about a user and about a chat.

An owner is ``<channel>:<user id>`` for a user fact and ``<channel>:<chat id>`` for a
chat fact (threads of one chat share its facts). A user fact follows its user across
the workspace's chats, unless it names the chat it stays in (``chat``: one learned in a
group, see bot/agent/memory/service.py). Also kept here: who wrote each stored user
message (history rows carry no sender), the consolidations that failed, and the facts
forgotten at a person's request (so a fold of the turns that said one does not add it
back).
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from bot.messages import ChatKey, utcnow
from bot.store.db import Database
from bot.store.rows import Row


class Scope(StrEnum):
    USER = "user"
    CHAT = "chat"


@dataclass(frozen=True, slots=True)
class Fact:
    id: int
    workspace: str
    scope: Scope
    owner: str
    text: str
    source: str  # "remember" (the tool), "consolidation" or "cli"
    created_at: str
    updated_at: str
    author: str = ""  # "<channel>:<user id>" of who said it; "" when unknown
    # A user fact's chat ("<channel>:<chat id>"): shown only there; "" follows its user.
    chat: str = ""


@dataclass(frozen=True, slots=True)
class Failure:
    chat: str
    from_id: int
    through_id: int
    error: str
    created_at: str


@dataclass(frozen=True, slots=True)
class Forgotten:
    """A fact removed at a person's request: its owner and its text, casefolded."""

    owner: str
    text: str


def user_owner(channel: str, user_id: str) -> str:
    return f"{channel}:{user_id}"


def chat_owner(key: ChatKey) -> str:
    return f"{key.channel}:{key.chat_id}"


COLUMNS = "id, workspace, scope, owner, fact, source, created_at, updated_at, author, chat"


_SPEAKER = "INSERT OR REPLACE INTO memory_speakers (chat, message_id, user_id) VALUES (?, ?, ?)"


def _note(conn: sqlite3.Connection, row: tuple[str, int, str]) -> None:
    conn.execute(_SPEAKER, row)


_FORGOTTEN = (
    "INSERT INTO memory_forgotten (workspace, owner, fact, forgotten_at) VALUES (?, ?, ?, ?)"
    " ON CONFLICT (workspace, owner, fact) DO UPDATE SET forgotten_at = excluded.forgotten_at"
)


def forgotten_rows(facts: Sequence[Fact]) -> list[tuple[str, str, str, str]]:
    """The ``memory_forgotten`` rows of ``facts``: workspace, owner, casefolded text, now."""
    now = utcnow().isoformat()
    return [(f.workspace, f.owner, f.text.casefold(), now) for f in facts]


def _forget(conn: sqlite3.Connection, rows: list[tuple[str, str, str, str]], ids: list[int]) -> int:
    conn.executemany(_FORGOTTEN, rows)
    marks = ", ".join("?" for _ in ids)
    return conn.execute(f"DELETE FROM memory_facts WHERE id IN ({marks})", ids).rowcount


def _facts_of_both(conn: sqlite3.Connection, params: tuple[str, ...]) -> list[sqlite3.Row]:
    sql = (
        f"SELECT {COLUMNS} FROM memory_facts WHERE workspace = ? AND ("
        "(scope = ? AND owner = ? AND chat IN ('', ?)) OR (scope = ? AND owner = ?)) ORDER BY id"
    )
    return conn.execute(sql, params).fetchall()


class MemoryStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def facts(self, workspace: str, scope: Scope, owner: str) -> list[Fact]:
        """Oldest first, so numbering stays put while facts are added."""
        rows = await self._db.fetchall(
            f"SELECT {COLUMNS} FROM memory_facts WHERE workspace = ? AND scope = ?"
            " AND owner = ? ORDER BY id",
            (workspace, scope.value, owner),
        )
        return [fact_of(r) for r in rows]

    async def facts_of_both(
        self, workspace: str, user_owner: str, chat_owner: str
    ) -> tuple[list[Fact], list[Fact]]:
        """A user's facts shown in a chat (those that follow them, and those that stay in
        it) and the chat's, oldest first, in one query (read every turn)."""
        params = (
            workspace,
            Scope.USER.value,
            user_owner,
            chat_owner,
            Scope.CHAT.value,
            chat_owner,
        )
        rows = await self._db.run_together(functools.partial(_facts_of_both, params=params))
        facts = [fact_of(r) for r in rows]
        return [f for f in facts if f.scope is Scope.USER], [
            f for f in facts if f.scope is Scope.CHAT
        ]

    async def learned_in(self, workspace: str, chat_owner: str) -> list[Fact]:
        """The chat's facts and its members' that stay in it, oldest first: what a fold
        of a group may see and change."""
        rows = await self._db.fetchall(
            f"SELECT {COLUMNS} FROM memory_facts WHERE workspace = ? AND ("
            "(scope = ? AND owner = ?) OR (scope = ? AND chat = ?)) ORDER BY id",
            (workspace, Scope.CHAT.value, chat_owner, Scope.USER.value, chat_owner),
        )
        return [fact_of(r) for r in rows]

    async def all_facts(self, workspace: str | None = None) -> list[Fact]:
        sql = f"SELECT {COLUMNS} FROM memory_facts"
        params: tuple[str, ...] = ()
        if workspace is not None:
            sql, params = sql + " WHERE workspace = ?", (workspace,)
        rows = await self._db.fetchall(sql + " ORDER BY workspace, scope, owner, id", params)
        return [fact_of(r) for r in rows]

    async def facts_page(self, workspace: str, limit: int, offset: int = 0) -> list[Fact]:
        """One page of a workspace's facts, by scope and owner (users, then chats)."""
        rows = await self._db.fetchall(
            f"SELECT {COLUMNS} FROM memory_facts WHERE workspace = ?"
            " ORDER BY scope DESC, owner, id LIMIT ? OFFSET ?",
            (workspace, limit, offset),
        )
        return [fact_of(r) for r in rows]

    async def get(self, fact_id: int) -> Fact | None:
        row = await self._db.fetchone(
            f"SELECT {COLUMNS} FROM memory_facts WHERE id = ?", (fact_id,)
        )
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
        now = utcnow().isoformat()
        fact_id = await self._db.execute(
            "INSERT INTO memory_facts (workspace, scope, owner, fact, source, created_at,"
            " updated_at, author, chat) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (workspace, scope.value, owner, text, source, now, now, author, chat),
        )
        return Fact(fact_id, workspace, scope, owner, text, source, now, now, author, chat)

    async def update(self, fact_id: int, text: str) -> bool:
        changed = await self._db.execute_count(
            "UPDATE memory_facts SET fact = ?, updated_at = ? WHERE id = ?",
            (text, utcnow().isoformat(), fact_id),
        )
        return changed > 0

    async def remove(self, fact_ids: Sequence[int]) -> int:
        if not fact_ids:
            return 0
        marks = ", ".join("?" for _ in fact_ids)
        return await self._db.execute_count(
            f"DELETE FROM memory_facts WHERE id IN ({marks})", tuple(fact_ids)
        )

    async def forget(self, facts: Sequence[Fact]) -> int:
        """Remove ``facts`` and note each as forgotten, in one transaction; how many of
        them were there."""
        if not facts:
            return 0
        work = functools.partial(_forget, rows=forgotten_rows(facts), ids=[f.id for f in facts])
        return await self._db.run_in_transaction(work)

    async def forgotten(self, workspace: str, owners: Sequence[str]) -> list[Forgotten]:
        """What was forgotten of ``owners``' facts, newest first."""
        if not owners:
            return []
        marks = ", ".join("?" for _ in owners)
        rows = await self._db.fetchall(
            "SELECT owner, fact FROM memory_forgotten WHERE workspace = ?"
            f" AND owner IN ({marks}) ORDER BY forgotten_at DESC, fact",
            (workspace, *owners),
        )
        return [Forgotten(str(r["owner"]), str(r["fact"])) for r in rows]

    async def prune_forgotten(self, older_than: datetime) -> int:
        """Let go of facts forgotten before ``older_than`` (a fold has long covered the
        turns that said them)."""
        return await self._db.execute_count(
            "DELETE FROM memory_forgotten WHERE forgotten_at < ?", (older_than.isoformat(),)
        )

    async def note_speaker(self, key: ChatKey, message_id: int, user_id: str) -> None:
        row = (str(key), message_id, user_id)
        await self._db.run_together(functools.partial(_note, row=row))

    async def speakers(self, key: ChatKey, first_id: int, last_id: int) -> dict[int, str]:
        """User id per stored user message id in ``[first_id, last_id]``."""
        rows = await self._db.fetchall(
            "SELECT message_id, user_id FROM memory_speakers WHERE chat = ?"
            " AND message_id BETWEEN ? AND ?",
            (str(key), first_id, last_id),
        )
        return {int(r["message_id"]): str(r["user_id"]) for r in rows}

    async def prune_speakers(self) -> int:
        """Forget who wrote messages that no fold will read again: gone (``/new``, a
        retracted turn) or already covered by their session's summary."""
        return await self._db.execute_count(
            "DELETE FROM memory_speakers WHERE NOT EXISTS (SELECT 1 FROM messages m"
            " WHERE m.id = memory_speakers.message_id AND m.id > COALESCE((SELECT"
            " s.through_id FROM summaries s WHERE s.session_id = m.session_id), 0))"
        )

    async def prune_failures(self, older_than: datetime) -> int:
        """Forget failed folds recorded before ``older_than`` (kept for an admin to read)."""
        return await self._db.execute_count(
            "DELETE FROM memory_failures WHERE created_at < ?", (older_than.isoformat(),)
        )

    async def record_failure(
        self, workspace: str, key: ChatKey, from_id: int, through_id: int, error: str
    ) -> None:
        await self._db.execute(
            "INSERT INTO memory_failures (workspace, chat, from_id, through_id, error,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (workspace, str(key), from_id, through_id, error[:2_000], utcnow().isoformat()),
        )

    async def failures(self, workspace: str) -> list[Failure]:
        rows = await self._db.fetchall(
            "SELECT chat, from_id, through_id, error, created_at FROM memory_failures"
            " WHERE workspace = ? ORDER BY id",
            (workspace,),
        )
        return [failure_of(r) for r in rows]


def failure_of(r: Row) -> Failure:
    return Failure(
        str(r["chat"]),
        int(r["from_id"]),
        int(r["through_id"]),
        str(r["error"]),
        str(r["created_at"]),
    )


def fact_of(r: Row) -> Fact:
    return Fact(
        id=int(r["id"]),
        workspace=str(r["workspace"]),
        scope=Scope(r["scope"]),
        owner=str(r["owner"]),
        text=str(r["fact"]),
        source=str(r["source"]),
        created_at=str(r["created_at"]),
        updated_at=str(r["updated_at"]),
        author=str(r["author"]),
        chat=str(r["chat"]),
    )
