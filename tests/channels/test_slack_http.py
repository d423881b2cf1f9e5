"""HTTP Events API: the channel's route on a small aiohttp app, driven by signed posts."""

from __future__ import annotations

import asyncio
import json
import time

import aiohttp

from bot.messages import ChatKey
from channels.base import ProvidesRoutes
from tests.fakes import slack_api
from tests.fakes.slack_api import FakeSlack, RoutesServer, post_signed

fake_slack = slack_api.fake_slack
slack_channel = slack_api.slack_channel


async def _http(slack_channel, fake_slack: FakeSlack, **settings):
    channel, inbox = await slack_channel(
        app_token="", signing_secret=fake_slack.signing_secret, **settings
    )
    assert isinstance(channel, ProvidesRoutes)
    [route] = channel.routes()
    assert (route.method, route.path) == ("POST", settings.get("http_path", "/slack/events"))
    server = RoutesServer(channel.routes())
    await server.start()
    return channel, inbox, server


async def test_signed_event_is_journaled_then_answered_200(fake_slack: FakeSlack, slack_channel):
    channel, inbox, server = await _http(slack_channel, fake_slack)
    try:
        assert channel.connected and not fake_slack.calls_to("apps.connections.open")
        inbox.gate = asyncio.Event()
        body = fake_slack.body(fake_slack.message("via http"))
        post = asyncio.create_task(post_signed(server.url(), body, fake_slack.signing_secret))
        await inbox.wait_offered(1)
        assert not post.done()  # no 200 before the message is journaled
        inbox.gate.set()
        assert (await post)[0] == 200
        [msg] = await inbox.wait(1)
        assert msg.key == ChatKey("slack", "D0DM", None) and msg.text == "via http"
    finally:
        await server.stop()


async def test_bad_signature_and_stale_timestamp_are_refused(fake_slack: FakeSlack, slack_channel):
    _, inbox, server = await _http(slack_channel, fake_slack)
    try:
        body = fake_slack.body(fake_slack.message("forged"))
        secret = fake_slack.signing_secret
        bad = await post_signed(server.url(), body, secret, signature="v0=" + "0" * 64)
        wrong_key = await post_signed(server.url(), body, "not-the-secret")
        stale = await post_signed(server.url(), body, secret, timestamp=int(time.time()) - 301)
        future = await post_signed(server.url(), body, secret, timestamp=int(time.time()) + 301)
        async with aiohttp.ClientSession() as http:
            headers = {"X-Slack-Request-Timestamp": "soon", "X-Slack-Signature": "v0=1"}
            async with http.post(server.url(), json=body, headers=headers) as r:
                not_a_stamp = r.status
        assert [bad[0], wrong_key[0], stale[0], future[0], not_a_stamp] == [401] * 5
        assert inbox.offered == []
        assert not fake_slack.calls_to("conversations.replies")
    finally:
        await server.stop()


async def test_url_verification_is_answered(fake_slack: FakeSlack, slack_channel):
    _, inbox, server = await _http(slack_channel, fake_slack, http_path="/hooks/slack")
    try:
        challenge = {"token": "t", "challenge": "abc123", "type": "url_verification"}
        status, text = await post_signed(server.url("/hooks/slack"), challenge,
                                         fake_slack.signing_secret)  # fmt: skip
        assert status == 200 and json.loads(text)["challenge"] == "abc123"
        unsigned = await post_signed(server.url("/hooks/slack"), challenge, "wrong")
        assert unsigned[0] == 401
        assert inbox.offered == []
    finally:
        await server.stop()


async def test_redeliveries_and_the_mention_twin_are_one_message(
    fake_slack: FakeSlack, slack_channel
):
    _, inbox, server = await _http(slack_channel, fake_slack)
    try:
        secret = fake_slack.signing_secret
        mention = fake_slack.mention("status?")
        body = fake_slack.body(mention, event_id="Ev42")
        statuses = [
            (await post_signed(server.url(), body, secret, retry_num=n or None))[0]
            for n in range(3)
        ]
        twin = fake_slack.event_for(fake_slack.messages["C0GENERAL"][-1], channel="C0GENERAL")
        statuses.append((await post_signed(server.url(), fake_slack.body(twin), secret))[0])
        assert statuses == [200] * 4
        assert len(inbox.offered) == 4
        [msg] = inbox.accepted
        assert msg.message_id == f"C0GENERAL:{mention['ts']}" and msg.text == "status?"
    finally:
        await server.stop()


async def test_a_redelivery_after_restart_is_the_same_message(fake_slack: FakeSlack, slack_channel):
    channel, inbox, server = await _http(slack_channel, fake_slack)
    body = fake_slack.body(fake_slack.message("before the restart"), event_id="Ev7")
    try:
        assert (await post_signed(server.url(), body, fake_slack.signing_secret))[0] == 200
    finally:
        await server.stop()
    await channel.stop()
    _, _, server = await _http(slack_channel, fake_slack, inbox=inbox)
    try:
        status, _ = await post_signed(server.url(), body, fake_slack.signing_secret, retry_num=1)
        assert status == 200
        assert len(inbox.offered) == 2 and len(inbox.accepted) == 1
    finally:
        await server.stop()


async def test_unknown_and_garbage_payloads(fake_slack: FakeSlack, slack_channel):
    _, inbox, server = await _http(slack_channel, fake_slack)
    try:
        secret = fake_slack.signing_secret
        unknown = fake_slack.body({"type": "team_rename", "name": "new", "event_ts": "1.1"})
        assert (await post_signed(server.url(), unknown, secret))[0] == 200
        status, _ = await post_signed(server.url(), b"not json", secret)
        assert status < 500
        assert inbox.offered == []
    finally:
        await server.stop()


async def test_bad_signature_warnings_are_rate_limited(
    fake_slack: FakeSlack, slack_channel, caplog
):
    """Anyone can post forged events: one WARNING a minute, the rest counted, not 1 each."""
    channel, _, server = await _http(slack_channel, fake_slack)
    now = [1000.0]
    channel.receiver.refusals.clock = lambda: now[0]
    try:
        body = fake_slack.body(fake_slack.message("forged"))
        for _ in range(20):
            status, _ = await post_signed(server.url(), body, "not-the-secret")
            assert status == 401
        now[0] += 61
        assert (await post_signed(server.url(), body, "not-the-secret"))[0] == 401
    finally:
        await server.stop()
    warnings = [r.getMessage() for r in caplog.records if "signature" in r.getMessage()]
    assert len(warnings) == 2, warnings
    assert "19 more" in warnings[1]
