"""Whole turns: fake Bot API -> real PTB -> TelegramChannel -> daemon -> real litellm
-> fake LLM -> reply through PTB back to the fake Bot API."""

from __future__ import annotations

import logging
import time

import pytest

from bot.store.kv import KeyValueStore
from tests.fakes import telegram_api
from tests.fakes.daemons import asked as _user_texts
from tests.fakes.telegram_api import FakeTelegram

fake_telegram = telegram_api.fake_telegram
telegram_daemon = telegram_api.telegram_daemon


async def test_private_turn_end_to_end(telegram_daemon, fake_telegram: FakeTelegram, fake_llm):
    daemon, channel = await telegram_daemon()
    update = fake_telegram.message("hello there", chat_id=42, user_id=7, username="alice")
    sent = await fake_telegram.wait_sent(1)
    params = sent[0].params
    assert params["chat_id"] == 42
    assert params["text"] == "echo: hello there"
    assert params["reply_parameters"]["message_id"] == update["message"]["message_id"]
    assert "message_thread_id" not in params
    block = fake_llm.requests[-1].json["messages"][-1]["content"]
    assert "Channel: telegram" in block and "Chat ID: 42" in block and "User: 7 (@alice)" in block
    # The offset is committed under the bot's id once the update is journaled.
    await fake_telegram.wait_confirmed(update["update_id"])
    kv = KeyValueStore(daemon.db)
    assert await kv.get(f"telegram:{fake_telegram.bot_id}:offset") == str(update["update_id"] + 1)
    assert channel.connected


async def test_a_fast_turn_makes_one_bot_api_call(telegram_daemon, fake_telegram, fake_llm):
    await telegram_daemon(agent={"typing_after_s": 3})  # default 1 s; roomy on a busy machine
    await _barrier(fake_telegram)  # litellm loaded: the next turn is a fast one
    before = len(fake_telegram.calls)
    await _barrier(fake_telegram, text="quick")
    made = [c.method for c in fake_telegram.calls[before:] if c.method != "getUpdates"]
    assert made == ["sendMessage"]  # no typing indicator for an answer under a second


async def test_a_slow_turn_shows_typing_until_it_answers(telegram_daemon, fake_telegram, fake_llm):
    await telegram_daemon(agent={"typing_after_s": 0.2})
    await _barrier(fake_telegram)
    before = len(fake_telegram.calls)
    fake_llm.reply_tool_calls([("final_result", {"answer": "slow answer"})], delay=0.8)
    fake_telegram.message("think hard", chat_id=42)
    sent = await fake_telegram.wait_for("sendMessage", 2)
    made = fake_telegram.calls[before:]
    [typing] = [c for c in made if c.method == "sendChatAction" and c.at < sent[-1].at]
    assert typing.params["action"] == "typing" and typing.params["chat_id"] == 42
    assert sent[-1].params["text"] == "slow answer"


async def test_topic_reply_keeps_the_thread(telegram_daemon, fake_telegram, fake_llm):
    await telegram_daemon(agent={"typing_after_s": 0})
    # Slow enough that the typing indicator is surely sent before the answer.
    fake_llm.reply_tool_calls([("final_result", {"answer": "in the topic"})], delay=0.5)
    update = fake_telegram.message("@test_bot in a topic", chat_id=-100, thread_id=77)
    sent = await fake_telegram.wait_sent(1)
    assert sent[0].params["message_thread_id"] == 77
    assert sent[0].params["chat_id"] == -100
    assert sent[0].params["reply_parameters"]["message_id"] == update["message"]["message_id"]
    assert fake_telegram.calls_to("sendChatAction")[0].params["message_thread_id"] == 77
    assert "Thread ID: 77" in fake_llm.requests[-1].json["messages"][-1]["content"]


async def _barrier(fake_telegram, chat_id: int = 42, text: str = "barrier", **kw) -> None:
    """Send one more message and wait for its answer: everything queued before is done."""
    update = fake_telegram.message(text, chat_id=chat_id, **kw)
    mid = update["message"]["message_id"]
    await fake_telegram.wait_for(
        "sendMessage",
        1,
        predicate=lambda c: c.ok and c.params.get("reply_parameters", {}).get("message_id") == mid,
    )


