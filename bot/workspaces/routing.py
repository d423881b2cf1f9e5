"""Which workspace a chat uses: an admin's choice for the chat, else the config routes.

Routing keys are ``"<channel>:<chat id>"`` for every message, plus the key a channel
puts in ``extras["workspace_key"]`` when its unit of tenancy is bigger than a chat (a
team, a guild). A scheduled follow-up carries the workspace it was set
in, so it runs there even if the chat has moved since.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from bot.config.workspaces import WorkspacesSettings
from bot.lru import LRU
from bot.messages import ChatKey, InboundMessage, MessageKind
from bot.store.base import WorkspaceRecords
from bot.workspaces.files import workspace_name
from bot.workspaces.folders import DEFAULT_WORKSPACE, Workspaces, require_known

log = logging.getLogger(__name__)

# Names a message's workspace; plain (tests, fixed setups) or looked up (the router).
WorkspaceOf = Callable[[InboundMessage], str | Awaitable[str]]
WorkspaceLookup = Callable[[InboundMessage], Awaitable[str]]

ROUTING_EXTRA = "workspace_key"
WORKSPACE_EXTRA = "workspace"


async def workspace_for(of: WorkspaceOf, msg: InboundMessage) -> str:
    found = of(msg)
    return found if isinstance(found, str) else await found


def routing_keys(msg: InboundMessage) -> list[str]:
    """Most specific first: the chat itself, then the channel's tenancy key."""
    keys = [f"{msg.key.channel}:{msg.key.chat_id}"]
    extra = msg.extras.get(ROUTING_EXTRA)
    if isinstance(extra, str) and extra not in keys:
        keys.append(extra)
    return keys


def session_key(key: ChatKey, workspace: str) -> ChatKey:
    """The key a chat's history is stored under in ``workspace``.

    The default workspace keeps the chat's own key (histories from before workspaces
    stay where they are); another workspace gets its own history for the same chat.
    """
    if workspace == DEFAULT_WORKSPACE:
        return key
    return ChatKey(key.channel, key.chat_id, f"{key.thread_id or ''}@{workspace}")


def session_workspace(key: ChatKey) -> str:
    """The workspace a session key (:func:`session_key`) belongs to, as it names it."""
    _, at, workspace = (key.thread_id or "").rpartition("@")
    return workspace if at else DEFAULT_WORKSPACE


def session_thread(key: ChatKey) -> str:
    """The thread a session key (:func:`session_key`) is of; '' for the chat itself."""
    thread = key.thread_id or ""
    before, at, _ = thread.rpartition("@")
    return before if at else thread


CACHED_CHATS = 10_000  # chats whose chosen workspace is kept in memory


class WorkspaceRouter:
    def __init__(
        self, settings: WorkspacesSettings, records: WorkspaceRecords, folders: Workspaces
    ) -> None:
        self._routes = dict(settings.routes)
        self._configured = frozenset(settings.names())
        self._records = records
        self._folders = folders
        # Read on every turn; kept for the chats seen last (the table has the rest).
        self._chosen: LRU[tuple[str, str], str | None] = LRU(CACHED_CHATS)
        self._ready: set[str] = set()

    async def resolve(self, msg: InboundMessage) -> str:
        """The workspace of this message, created from the templates on first use and
        again if its folder was removed while the daemon runs."""
        name = await self._pick(msg)
        if name not in self._ready or not self._folders.exists(name):
            self._folders.ensure(name)
            self._ready.add(name)
        return name

    async def _pick(self, msg: InboundMessage) -> str:
        carried = msg.extras.get(WORKSPACE_EXTRA)
        if msg.kind is MessageKind.SCHEDULED and isinstance(carried, str):
            return workspace_name(carried)
        chosen = await self.chosen(msg.key)
        if chosen is not None:
            return chosen
        for key in routing_keys(msg):
            if key in self._routes:
                return self._routes[key]
        return self._routes.get("*", DEFAULT_WORKSPACE)

    async def chosen(self, key: ChatKey) -> str | None:
        """The workspace an admin chose for this chat with ``/workspace use``, if any."""
        chat = (key.channel, key.chat_id)
        if chat in self._chosen:
            return self._chosen[chat]
        found = await self._records.chat_workspace(*chat)
        self._chosen[chat] = found
        return found

    async def use(self, key: ChatKey, name: str, *, set_by: str, create: bool = False) -> None:
        """Route the chat to workspace ``name``: a known one, or a new one if ``create``."""
        if not create:
            require_known(self._folders, self._configured, name)
        workspace_name(name)
        self._folders.ensure(name)
        await self._records.set_chat_workspace(key.channel, key.chat_id, name, set_by=set_by)
        self._chosen[(key.channel, key.chat_id)] = name
        self._ready.add(name)
        log.info("chat %s:%s now uses workspace %s (by %s)", *_chat(key), name, set_by)


def _chat(key: ChatKey) -> tuple[str, str]:
    return key.channel, key.chat_id
