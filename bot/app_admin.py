"""The composition root's admin side: the admin page's services and routes, built only
when ``[admin] enabled`` (so jinja2 and the pages are never imported otherwise).

Every service handed over is the one the chat commands use (built in :mod:`bot.app`);
the agent side's (skills, memory, MCP) is reached through the daemon when first needed.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from bot.admin.auth import LoginLimiter, base_url
from bot.admin.pages import all_pages
from bot.admin.services import AdminServices, Queues
from bot.admin.site import AdminSite
from bot.app_parts import AdminParts
from bot.config.channels import allow_lists
from channels.base import Route


def product_version() -> str:
    try:
        return version("chatbot-daemon")
    except PackageNotFoundError:  # a source tree that was never installed
        return "unknown"


def admin_routes(parts: AdminParts) -> list[Route]:
    daemon = parts.daemon
    settings = daemon.settings

    async def queues() -> Queues:
        waiting = daemon.bus.inbound_depth() + daemon.dispatcher.queued
        return Queues(inbound=waiting, outbound=await parts.storage.outbox.depth())

    services = AdminServices(
        settings=settings,
        version=product_version(),
        auth=parts.auth,
        limiter=LoginLimiter(),
        base_url=base_url(settings.admin.public_url, settings.web.host, settings.web.port),
        health=daemon.health,
        queues=queues,
        activity=parts.activity,
        folders=daemon.workspaces,
        personas=parts.personas,
        reminders=daemon.reminders,
        pairing=parts.pairing,
        allow_lists=allow_lists(settings),
        sessions=parts.storage.sessions,
        agent=daemon.agent.get,
    )
    return AdminSite(services, all_pages()).routes()