async def test_group_gating_mention_reply_and_command(telegram_daemon, fake_telegram, fake_llm):
    await telegram_daemon()
    fake_telegram.message("people talking", chat_id=-100)
    fake_telegram.message("/help", chat_id=-100)
    await fake_telegram.wait_sent(1)
    assert "/help" in fake_telegram.sent()[0].params["text"]
    await _barrier(fake_telegram, -100, "@test_bot are you there")
    assert _user_texts(fake_llm) == ["are you there"]
    bot_msg = fake_telegram.bot_message("echo: are you there", chat_id=-100)
    fake_telegram.message("thanks", chat_id=-100, reply_to=bot_msg)
    await fake_telegram.wait_sent(3)
    assert _user_texts(fake_llm)[-1] == "> replying to you (the bot): echo: are you there\nthanks"
    assert len(fake_llm.requests) == 2  # "people talking" never reached the model


async def test_in_a_group_a_bare_command_we_do_not_know_is_another_bots(
    telegram_daemon, fake_telegram, fake_llm
):
    """Telegram hands a bare /command in a group to every bot there: one this bot does
    not know (a moderation bot's /ban, "/etc is full") gets no reply and no model call,
    nor does a bare /start (a game bot's: the greeting is ours only by name or in private);
    one addressed to it by name, or sent in private, is told it is unknown."""
    await telegram_daemon()
    for text in ("/ban @spammer", "/etc is full, why?", "/start"):
        fake_telegram.message(text, chat_id=-100)
    await _barrier(fake_telegram, -100, "/help")
    assert [c.params["text"][:9] for c in fake_telegram.sent(-100)] == ["Commands "]
    await _barrier(fake_telegram, -100, "/ban@test_bot")
    await _barrier(fake_telegram, 42, "/ban")
    unknown = "Unknown command /ban, see /help."
    assert [c.params["text"] for c in fake_telegram.sent(-100)][1:] == [unknown]
    assert [c.params["text"] for c in fake_telegram.sent(42)] == [unknown]
    assert fake_llm.requests == []


async def test_another_bots_commands_do_not_spend_the_senders_rate_limit(
    telegram_daemon, fake_telegram, fake_llm
):
    """A game with a dice bot in the group (/roll, bare, 21 times: Telegram hands it to
    every bot) drained the player's rate limit here: the bot said "You are sending messages
    faster..." in the group and dropped their next question to it."""
    await telegram_daemon(streaming_off=True)
    for _ in range(21):
        fake_telegram.message("/roll", chat_id=-100)
    await _barrier(fake_telegram, -100, "@test_bot what's the weather like on Mars?")
    assert _user_texts(fake_llm) == ["what's the weather like on Mars?"]
    assert len(fake_telegram.sent(-100)) == 1  # the answer, no notice


async def test_start_in_private_or_naming_the_bot_is_a_greeting(
    telegram_daemon, fake_telegram, fake_llm
):
    """Telegram's Start button sends /start: the assistant greets, in a group too when
    the /start names the bot."""
    await telegram_daemon()
    await _barrier(fake_telegram, 42, "/start")
    await _barrier(fake_telegram, -100, "/start@test_bot")
    assert len(fake_llm.requests) == 2


async def test_group_policy_all_answers_every_message(telegram_daemon, fake_telegram, fake_llm):
    await telegram_daemon(group_policy="all")
    fake_telegram.message("people talking", chat_id=-100)
    await fake_telegram.wait_sent(1)
    assert _user_texts(fake_llm) == ["people talking"]


async def test_disallowed_user_gets_no_model_call(telegram_daemon, fake_telegram, fake_llm):
    await telegram_daemon(allow_from=["@bob", "99"])
    fake_telegram.message("let me in", user_id=7, username="alice")
    notice = await fake_telegram.wait_sent(1)
    assert "only answers approved users" in notice[0].params["text"]
    fake_telegram.message("by username", user_id=8, username="bob", chat_id=43)
    fake_telegram.message("by id", user_id=99, username=None, chat_id=44)
    await fake_telegram.wait_sent(1, chat_id=43)
    await fake_telegram.wait_sent(1, chat_id=44)
    assert sorted(_user_texts(fake_llm)) == ["by id", "by username"]
    # "@bob" now means user 8: another account that takes the name later is refused.
    fake_telegram.message("I am bob now", user_id=9, username="bob", chat_id=45)
    [refused] = await fake_telegram.wait_sent(1, chat_id=45)
    assert "only answers approved users" in refused.params["text"]
    assert len(fake_llm.requests) == 2


