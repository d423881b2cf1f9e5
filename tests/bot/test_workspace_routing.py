"""Routing a message to its workspace: an admin's choice, then config routes by chat,
then by the channel's tenancy key (a Slack team, a Discord guild), then "*"."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from bot.config.workspaces import WorkspacesSettings
from bot.errors import WorkspaceError
from bot.messages import ChatKey, InboundMessage, MessageKind
from bot.store.db import Database
from bot.store.workspaces import WorkspaceStore
from bot.workspaces.folders import Workspaces
from bot.workspaces.routing import WorkspaceRouter, session_key

ROUTES = {
    "*": "lobby",
    "telegram:-100": "tg-group",
    "slack:T1": "acme",
    "discord:42": "guild",
    "slack:C9": "one-channel",
}


@pytest_asyncio.fixture
async def router(tmp_path: Path) -> AsyncIterator[WorkspaceRouter]:
    db = Database(tmp_path / "bot.db")
    await db.open()
    settings = WorkspacesSettings.model_validate({"routes": ROUTES})
    yield WorkspaceRouter(settings, WorkspaceStore(db), Workspaces(tmp_path / "ws"))
    await db.close()


def msg(
    channel: str,
    chat: str,
    key: str | None = None,
    *,
    kind: MessageKind = MessageKind.USER,
    extras: dict[str, str] | None = None,
) -> InboundMessage:
    merged = {"workspace_key": key} if key else {}
    merged.update(extras or {})
    return InboundMessage(ChatKey(channel, chat), "u1", "hi", kind=kind, extras=merged)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (msg("telegram", "-100"), "tg-group"),
        (msg("telegram", "7"), "lobby"),
        (msg("slack", "C1", "slack:T1"), "acme"),  # the team's route
        (msg("slack", "C9", "slack:T1"), "one-channel"),  # the chat itself is more specific
        (msg("slack", "C2", "slack:T2"), "lobby"),
        (msg("discord", "555", "discord:42"), "guild"),
        (msg("discord", "556", "discord:dm"), "lobby"),
    ],
)
async def test_config_routes(router: WorkspaceRouter, message: InboundMessage, expected: str):
    assert await router.resolve(message) == expected


async def test_an_admins_choice_wins_and_is_stored(router: WorkspaceRouter, tmp_path: Path):
    m = msg("slack", "C1", "slack:T1")
    with pytest.raises(WorkspaceError, match="no workspace 'special'"):  # a typo creates none
        await router.use(m.key, "special", set_by="slack:U1")
    assert not (tmp_path / "ws/special").exists()
    assert await router.resolve(m) == "acme"
    await router.use(m.key, "special", set_by="slack:U1", create=True)
    assert await router.resolve(m) == "special"
    assert await router.resolve(msg("slack", "C3", "slack:T1")) == "acme"  # other chats not
    assert (tmp_path / "ws/special/SOUL.md").exists()
    with pytest.raises(WorkspaceError):
        await router.use(m.key, "../../etc/passwd", set_by="slack:U1")


async def test_a_folder_removed_while_running_is_made_again_at_the_next_message(
    router: WorkspaceRouter, tmp_path: Path
):
    """It was made once per process: a removed folder stayed gone until a restart."""
    assert await router.resolve(msg("telegram", "7")) == "lobby"
    shutil.rmtree(tmp_path / "ws/lobby")
    assert await router.resolve(msg("telegram", "7")) == "lobby"
    assert (tmp_path / "ws/lobby/SOUL.md").exists()


async def test_a_followup_runs_in_its_own_workspace_but_users_cannot_pick_one(
    router: WorkspaceRouter,
):
    scheduled = msg("telegram", "7", kind=MessageKind.SCHEDULED, extras={"workspace": "acme"})
    assert await router.resolve(scheduled) == "acme"
    forged = msg("telegram", "7", extras={"workspace": "acme"})
    assert await router.resolve(forged) == "lobby"


def test_session_keys_differ_per_workspace_and_default_keeps_the_old_key():
    key = ChatKey("telegram", "7", "th")
    assert session_key(key, "default") == key
    assert session_key(key, "a") != session_key(key, "b") != key
