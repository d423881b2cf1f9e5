"""Slack events -> InboundMessage, pure (no I/O)."""

from __future__ import annotations

from typing import Any

from bot.messages import ChatKey
from channels.slack import normalize as norm
from channels.slack.mrkdwn import escape, render_chunks, to_mrkdwn

ME = norm.BotIdentity(user_id="U0BOT", bot_id="B0BOT", team_id="T0TEAM")


def body(**event: Any) -> dict[str, Any]:
    event.setdefault("type", "message")
    event.setdefault("user", "U0ALICE")
    event.setdefault("ts", "1700000000.000100")
    event.setdefault("channel", "D0DM")
    return {"type": "event_callback", "team_id": "T0TEAM", "event": event}


def test_dm_is_a_message_with_a_deterministic_id() -> None:
    c = norm.candidate(body(text="hi &amp; bye &lt;3", channel_type="im"), ME)
    assert c is not None and norm.addressed(c, "mention", False)
    msg = norm.to_inbound(c)
    assert msg.key == ChatKey("slack", "D0DM", None)
    assert msg.message_id == "D0DM:1700000000.000100"
    assert msg.text == "hi & bye <3"
    assert msg.sender == "slack:U0ALICE"
    assert msg.extras["workspace_key"] == "slack:T0TEAM"
    assert msg.received_at.timestamp() == 1700000000.0001
    assert msg.direct


def test_mentions_open_a_thread_and_are_stripped() -> None:
    app_mention = body(type="app_mention", channel="C1", text="<@U0BOT> deploy <@U0BOB> now")
    message = body(channel="C1", channel_type="channel", text="<@U0BOT|bot> deploy <@U0BOB> now")
    a, m = norm.candidate(app_mention, ME), norm.candidate(message, ME)
    assert a is not None and m is not None
    assert a.mentioned and m.mentioned
    first, second = norm.to_inbound(a), norm.to_inbound(m)
    assert first.key == second.key == ChatKey("slack", "C1", "1700000000.000100")
    assert first.message_id == second.message_id and first.text == second.text
    assert first.text == "deploy @U0BOB now"
    assert not first.direct and not second.direct


def test_only_the_gap_of_the_mention_is_tidied() -> None:
    """Code and a /soul set text keep their indentation and inner spacing."""
    code = "def f():\n    return  1\n\tdone"
    assert norm.clean_text(f"<@U0BOT> {code}", ME) == (code, True)
    assert norm.clean_text(f"look <@U0BOT>   at\n{code}", ME) == (f"look at\n{code}", True)
    assert norm.clean_text("thanks <@U0BOT|bot>  \n  next", ME) == ("thanks\n  next", True)
    assert norm.clean_text("x\n    <@U0BOT> y", ME) == ("x\n    y", True)
    assert norm.clean_text("a  b\tc", ME) == ("a  b\tc", False)


def test_channel_chatter_needs_a_mention_unless_policy_all() -> None:
    c = norm.candidate(body(channel="C1", channel_type="channel", text="lunch?"), ME)
    assert c is not None and not c.mentioned
    assert not norm.addressed(c, "mention", False)
    assert norm.addressed(c, "all", False)


def test_thread_reply_keys_on_the_thread() -> None:
    event = body(channel="C1", channel_type="channel", text="more", thread_ts="1699.000001")
    c = norm.candidate(event, ME)
    assert c is not None and c.key == ChatKey("slack", "C1", "1699.000001")
    assert norm.addressed(c, "mention", engaged_thread=True)
    assert not norm.addressed(c, "mention", engaged_thread=False)


def test_what_is_never_a_turn() -> None:
    for event in (
        body(text="echo", user="U0BOT"),
        body(text="echo", bot_id="B0BOT"),
        body(text="beep", bot_id="B0OTHER", user="U0OTHER"),
        body(text="x", subtype="bot_message", bot_id="B9"),
        body(subtype="message_changed", message={"text": "<@U0BOT> edit"}, user=None),
        body(subtype="message_deleted", deleted_ts="1.1", user=None),
        body(subtype="channel_join", text="<@U0ALICE> has joined"),
        body(subtype="channel_topic", text="set the topic"),
        body(type="reaction_added", reaction="eyes"),
        body(type="emoji_changed"),
        body(text=""),
        {"type": "event_callback", "event": "garbage"},
        {"type": "event_callback"},
    ):
        assert norm.candidate(event, ME) is None, event


def test_a_me_message_is_a_turn() -> None:
    """``/me waves at the bot`` comes as subtype me_message: a person talking, dropped."""
    c = norm.candidate(body(subtype="me_message", text="waves at the bot"), ME)
    assert c is not None and c.text == "waves at the bot"


def test_a_file_share_is_a_turn_with_its_attachment() -> None:
    files = [{"id": "F1", "name": "log.txt", "mimetype": "text/plain", "size": 12}]
    c = norm.candidate(body(subtype="file_share", text="", files=files), ME)
    assert c is not None and c.text == "[file: log.txt]"
    [attachment] = norm.to_inbound(c).attachments
    assert (attachment.file_id, attachment.name, attachment.size) == ("F1", "log.txt", 12)


SHARE = {"is_msg_unfurl": True, "is_share": True, "author_id": "U0BOB", "author_name": "Bob",
         "text": "Prod deploy is blocked\nuntil the DB migration &amp; backup finish",
         "fallback": "[November 14th, 2023 10:13 PM] Bob: Prod deploy is blocked"}  # fmt: skip