async def test_duplicated_update_is_answered_once(telegram_daemon, fake_telegram, fake_llm):
    await telegram_daemon()
    update = fake_telegram.message("only once", message_id=500)
    fake_telegram.add_update(dict(update))  # the same update_id twice in one batch
    await fake_telegram.wait_sent(1)
    # The same message again under a new update_id (a re-fetch after a lost commit).
    fake_telegram.add_update({"message": update["message"]})
    await _barrier(fake_telegram)
    assert _user_texts(fake_llm).count("only once") == 1
    answers = [c for c in fake_telegram.sent() if c.params["text"] == "echo: only once"]
    assert len(answers) == 1


async def test_ten_thousand_characters_are_answered_in_chunks(
    telegram_daemon, fake_telegram, fake_llm
):
    await telegram_daemon()
    text = "\n\n".join(f"Paragraph {i}: " + "lorem ipsum " * 20 for i in range(40))[:10_000]
    assert len(text) == 10_000
    fake_telegram.message(text)
    await fake_telegram.wait_sent(3)
    await _barrier(fake_telegram)
    chunks = fake_telegram.visible(42)[:-1]  # a streamed preview ends as the first chunk
    assert len(chunks) == 3
    assert all(len(c) <= 4096 for c in chunks)
    assert " ".join(chunks).split() == f"echo: {text}".split()
    replies = [c.params.get("reply_parameters") for c in fake_telegram.sent()[:3]]
    assert replies[0] is not None and replies[1] is None and replies[2] is None
    assert _user_texts(fake_llm)[0] == text


async def test_emoji_rtl_and_zero_width_text_round_trips(telegram_daemon, fake_telegram, fake_llm):
    await telegram_daemon()
    text = (
        "héllo 👋🏽 👨\u200d👩\u200d👧 שלום עולם مرحبا \u200b\u200c\u200d\u2066x\u2069 \U0001f600"
    )
    fake_telegram.message(text)
    # The answer as it reads once delivered (a streamed preview may come first).
    await fake_telegram.wait_until(lambda: fake_telegram.visible(42) == [f"echo: {text}"])
    assert _user_texts(fake_llm) == [text]


async def test_updates_without_text_never_crash(telegram_daemon, fake_telegram, fake_llm):
    await telegram_daemon()
    sticker = fake_telegram.make_message(None)
    sticker["sticker"] = {
        "file_id": "st",
        "file_unique_id": "s",
        "type": "regular",
        "width": 512,
        "height": 512,
        "is_animated": False,
        "is_video": False,
        "emoji": "😀",
    }
    fake_telegram.add_update({"message": sticker})
    joined = fake_telegram.make_message(None, chat_id=-100)
    joined["new_chat_members"] = [{"id": 8, "is_bot": False, "first_name": "New"}]
    fake_telegram.add_update({"message": joined})
    fake_telegram.add_update(
        {"edited_message": {**fake_telegram.make_message("x"), "edit_date": 1}}
    )
    fake_telegram.add_update({"update_id": 999_999, "poll": {"id": "p"}})  # unknown shape
    await _barrier(fake_telegram)
    assert _user_texts(fake_llm) == ["[sticker 😀]", "barrier"]


async def test_attachments_reach_the_model_and_download(telegram_daemon, fake_telegram, fake_llm):
    _, channel = await telegram_daemon()
    fake_telegram.add_file("doc-1", b"%PDF-1.4 hello", "documents/file_7.pdf")
    raw = fake_telegram.make_message(None, caption="summarize this")
    raw["document"] = {
        "file_id": "doc-1",
        "file_unique_id": "u1",
        "file_name": "report.pdf",
        "mime_type": "application/pdf",
        "file_size": 14,
    }
    fake_telegram.add_update({"message": raw})
    await fake_telegram.wait_sent(1)
    block = fake_llm.requests[-1].json["messages"][-1]["content"]
    assert "Attachment: document report.pdf (id doc-1, 14 bytes)" in block
    assert await channel.download("doc-1") == b"%PDF-1.4 hello"
    assert fake_telegram.calls_to("getFile")[0].params["file_id"] == "doc-1"


