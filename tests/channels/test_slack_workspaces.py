"""A Slack team routed to its own workspace, through the real slack-bolt Socket Mode
client against the fake Slack and the daemon (real litellm, fake LLM)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fakes import slack_api
from tests.fakes.slack_api import TEAM, USER, FakeSlack, wait_for

fake_slack = slack_api.fake_slack


async def test_a_slack_team_routes_to_its_workspace(
    tmp_path: Path, fake_slack: FakeSlack, fake_llm: Any
) -> None:
    from bot.app import build_daemon
    from channels.slack.adapter import SlackChannel
    from tests.conftest import make_settings

    settings = make_settings(
        tmp_path / "data",
        fake_llm.url,
        workspaces={"routes": {"*": "default", f"slack:{TEAM}": "acme"},
                    "acme": {"admins": [f"slack:{USER}"]}},
        channels={"slack": {"bot_token": fake_slack.bot_token, "app_token": fake_slack.app_token,
                            "api_url": fake_slack.api_url, "allow_from": ["*"]}},
    )  # fmt: skip

    def channels(ctx: Any) -> list[SlackChannel]:
        return [
            SlackChannel(
                settings.channels.slack,
                state=ctx.state,
                ping_interval=slack_api.PING_INTERVAL_S,
                max_wait_s=2.0,
            )
        ]

    daemon = build_daemon(settings, channels)
    await daemon.start()
    try:
        await fake_slack.wait_socket()
        await fake_slack.push(fake_slack.message("/soul set You speak for Acme."))
        await wait_for(lambda: any("version 2" in p["text"] for p in fake_slack.posts("D0DM")))
        await fake_slack.push(fake_slack.message("hello"))
        await wait_for(lambda: len(fake_llm.requests) >= 1)
        system = fake_llm.requests[-1].json["messages"][0]["content"]
        assert "You speak for Acme." in system
        assert (daemon.workspaces.path("acme") / "SOUL.md").read_text() == "You speak for Acme."
        assert "Acme" not in (daemon.workspaces.path("default") / "SOUL.md").read_text()
    finally:
        await daemon.stop(timeout=2)