def test_a_shared_message_is_quoted_with_its_author() -> None:
    """A share's words are in ``attachments``: alone it was no turn at all, with a comment
    only the comment reached the model."""
    alone = norm.candidate(body(text="", attachments=[SHARE], channel_type="im"), ME)
    assert alone is not None
    assert alone.text == (
        "> shared message from Bob: Prod deploy is blocked\n"
        "> until the DB migration & backup finish"
    )
    commented = norm.candidate(body(text="what now?", attachments=[SHARE], channel_type="im"), ME)
    assert commented is not None and commented.text == "what now?\n" + alone.text
    fallback_only = {**SHARE, "text": "", "author_name": ""}
    only = norm.candidate(body(text="", attachments=[fallback_only], channel_type="im"), ME)
    assert only is not None and only.text.startswith("> shared message from someone: [Nov")
    link_preview = {"title": "Example", "text": "a page", "from_url": "https://example.com"}
    assert norm.candidate(body(text="", attachments=[link_preview]), ME) is None  # not a share


def test_thread_context_lines() -> None:
    c = norm.candidate(body(channel="C1", text="<@U0BOT> sum up", thread_ts="1.0", ts="5.0"), ME)
    assert c is not None
    replies = [
        {"ts": "1.0", "user": "U0BOB", "text": "root &gt; all"},
        {"ts": "2.0", "user": "U0BOT", "bot_id": "B0BOT", "text": "earlier answer"},
        {"ts": "3.0", "subtype": "channel_join", "user": "U0X", "text": "joined"},
        {"ts": "4.0", "user": "U0CAROL", "text": "x" * 600},
        {"ts": "5.0", "user": "U0ALICE", "text": "<@U0BOT> sum up"},
    ]
    lines = norm.context_lines(replies, c, ME)
    assert lines[:2] == ["@U0BOB: root > all", "you (the bot): earlier answer"]
    assert lines[2].startswith("@U0CAROL: xxx") and lines[2].endswith("…") and len(lines) == 3
    text = norm.with_context("sum up", lines)
    assert text.startswith("Earlier in this Slack thread:\n> @U0BOB: root > all\n")
    assert text.endswith("\n\nsum up")
    assert norm.with_context("/stop", lines) == "/stop"  # a command stays parseable


def test_slack_sequences_reach_the_model_as_people_read_them() -> None:
    """Links, channels and mentions arrived raw (``<#C0123|general>``): the model quoted
    ids back at people and could not tell a link's label from its address."""
    text = (
        "read <https://example.com/spec|the spec> and <https://x.y/a?b=1&amp;c=2>, tell <@U0BOB>"
        " or <@U0CAROL|carol> in <#C0123|general> / <#C0456>; <!subteam^S01|@oncall>, <!here>,"
        " <mailto:a@b.co|a@b.co>, <mailto:a@b.co|Alice>, <http://example.com|example.com>"
        " at <!date^1700000000^{time}|9:00> &lt;3"
    )
    c = norm.candidate(body(text=f"<@U0BOT> {text}", channel_type="im"), ME)
    assert c is not None and c.mentioned
    assert c.text == (
        "read the spec (https://example.com/spec) and https://x.y/a?b=1&c=2, tell @U0BOB"
        " or @carol in #general / #C0456; @oncall, @here,"
        " a@b.co, Alice (a@b.co), example.com at 9:00 <3"
    )


def test_thread_context_names_authors_and_reads_shares() -> None:
    c = norm.candidate(body(channel="C1", text="<@U0BOT> so?", thread_ts="1.0", ts="3.0"), ME)
    assert c is not None
    replies: list[dict[str, Any]] = [
        {"ts": "1.0", "user": "U0BOB", "user_profile": {"display_name": "", "real_name": "Bob B"},
         "text": "see <#C0123|general>", "attachments": [SHARE]},
        {"ts": "2.0", "user": "U0CAROL", "text": "ask <@U0DAN|dan>"},
    ]  # fmt: skip
    assert norm.context_lines(replies, c, ME) == [
        "@Bob B: see #general > shared message from Bob: Prod deploy is blocked >"
        " until the DB migration & backup finish",
        "@U0CAROL: ask @dan",
    ]


def test_parse_message_id() -> None:
    assert norm.parse_message_id("C1:1700.1") == ("C1", "1700.1")
    assert norm.parse_message_id("1700.1") is None
    assert norm.parse_message_id(None) is None
    assert norm.parse_message_id("followup:7:2026-12-07T09:00:00+00:00") is None  # not Slack's


def test_mrkdwn_conversion_and_escaping() -> None:
    md = "# Title\n\n**bold** & _it_ [link](https://x.y/?a=1&b=2) <b> a->b\n> quoted\n<@U1>"
    out = to_mrkdwn(md)
    assert out.startswith("*Title*\n\n*bold* &amp; _it_ <https://x.y/?a=1&b=2|link>")
    assert "&lt;b&gt; a-&gt;b\n> quoted\n@U1" in out  # a mention pings no one
    assert escape("<!here> <#C1|general> 1 < 2") == "@here <#C1|general> 1 &lt; 2"
    assert to_mrkdwn("```js\nif (a < b) {}\n```") == "```\nif (a &lt; b) {}\n```"


def test_chunks_stay_under_the_limit_at_line_boundaries() -> None:
    text = "\n".join(f"line {i} " + "word " * 20 for i in range(400))
    chunks = render_chunks(text, limit=2000)
    assert len(chunks) > 1 and all(len(c) <= 2000 for c in chunks)
    assert all(c.split("\n")[0].startswith("line ") for c in chunks)
    assert render_chunks("   ") == []