async def test_download_of_unknown_file_is_a_channel_error(telegram_daemon, fake_telegram):
    import pytest

    from bot.errors import ChannelError

    _, channel = await telegram_daemon()
    with pytest.raises(ChannelError):
        await channel.download("nope")


async def test_pairing_flow_through_telegram(telegram_daemon, fake_telegram, fake_llm):
    """Empty allow_from: a stranger's DM gets a code, a group stranger nothing, the admin
    approves from their own chat and the stranger is answered; no model call before."""
    import re

    await telegram_daemon(allow_from=[], admins=["telegram:1"])
    fake_telegram.message("hello?", chat_id=42, user_id=7, username="alice")
    [first] = await fake_telegram.wait_sent(1, chat_id=42)
    code = re.search(r"pairing code is ([A-Z2-9]{8})", first.params["text"])
    assert code, first.params["text"]
    fake_telegram.message("@test_bot let me in", chat_id=-100, user_id=8, username="mallory")
    await _barrier(fake_telegram, -100, f"/approve {code.group(1)}", user_id=1, username="boss")
    [approved] = fake_telegram.sent(chat_id=-100)  # only the admin's answer in the group
    assert approved.params["text"] == "Approved telegram:7 (@alice)."
    told = await fake_telegram.wait_sent(2, chat_id=42)
    assert "approved you" in told[1].params["text"]
    assert fake_llm.requests == []
    fake_telegram.message("thanks", chat_id=42, user_id=7, username="alice")
    answer = await fake_telegram.wait_sent(3, chat_id=42)
    assert answer[2].params["text"] == "echo: thanks"
    assert _user_texts(fake_llm) == ["thanks"]


async def test_a_send_keeps_only_the_new_message_id(telegram_daemon, fake_telegram, monkeypatch):
    """The answer to sendMessage is not parsed into PTB objects (a quarter of a
    millisecond a send); its message id is what the outbox records. The call goes as a
    JSON body with entities and reply parameters as JSON objects (a form, each value
    JSON-dumped then percent-encoded, cost more CPU than the rest of the send)."""
    import telegram

    from bot.messages import ChatKey, OutboundMessage

    _, channel = await telegram_daemon()

    def parsed(*_: object, **__: object) -> None:
        raise AssertionError("the answer to sendMessage was parsed into a Message")

    monkeypatch.setattr(telegram.Message, "de_json", parsed)
    key = ChatKey("telegram", "42")
    first = await channel.send(OutboundMessage(key, "**bold** reply", reply_to="9"))
    second = await channel.send(OutboundMessage(key, "plain"))
    assert int(second.ids[0]) == int(first.ids[0]) + 1  # the fake numbers its messages
    [bold, plain] = [c.params for c in fake_telegram.calls if c.method == "sendMessage"]
    assert bold["text"] == "bold reply"
    assert bold["entities"] == [{"type": "bold", "offset": 0, "length": 4}]
    assert bold["reply_parameters"] == {"message_id": 9, "allow_sending_without_reply": True}
    no_preview = {"link_preview_options": {"is_disabled": True}}
    assert plain == {"chat_id": 42, "text": "plain", **no_preview}  # no empty entity list
    sends = [c for c in fake_telegram.calls if c.method == "sendMessage"]
    assert {c.headers["content-type"] for c in sends} == {"application/json"}


async def test_the_backlog_telegram_kept_is_bounded_by_the_grace_and_answered_late(
    telegram_daemon, fake_telegram: FakeTelegram, fake_llm
) -> None:
    """Telegram hands over what was said while the bot was down by itself: as on the
    platforms whose history is read back, older than the grace is not answered, and a
    younger message's answer says it is late."""
    now = int(time.time())
    fake_telegram.message("said 30 h ago", chat_id=42, date=now - 30 * 3600)
    fake_telegram.message("said 2 h ago", chat_id=42, date=now - 2 * 3600)
    await telegram_daemon()
    await _barrier(fake_telegram)
    texts = [c.params["text"] for c in fake_telegram.sent(chat_id=42)]
    assert texts == [
        "(Late answer: I was offline when your message came, 2 h ago.)\n\necho: said 2 h ago",
        "echo: barrier",
    ]


