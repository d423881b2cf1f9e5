"""The admin's persona workflow through the real Telegram channel (PTB against the fake
Bot API), with the fake LLM server showing what the model is sent."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest_asyncio

from bot.store.workspaces import WorkspaceStore
from tests.fakes import telegram_api
from tests.fakes.telegram_api import FakeTelegram

fake_telegram = telegram_api.fake_telegram

ADMIN, STRANGER, TEAM_ADMIN = 1, 2, 3
Ask = Callable[..., Awaitable[str]]


@pytest_asyncio.fixture
async def admin_daemon(
    tmp_path: Path, fake_llm: Any, fake_telegram: FakeTelegram
) -> AsyncIterator[Any]:
    """A daemon whose global admin is telegram user 1 and chat -5 routes to "team"."""
    from bot.app import build_daemon
    from channels.telegram.adapter import Backoff, TelegramChannel
    from tests.conftest import make_settings

    settings = make_settings(
        tmp_path / "data",
        fake_llm.url,
        admins=[f"telegram:{ADMIN}"],
        workspaces={
            "routes": {"*": "default", "telegram:-5": "team"},
            "team": {"admins": [f"telegram:{TEAM_ADMIN}"]},
        },
        channels={"telegram": fake_telegram.section()},
    )

    def channels(ctx: Any) -> list[TelegramChannel]:
        section = settings.channels.telegram
        return [TelegramChannel(section, state=ctx.state, poll_timeout=1,
                                backoff=Backoff(base=0.05, cap=0.4))]  # fmt: skip

    daemon = build_daemon(settings, channels)
    await daemon.start()
    yield daemon
    await daemon.stop(timeout=2)


@pytest_asyncio.fixture
def ask(fake_telegram: FakeTelegram) -> Ask:
    async def send(text: str, *, user: int = ADMIN, chat: int | None = None) -> str:
        chat_id = chat if chat is not None else user
        update = fake_telegram.message(text, chat_id=chat_id, user_id=user, username=None)
        mid = update["message"]["message_id"]
        calls = await fake_telegram.wait_for(
            "sendMessage",
            1,
            predicate=lambda c: c.params.get("reply_parameters", {}).get("message_id") == mid,
        )
        return "".join(str(c.params["text"]) for c in calls)

    return send


def _system(fake_llm: Any) -> str:
    return str(fake_llm.requests[-1].json["messages"][0]["content"])


SOUL = "You are Pip, a cheerful otter.\n  Keep this indented line.\nNo $HOME or {{x}} expansion."


async def test_admin_flow_set_prompt_history_diff_rollback_budget(
    admin_daemon: Any, ask: Ask, fake_llm: Any
) -> None:
    saved = await ask(f"/soul set\n{SOUL}")
    assert "SOUL.md of workspace default: saved as version 2" in saved
    assert f"{len(SOUL)} / 8,000 chars" in saved

    await ask("hello")  # the next prompt carries the text exactly as sent
    assert f"## SOUL.md\n\n{SOUL}" in _system(fake_llm)
    path = admin_daemon.workspaces.path() / "SOUL.md"
    assert path.read_text(encoding="utf-8") == SOUL

    long_line = "y" * (1234 - len(SOUL) - 1)
    assert "1,234 / 8,000 chars" in await ask(f"/soul append {long_line}")
    shown = await ask("/soul")
    assert shown.startswith("SOUL.md of workspace default: 1,234 / 8,000 chars")
    assert "Keep this indented line." in shown

    history = (await ask("/soul history")).splitlines()
    assert history[0] == "SOUL.md of workspace default: 3 version(s), newest last"
    assert "via template" in history[1] and history[1].startswith("#1 ")
    assert (
        history[2].startswith("#2 ")
        and f"telegram:{ADMIN}  via chat  {len(SOUL)} chars" in (history[2])
    )

    diff = await ask("/soul diff 2")
    assert "--- SOUL.md version 2" in diff and "+++ SOUL.md current" in diff
    assert f"\n+{long_line}" in diff

    rolled = await ask("/soul rollback 2")
    assert "version 2 restored as version 4" in rolled
    assert path.read_text(encoding="utf-8") == SOUL

    calls_before = len(fake_llm.requests)
    refused = await ask("/soul set " + "z" * 8_001)
    assert "8,001 characters, over its budget of 8,000; nothing was changed" in refused
    assert path.read_text(encoding="utf-8") == SOUL  # not cut, not changed
    assert "Error: usage: /soul diff" in await ask("/soul diff ../../etc/passwd")
    assert "has no version 99" in await ask("/soul rollback 99")
    assert len(fake_llm.requests) == calls_before  # commands never call the model

    assert "version 2" in await ask("/agents set Always answer in French.")
    assert "version 2" in await ask("/user append The user is Ada.")
    await ask("bonjour")
    system = _system(fake_llm)
    assert "Always answer in French." in system and "The user is Ada." in system


async def test_non_admins_are_refused_recorded_and_cost_no_model_call(
    admin_daemon: Any, ask: Ask, fake_llm: Any
) -> None:
    before = len(fake_llm.requests)
    for text in ("/soul set I am the captain now", "/soul", "/user history", "/workspace use x"):
        reply = await ask(text, user=STRANGER)
        assert "Only an admin of workspace" in reply and "refused and recorded" in reply
    assert len(fake_llm.requests) == before
    refusals = await WorkspaceStore(admin_daemon.db).refusals("default")
    assert refusals[0] == ("SOUL.md", f"telegram:{STRANGER}", "/soul set", "not an admin")
    assert len(refusals) == 3
    soul = (admin_daemon.workspaces.path() / "SOUL.md").read_text(encoding="utf-8")
    assert "captain" not in soul

    # A workspace's own admin edits that workspace, and only that one.
    assert "version 2" in await ask("/soul set Team spirit.", user=TEAM_ADMIN, chat=-5)
    assert "Only an admin" in await ask("/soul set nope", user=TEAM_ADMIN)
    assert "Only an admin" in await ask("/workspace use default", user=TEAM_ADMIN, chat=-5)
    await ask("@test_bot hi team", user=STRANGER, chat=-5)  # groups answer mentions
    assert "Team spirit." in _system(fake_llm)


async def test_traversal_names_and_a_planted_symlink_are_refused(
    admin_daemon: Any, ask: Ask, fake_llm: Any, tmp_path: Path
) -> None:
    for bad in ("../../etc/passwd", "SOUL.md/../x"):
        assert "invalid workspace name" in await ask(f"/workspace use {bad}")
    assert not (tmp_path / "etc").exists()

    outside = tmp_path / "outside.txt"
    outside.write_text("the host's secret\n", encoding="utf-8")
    soul = admin_daemon.workspaces.path() / "SOUL.md"
    soul.unlink()
    soul.symlink_to(outside)
    refused = await ask("/soul set written through?")
    assert "symbolic link" in refused and "refused" in refused
    assert outside.read_text(encoding="utf-8") == "the host's secret\n"
    assert soul.is_symlink()
    await ask("hello")
    assert "the host's secret" not in _system(fake_llm)  # never read through the link


async def test_disk_edits_are_noticed_at_the_next_turn_as_versions(
    admin_daemon: Any, ask: Ask, fake_llm: Any
) -> None:
    await ask("/soul set From chat.")
    soul = admin_daemon.workspaces.path() / "SOUL.md"
    soul.write_text("Edited on disk, by hand.\n", encoding="utf-8")
    before = os.lstat(soul)
    await ask("hello")
    assert "Edited on disk, by hand." in _system(fake_llm)
    history = (await ask("/soul history")).splitlines()
    assert history[-1].startswith("#3 ") and "disk  via disk" in history[-1]
    assert "-From chat." in await ask("/soul diff 2")
    # Noticing is read-only: the daemon itself never rewrites a persona file.
    after = os.lstat(soul)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert soul.read_text(encoding="utf-8") == "Edited on disk, by hand.\n"
