"""The PostgreSQL backend: every repository of :mod:`bot.store.base` over one pool.

Chosen by ``[store] url = "postgresql://..."``; imported only then (``bot run`` on
SQLite never loads asyncpg).
"""

from __future__ import annotations

from bot.store.base import Storage
from bot.store.postgres.access import PgAccess
from bot.store.postgres.admin import PgAdminTokens
from bot.store.postgres.database import PostgresDatabase
from bot.store.postgres.inbox import PgInbox
from bot.store.postgres.kv import PgKeyValue
from bot.store.postgres.memory import PgMemory
from bot.store.postgres.outbox import PgOutbox
from bot.store.postgres.previews import PgPreviews
from bot.store.postgres.reminders import PgReminders, PgUserSettings
from bot.store.postgres.sessions import PgSessions
from bot.store.postgres.tables import PgTables
from bot.store.postgres.workspaces import PgWorkspaces


def postgres_storage(db: PostgresDatabase | str) -> Storage:
    """The repositories over ``db`` (a URL is connected to by ``backend.open``)."""
    database = db if isinstance(db, PostgresDatabase) else PostgresDatabase(db)
    return Storage(
        inbox=PgInbox(database),
        outbox=PgOutbox(database),
        sessions=PgSessions(database),
        reminders=PgReminders(database),
        user_settings=PgUserSettings(database),
        kv=PgKeyValue(database),
        backend=database,
        workspaces=PgWorkspaces(database),
        access=PgAccess(database),
        memory=PgMemory(database),
        admin=PgAdminTokens(database),
        previews=PgPreviews(database),
        tables=PgTables(database),
    )