async def test_an_answer_mentions_no_one_by_id(telegram_daemon, fake_telegram) -> None:
    """[name](tg://user?id=...) became a text link Telegram reads as a mention, and the
    user it names was notified: a model steered by a group member or a fetched page
    could ping anyone by id. The words are sent, the link is not; other links are."""
    from bot.messages import ChatKey, OutboundMessage

    _, channel = await telegram_daemon()
    text = "ask [the boss](tg://user?id=777) or [ed](Tg://User?id=8) on [x](https://x.org)"
    await channel.send(OutboundMessage(ChatKey("telegram", "-100"), text))
    [sent] = [c.params for c in fake_telegram.calls if c.method == "sendMessage"]
    assert sent["text"].startswith("ask the boss or")
    assert [e.get("url") for e in sent["entities"]] == ["https://x.org"]


@pytest.mark.parametrize("link_previews", [False, True])
async def test_the_bots_messages_show_no_link_preview(
    telegram_daemon, fake_telegram, link_previews: bool
) -> None:
    """Telegram's servers fetch a message's first link to preview it, with no one
    clicking: a model steered into writing https://evil.example/?d=<the chat> leaked it
    by itself. Answers, edits (a preview becoming the answer) and previews go without,
    unless the channel's ``link_previews`` says otherwise."""
    from bot.messages import ChatKey, OutboundMessage

    _, channel = await telegram_daemon(link_previews=link_previews)
    key = ChatKey("telegram", "42")
    link = "see https://evil.example/p.png?d=secret"
    preview = await channel.post_preview(key, link, None)
    await channel.send(OutboundMessage(key, link + " and more", preview_id=preview))
    await channel.send(OutboundMessage(key, link))
    calls = [c for c in fake_telegram.calls if c.method in ("sendMessage", "editMessageText")]
    assert [c.method for c in calls] == ["sendMessage", "editMessageText", "sendMessage"]
    shown = [c.params.get("link_preview_options") for c in calls]
    assert shown == [None if link_previews else {"is_disabled": True}] * 3


async def test_a_reminder_shows_its_words_exactly_as_written(
    telegram_daemon, fake_telegram: FakeTelegram, fake_llm
):
    """The reminder's own words went through the answer's Markdown: 'my_report_v2' came
    in italics, '__init__.py' as a bold 'init', '2*3*4' lost its stars, and so in the
    confirmation, /reminders and the reminder itself."""
    await telegram_daemon()
    words = "rename my_report_v2 and __init__.py, compute 2*3*4, see [x](y) `z`"
    fake_telegram.message(f"/remind in 1 second | {words}", chat_id=42, user_id=7)
    fake_telegram.message("/remind tomorrow at 9 | check *everything*", chat_id=42, user_id=7)
    fake_telegram.message("/reminders", chat_id=42, user_id=7)
    await fake_telegram.wait_until(
        lambda: any(t.startswith("⏰") for t in fake_telegram.visible(42)), timeout=20
    )
    shown = dict(fake_telegram.shown(42))
    assert len(shown) == 4 and not any(shown.values())  # no formatting entity anywhere
    oks = [text for text in shown if text.startswith("OK, ")]
    assert [text.rsplit(": ", 1)[-1] for text in oks] == [words, "check *everything*"]
    [listing] = [text for text in shown if text.startswith("Your reminders")]
    assert listing.endswith(": check *everything*")
    assert f"⏰ Reminder: {words}" in shown


async def test_channel_posts_in_the_discussion_group_are_not_answered(
    telegram_daemon, fake_telegram: FakeTelegram, fake_llm
) -> None:
    """A linked channel copies each post into its discussion group (from 777000
    "Telegram"): under group_policy "all" every post got an answer."""
    await telegram_daemon(group_policy="all")
    fake_telegram.message(
        "New release 2.0 is out! Ask @test_bot.",
        chat_id=-100,
        user_id=777000,
        username=None,
        is_automatic_forward=True,
        sender_chat={"id": -200, "type": "channel", "title": "Acme News"},
    )
    await _barrier(fake_telegram, -100, "a member's message")
    assert _user_texts(fake_llm) == ["a member's message"]


