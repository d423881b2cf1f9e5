"""What the bot posts on Slack pings no one: a model steered by a group member or a
fetched page wrote ``<!channel>`` and Slack notified every member of the channel. In
code such a sequence is shown as written (escaped), never sent as one.

Each path text takes to Slack is checked at the fake Slack, through the real slack_sdk:
a message, a streamed preview (``markdown_text``) and a file's comment."""

from __future__ import annotations

from typing import Any

from bot.messages import ChatKey, OutboundMessage
from channels.slack.mentions import plain_mentions
from tests.fakes import slack_api
from tests.fakes.slack_api import FakeSlack

fake_slack = slack_api.fake_slack
slack_channel = slack_api.slack_channel

PINGS = (
    "<!channel> urgent, <!here|here> and <!everyone>: "
    "<!subteam^S0ONCALL|@oncall> wake <@U0BOSS> and <@U0CFO|cfo>"
)
PLAIN = "@channel urgent, @here and @everyone: @oncall wake @U0BOSS and @cfo"


def test_each_mention_sequence_becomes_the_words_it_stands_for() -> None:
    assert plain_mentions(PINGS) == PLAIN
    kept = "see <https://example.com|docs> in <#C0GENERAL> at <!date^1700000000^{time}|9:00>"
    assert plain_mentions(kept) == kept


async def test_a_posted_answer_pings_no_one_and_keeps_its_links(
    fake_slack: FakeSlack, slack_channel: Any
) -> None:
    channel, _ = await slack_channel(app_token="", signing_secret="s")
    text = f"{PINGS}. See [docs](https://example.com/a) in <#C0GENERAL>."
    await channel.send(OutboundMessage(ChatKey("slack", "C0GENERAL"), text))
    [post] = fake_slack.posts("C0GENERAL")
    assert post["text"] == f"{PLAIN}. See <https://example.com/a|docs> in <#C0GENERAL>."


async def test_a_mention_in_code_is_shown_as_written_and_pings_no_one(
    fake_slack: FakeSlack, slack_channel: Any
) -> None:
    """It became plain words there too: `<!here>` in code read `@here`."""
    channel, _ = await slack_channel(app_token="", signing_secret="s")
    text = "Write `<!here>` or:\n\n```\n<!channel> & <@U0BOSS|boss>\n```\n\nnot <!here>."
    await channel.send(OutboundMessage(ChatKey("slack", "C0GENERAL"), text))
    [post] = fake_slack.posts("C0GENERAL")
    assert post["text"] == (
        "Write `&lt;!here&gt;` or:\n\n```\n&lt;!channel&gt; &amp; &lt;@U0BOSS|boss&gt;\n```"
        "\n\nnot @here."
    )


async def test_a_streamed_preview_and_its_end_ping_no_one(
    fake_slack: FakeSlack, slack_channel: Any
) -> None:
    channel, inbox = await slack_channel()
    await fake_slack.wait_socket()
    await fake_slack.push(fake_slack.mention("what is up?"))
    [asked] = await inbox.wait(1)
    ts = await channel.post_preview(asked.key, "<!here> look", asked.message_id)
    await channel.edit_preview(asked.key, ts, "<!here> look at <!chan")
    await channel.edit_preview(asked.key, ts, "<!here> look at <!channel>")  # completed now
    final = OutboundMessage.reply(asked, "<!here> look at <!channel> <@U0BOSS>", preview_id=ts)
    await channel.send(final)
    streamed = [
        str(c.params.get("markdown_text") or "")
        for c in fake_slack.calls
        if c.method in ("chat.startStream", "chat.appendStream", "chat.stopStream")
    ]
    assert streamed[0] == "@here look"
    assert "<!channel>" not in "".join(streamed)  # the completed one ended the stream
    [post] = fake_slack.posts(asked.key.chat_id)
    assert post["text"] == "@here look at @channel @U0BOSS"


async def test_a_file_comment_pings_no_one(fake_slack: FakeSlack, slack_channel: Any) -> None:
    channel, _ = await slack_channel(app_token="", signing_secret="s")
    await channel.upload(ChatKey("slack", "C0GENERAL"), "a.txt", b"a", "<!channel> read this")
    [shared] = fake_slack.shared
    assert shared["initial_comment"] == "@channel read this"
