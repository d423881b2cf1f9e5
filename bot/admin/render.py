"""Jinja2 templates of the admin page (package data, autoescaped), rendered to responses.

Jinja2 because it is the well-kept server-side template engine (autoescaping, template
inheritance for the shared layout and menu) and already came with the dependencies.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

# No framing, no third-party anything, and the login token never leaves in a Referer.
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self';"
        " form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}

MENU = (
    ("Overview", "/admin"),
    ("Workspaces", "/admin/workspaces"),
    ("Reminders", "/admin/reminders"),
    ("Access", "/admin/access"),
    ("Memory", "/admin/memory"),
    ("Skills", "/admin/skills"),
    ("MCP", "/admin/mcp"),
    ("Sessions", "/admin/sessions"),
)


class Renderer:
    def __init__(self, *, product: str, version: str) -> None:
        self._env = Environment(
            loader=PackageLoader("bot.admin", "templates"),
            autoescape=select_autoescape(["html"]),
            undefined=StrictUndefined,  # a missing value is a bug, not an empty cell
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self._env.globals.update(product=product, version=version, menu=MENU)

    def text(self, template: str, **values: Any) -> str:
        return self._env.get_template(template).render(**values)

    def response(self, template: str, status: int = 200, **values: Any) -> web.Response:
        return web.Response(
            text=self.text(template, **values),
            status=status,
            content_type="text/html",
            charset="utf-8",
            headers=HEADERS,
        )