async def test_an_anonymous_admin_is_answered_and_a_post_as_a_channel_is_logged_once(
    telegram_daemon, fake_telegram: FakeTelegram, fake_llm, caplog
) -> None:
    """An anonymous admin (from @GroupAnonymousBot, the group as sender_chat) could not
    talk to the bot at all, and a member who wrote to it as their channel got no answer
    while nothing was logged above DEBUG."""
    caplog.set_level(logging.INFO, logger="channels.telegram.adapter")
    await telegram_daemon(allow_from=["7", "-100"])
    hidden = {"id": 1087968824, "is_bot": True, "first_name": "Group",
              "username": "GroupAnonymousBot"}  # fmt: skip
    group = {"id": -100, "type": "supergroup", "title": "Test group"}
    fake_telegram.message(
        "@test_bot what is on the agenda?", chat_id=-100, sender_chat=group, **{"from": hidden}
    )
    blog = {"id": -1009, "type": "channel", "title": "Alice's blog"}
    posting = {"id": 136817688, "is_bot": True, "first_name": "Channel"}
    for text in ("@test_bot hello from my channel", "@test_bot still there?"):
        fake_telegram.message(text, chat_id=-100, sender_chat=blog, **{"from": posting})
    await _barrier(fake_telegram, -100, "@test_bot a member asks")
    assert _user_texts(fake_llm) == ["what is on the agenda?", "a member asks"]
    assert fake_llm.requests[0].json["messages"][-1]["content"].endswith("\nUser: -100")
    said = [r.getMessage() for r in caplog.records if "posted as the channel" in r.getMessage()]
    assert said == [
        "telegram: in group -100 a message to the bot was posted as the channel "
        "'Alice's blog' and is not answered: the bot answers people, not channels "
        "(post as yourself)"
    ]


async def test_a_text_links_url_reaches_the_model(
    telegram_daemon, fake_telegram: FakeTelegram, fake_llm
) -> None:
    await telegram_daemon()
    text = "Can you summarize this article for me?"
    link = {"type": "text_link", "offset": 18, "length": 12, "url": "https://example.com/n/42"}
    fake_telegram.message(text, entities=[link])
    await fake_telegram.wait_sent(1)
    assert _user_texts(fake_llm) == [
        "Can you summarize this article (https://example.com/n/42) for me?"
    ]


async def test_a_forwarded_message_reaches_the_model_as_someone_elses(
    telegram_daemon, fake_telegram: FakeTelegram, fake_llm
) -> None:
    await telegram_daemon()
    bob = {"id": 55, "is_bot": False, "first_name": "Bob", "username": "bob"}
    origin = {"type": "user", "sender_user": bob, "date": int(time.time()) - 3600}
    fake_telegram.message("I quit. Effective immediately.", forward_origin=origin)
    await fake_telegram.wait_sent(1)
    assert _user_texts(fake_llm) == ["[forwarded from Bob (@bob)]\nI quit. Effective immediately."]


async def test_a_poll_and_a_dice_are_answered(
    telegram_daemon, fake_telegram: FakeTelegram, fake_llm
) -> None:
    """A poll or a dice sent in private got no answer at all: it has no text."""
    await telegram_daemon()
    options = [{"text": "Pizza", "voter_count": 0}, {"text": "Sushi", "voter_count": 0}]
    poll = {"id": "1", "question": "Pizza or sushi?", "options": options,
            "total_voter_count": 0, "is_closed": False, "is_anonymous": True,
            "type": "regular", "allows_multiple_answers": False}  # fmt: skip
    fake_telegram.message(None, poll=poll)
    fake_telegram.message(None, dice={"emoji": "🎲", "value": 4})
    await _barrier(fake_telegram)
    poll_seen = "[poll: Pizza or sushi? — Pizza / Sushi]"
    assert _user_texts(fake_llm) == [poll_seen, "[dice 🎲 4]", "barrier"]
