"""Helpers for the admin page's tests: a login link as `bot admin link` makes one,
and the CSRF token a page's forms carry."""

from __future__ import annotations

import re
from typing import Any

from bot.admin.auth import AdminAuth
from bot.store.sqlite import sqlite_storage

_CSRF = re.compile(r'name="csrf" value="([0-9a-f]+)"')


def auth_of(daemon: Any) -> AdminAuth:
    """An AdminAuth on the daemon's database (as the CLI's, beside the daemon)."""
    return AdminAuth(sqlite_storage(daemon.db).admin)


async def new_link(daemon: Any, base: str = "") -> str:
    return await auth_of(daemon).new_link("cli", base)


def csrf_of(html: str) -> str:
    found = _CSRF.search(html)
    assert found is not None, html[:500]
    return found.group(1)
