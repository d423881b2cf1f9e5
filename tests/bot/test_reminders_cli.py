"""``bot reminders list | cancel`` through the CLI entry, in-process."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner, Result

from bot.cli.app import app
from bot.messages import ChatKey
from bot.store.db import Database
from bot.store.reminders import ReminderKind, ReminderStore


async def _add(data: Path) -> None:
    db = Database(data / "bot.db")
    await db.open()
    try:
        await ReminderStore(db).add(
            ChatKey("cli", "local"),
            "local",
            content="tea",
            kind=ReminderKind.REMINDER,
            fire_at=datetime.now(UTC) - timedelta(minutes=5),
            recurrence=None,
            timezone="UTC",
        )
    finally:
        await db.close()


def test_list_then_cancel(tmp_path: Path) -> None:
    cfg = tmp_path / "bot.toml"
    cfg.write_text(f'data_dir = "{tmp_path / "data"}"\n', encoding="utf-8")
    (tmp_path / "data").mkdir()
    asyncio.run(_add(tmp_path / "data"))

    def bot(*args: str) -> Result:
        return CliRunner().invoke(app, ["reminders", *args, "--config", str(cfg)])

    listed = bot("list")
    assert listed.exit_code == 0, listed.output
    assert "#1 reminder" in listed.output and "tea" in listed.output
    assert "overdue: waits for channel cli" in listed.output
    assert bot("cancel", "1").output.startswith("Cancelled #1")
    assert "no active reminders" in bot("list").output
    missing = bot("cancel", "1")
    assert missing.exit_code == 2 and "no active reminder #1" in missing.output
