"""The SQLite backend: every repository of :mod:`bot.store.base` over one connection."""

from __future__ import annotations

from pathlib import Path

from bot.store.access import AccessStore
from bot.store.admin import AdminTokenStore
from bot.store.base import Storage
from bot.store.db import Database
from bot.store.inbox import InboxStore
from bot.store.kv import KeyValueStore
from bot.store.memory import MemoryStore
from bot.store.outbox import OutboxStore
from bot.store.previews import PreviewStore
from bot.store.reminders import ReminderStore, UserSettingsStore
from bot.store.sessions import SessionStore
from bot.store.tables import SqliteTables
from bot.store.workspaces import WorkspaceStore


def sqlite_storage(db: Database | Path) -> Storage:
    """The repositories over ``db`` (a path is opened lazily by ``backend.open``)."""
    database = db if isinstance(db, Database) else Database(db)
    return Storage(
        inbox=InboxStore(database),
        outbox=OutboxStore(database),
        sessions=SessionStore(database),
        reminders=ReminderStore(database),
        user_settings=UserSettingsStore(database),
        kv=KeyValueStore(database),
        backend=database,
        workspaces=WorkspaceStore(database),
        access=AccessStore(database),
        memory=MemoryStore(database),
        admin=AdminTokenStore(database),
        previews=PreviewStore(database),
        tables=SqliteTables(database),
    )
