"""One module per admin page; :func:`all_pages` lists their routes."""

from __future__ import annotations

from bot.admin.pages import (
    access,
    mcp,
    memory,
    overview,
    reminders,
    sessions,
    skills,
    workspaces,
)
from bot.admin.site import PageRoute


def all_pages() -> list[PageRoute]:
    modules = (overview, workspaces, reminders, access, memory, skills, mcp, sessions)
    return [route for module in modules for route in module.ROUTES]
