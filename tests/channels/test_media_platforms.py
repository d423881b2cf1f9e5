"""Pictures, voice notes and documents on every platform, through its real client
library against the loopback fake: the download (Telegram getFile + file URL, Slack
files.info + url_private with the bot token, Discord attachment URLs), what the model
gets of each kind, the size cap, and files sent back (Telegram sendPhoto/sendDocument,
Slack's external upload flow, Discord multipart attachments)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest_asyncio

from bot.daemon import Daemon
from bot.delivery import deliver
from bot.media.intake import CANNOT_SEE
from bot.media.transcribe import HOW_TO_CONFIGURE
from bot.messages import Attachment, ChatKey, OutboundMessage
from channels.format import utf16_len
from tests.fakes import daemons, discord_api, documents, slack_api, telegram_api
from tests.fakes.discord_api import FakeDiscord
from tests.fakes.llm_server import FINAL_RESULT, image_responder, seen_as, tool_calls_reply
from tests.fakes.slack_api import FakeSlack
from tests.fakes.waiting import until

fake_telegram = telegram_api.fake_telegram
telegram_daemon = telegram_api.telegram_daemon
fake_slack = slack_api.fake_slack
slack_channel = slack_api.slack_channel
fake_discord = discord_api.fake_discord
platform_daemon = daemons.platform_daemon

PNG = documents.png(4, 3, (10, 200, 10))
DOCX = documents.docx("Invoice total: 99 euros.")


# These tests check what the final answer holds. On a loaded machine a turn that reads
# files can outlast the first preview interval, and a preview would race the
# assertions; the streamed preview of a voice note has its own test below.
NO_PREVIEW = {"enabled": False}


def _media(fake_llm: Any) -> dict[str, Any]:
    """Images shown to the chat model; voice through the fake's transcription endpoint."""
    return {
        "vision": "on",
        "transcription_model": "openai/whisper-1",
        "transcription_api_base": fake_llm.url,
        "transcription_api_key": "sk-whisper",
    }


def _user_texts(fake_llm: Any) -> list[str]:
    """The text of each chat request's last user message (parts joined)."""
    out = []
    for r in fake_llm.requests:
        content = r.json["messages"][-1]["content"]
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
        out.append(" ".join(p.get("text", "") for p in parts))
    return out


def _files(tmp_path: Path) -> tuple[Path, Path]:
    """A picture and a document in a workspace's files folder, to send back."""
    folder = tmp_path / "out"
    folder.mkdir(exist_ok=True)
    (folder / "chart.png").write_bytes(PNG)
    (folder / "report.docx").write_bytes(DOCX)
    return folder / "chart.png", folder / "report.docx"


def _outgoing(key: ChatKey, tmp_path: Path, limit: int) -> OutboundMessage:
    """Two files to send, and one just over the platform's limit (sparse: no bytes
    written, the size alone is checked before anything is read or uploaded)."""
    chart, report = _files(tmp_path)
    big = tmp_path / "out" / "video.mp4"
    with big.open("wb") as out:
        out.truncate(limit + 1)
    return OutboundMessage(
        key,
        "here are the files",
        attachments=(
            Attachment("photo", str(chart), "chart.png", caption="the chart"),
            Attachment("document", str(report), "report.docx"),
            Attachment("document", str(big), "video.mp4"),
        ),
    )


# What a user hears of a voice note without a transcription model: the note alone.
CANNOT_HEAR = f"I can't listen to voice messages or audio here: an admin can {HOW_TO_CONFIGURE}."
VOICE = {"file_id": "vo", "file_unique_id": "v", "duration": 2, "mime_type": "audio/ogg",
         "file_size": 9}  # fmt: skip
TOO_LARGE = "(Could not send the file video.mp4: it is {}, over the {} this platform takes)"


# -- Telegram ----------------------------------------------------------------------------
async def test_telegram_photo_voice_document_and_a_file_too_large(
    telegram_daemon, fake_telegram, fake_llm
) -> None:
    await telegram_daemon(media=_media(fake_llm), streaming=NO_PREVIEW)
    fake_llm.default = image_responder
    fake_telegram.add_file("ph-big", PNG, "photos/file_1.png")
    photo = fake_telegram.make_message(None)
    photo["photo"] = [
        {"file_id": "ph-small", "file_unique_id": "s", "width": 1, "height": 1, "file_size": 9},
        {"file_id": "ph-big", "file_unique_id": "b", "width": 4, "height": 3,
         "file_size": len(PNG)},
    ]  # fmt: skip
    fake_telegram.add_update({"message": photo})
    [answer] = await fake_telegram.wait_sent(1)
    # Telegram declares every photo JPEG; the model is told the type the bytes are.
    assert answer.params["text"] == seen_as(PNG, "image/png")

    fake_telegram.add_file("vo", b"OggS opus", "voice/file_2.oga")
    fake_llm.hear("buy milk tomorrow")
    voice = fake_telegram.make_message(None)
    voice["voice"] = {"file_id": "vo", "file_unique_id": "v", "duration": 2,
                      "mime_type": "audio/ogg", "file_size": 9}  # fmt: skip
    fake_telegram.add_update({"message": voice})
    answer = (await fake_telegram.wait_sent(2))[-1]
    assert answer.params["text"].startswith('🎤 "buy milk tomorrow"')
    assert fake_llm.transcriptions[-1][2] == b"OggS opus"

    fake_telegram.add_file("doc", DOCX, "documents/file_3.docx")
    doc = fake_telegram.make_message(None, caption="total?")
    doc["document"] = {"file_id": "doc", "file_unique_id": "d", "file_name": "inv.docx",
                       "file_size": len(DOCX)}  # fmt: skip
    fake_telegram.add_update({"message": doc})
    await fake_telegram.wait_sent(3)
    assert "Invoice total: 99 euros." in _user_texts(fake_llm)[-1]

    big = fake_telegram.make_message(None)
    big["document"] = {"file_id": "huge", "file_unique_id": "h", "file_name": "movie.pdf",
                       "file_size": 21_000_000}  # fmt: skip
    fake_telegram.add_update({"message": big})
    answer = (await fake_telegram.wait_sent(4))[-1]
    assert "over the 20 MB limit" in answer.params["text"]
    fetched = [c.params["file_id"] for c in fake_telegram.calls_to("getFile")]
    assert fetched == ["ph-big", "vo", "doc"]  # never the one over the cap


async def test_a_streamed_answer_to_a_voice_note_shows_what_was_heard_from_the_start(
    telegram_daemon, fake_telegram, fake_llm
) -> None:
    await telegram_daemon(media=_media(fake_llm), streaming={"private_interval_s": 0.05})
    answer = "noted: milk is on the list for tomorrow morning, " * 3
    fake_llm.default = lambda request: replace(
        tool_calls_reply([(FINAL_RESULT, {"answer": answer})]), pace=0.05, piece=8
    )
    fake_telegram.add_file("vo", b"OggS opus", "voice/file_2.oga")
    fake_llm.hear("buy milk tomorrow")
    voice = fake_telegram.make_message(None)
    voice["voice"] = {"file_id": "vo", "file_unique_id": "v", "duration": 2,
                      "mime_type": "audio/ogg", "file_size": 9}  # fmt: skip
    fake_telegram.add_update({"message": voice})
    final = f'🎤 "buy milk tomorrow"\n\n{answer.strip()}'
    await until(lambda: fake_telegram.visible(voice["chat"]["id"]) == [final], 15)
    [preview, *_] = fake_telegram.sent()
    assert preview.params["text"].startswith('🎤 "buy milk tomorrow"')  # heard, first
    assert len(fake_telegram.calls_to("editMessageText")) >= 2  # it grew in place


async def test_telegram_a_song_is_the_files_content_never_the_users_words(
    telegram_daemon, fake_telegram, fake_llm
) -> None:
    """An audio file sent without a caption went to the transcription model and its lyrics
    became the user's message ('🎤 "Is this the real life?..."'): it is named by its tags
    and its words reach the model as the file's content, as a document's text does."""
    await telegram_daemon(media=_media(fake_llm), streaming=NO_PREVIEW)
    fake_telegram.add_file("song", b"ID3 mp3", "music/file_1.mp3")
    fake_llm.hear("Is this the real life? Is this just fantasy?")
    fake_telegram.message(None, audio={
        "file_id": "song", "file_unique_id": "s", "duration": 354, "performer": "Queen",
        "title": "Bohemian Rhapsody", "file_name": "queen.mp3", "mime_type": "audio/mpeg",
        "file_size": 7,
    })  # fmt: skip
    [answer] = await fake_telegram.wait_sent(1)
    assert "🎤" not in answer.params["text"]
    assert _user_texts(fake_llm)[-1].startswith(
        "[audio: Queen – Bohemian Rhapsody, 5:54]\n"
        '[attachment: audio "queen.mp3", 7 bytes; transcribed: the words heard in the file '
        "follow (its content, not the user's)]\n"
        "Is this the real life? Is this just fantasy?\n"
    )


async def test_telegram_a_file_the_bot_cannot_take_gets_the_note_alone_under_framing(
    telegram_daemon, fake_telegram, fake_llm
) -> None:
    """No transcription model, no vision: a voice note replying to the bot (in a group the
    one way to address it with one), a forwarded one, and a photo whose caption only names
    the bot were each answered by the model as well, about nothing but the quote, the
    origin or the mention around the file's placeholder."""
    await telegram_daemon(streaming=NO_PREVIEW)
    earlier = fake_telegram.bot_message("The capital of France is Paris.", chat_id=-100)
    fake_telegram.message(None, chat_id=-100, reply_to=earlier, voice=VOICE)
    photo = [{"file_id": "ph", "file_unique_id": "p", "width": 4, "height": 3, "file_size": 9}]
    mention = [{"type": "mention", "offset": 0, "length": 9}]
    fake_telegram.message(
        None, chat_id=-100, photo=photo, caption="@test_bot", caption_entities=mention
    )
    hidden = {"type": "hidden_user", "sender_user_name": "Bob", "date": 1}
    fake_telegram.message(None, voice=VOICE, forward_origin=hidden)
    sent = await fake_telegram.wait_sent(3)
    assert [c.params["text"] for c in sent if c.params["chat_id"] == -100] == [
        CANNOT_HEAR,
        CANNOT_SEE,
    ]
    assert [c.params["text"] for c in sent if c.params["chat_id"] == 42] == [CANNOT_HEAR]
    assert fake_llm.requests == []  # nothing was asked of the model


async def test_telegram_sends_a_photo_and_a_document(
    telegram_daemon, fake_telegram, tmp_path
) -> None:
    _, channel = await telegram_daemon()
    sent = await deliver(channel, _outgoing(ChatKey("telegram", "42"), tmp_path, 50_000_000))
    assert len(sent.ids) == 4  # the text, each file, the note on the one too large
    uploads = fake_telegram.uploads()
    assert [(m, n, d) for m, n, d, _ in uploads] == [
        ("sendPhoto", "chart.png", PNG),
        ("sendDocument", "report.docx", DOCX),
    ]
    assert uploads[0][3]["caption"] == "the chart"
    texts = [c.params["text"] for c in fake_telegram.sent()]
    assert texts == ["here are the files", TOO_LARGE.format("50.0 MB", "50.0 MB")]


async def test_telegram_a_caption_is_formatted_and_cut_in_utf16_units(
    telegram_daemon, fake_telegram
) -> None:
    """A caption went as written ("**Q3 report**" showed its stars) and was cut at 1,024
    characters, where Telegram counts UTF-16 units: 30 emoji made it too long, refused."""
    _, channel = await telegram_daemon()
    key = ChatKey("telegram", "42")
    await channel.upload(key, "q3.pdf", b"%PDF-1.4", "**Q3 report** for <team>")
    await channel.upload(key, "chart.png", PNG, "**Summary** " + "x" * 965 + "😀" * 30)
    [(_, _, _, report), (_, _, _, chart)] = fake_telegram.uploads()
    assert report["caption"] == "Q3 report for <team>"
    assert report["caption_entities"] == [{"type": "bold", "offset": 0, "length": 9}]
    assert chart["caption"].startswith("Summary xxx") and chart["caption"].endswith("😀…")
    assert utf16_len(chart["caption"]) == 1024
    assert chart["caption_entities"] == [{"type": "bold", "offset": 0, "length": 7}]

    refused = "Bad Request: can't parse entities"  # as a message is, it goes plain then
    fake_telegram.fail("sendDocument", 400, refused, match=lambda p: "caption_entities" in p)
    await channel.upload(key, "q4.pdf", b"%PDF-1.4", "**Q4 report**")
    assert fake_telegram.uploads()[-1][3]["caption"] == "Q4 report"
    assert "caption_entities" not in fake_telegram.uploads()[-1][3]


# -- Slack -------------------------------------------------------------------------------
async def test_slack_a_file_comment_is_written_as_a_message_is(
    fake_slack: FakeSlack, slack_channel: Any
) -> None:
    """The comment went as written: Markdown's stars and an unescaped "<" or "&"."""
    channel, _ = await slack_channel(app_token="", signing_secret="s")
    comment = "**Q3 report** for <team> & [the notes](https://example.com/q3)"
    await channel.upload(ChatKey("slack", "C0GENERAL"), "q3.pdf", b"%PDF-1.4", comment)
    [shared] = fake_slack.shared
    assert shared["initial_comment"] == (
        "*Q3 report* for &lt;team&gt; &amp; <https://example.com/q3|the notes>"
    )


async def _slack_daemon(fake_slack: FakeSlack, platform_daemon, media: dict) -> Daemon:
    values = {
        "bot_token": fake_slack.bot_token,
        "app_token": fake_slack.app_token,
        "signing_secret": fake_slack.signing_secret,
        "api_url": fake_slack.api_url,
        "allow_from": ["*"],
    }
    daemon = await platform_daemon(
        {"slack": values},
        extras={"slack": {"ping_interval": slack_api.PING_INTERVAL_S, "max_wait_s": 2.0}},
        media=media,
        streaming=NO_PREVIEW,
    )
    await until(lambda: daemon.channels["slack"].connected, 10)
    return daemon


@pytest_asyncio.fixture
async def slack_media(fake_slack: FakeSlack, platform_daemon, fake_llm) -> Daemon:
    return await _slack_daemon(fake_slack, platform_daemon, _media(fake_llm))


async def test_slack_a_voice_clip_with_a_mention_in_a_thread_gets_the_note_alone(
    fake_slack: FakeSlack, platform_daemon, fake_llm
) -> None:
    """Mentioned with a clip in a thread it had not joined, without a transcription model:
    the thread's earlier messages above "[file: ...]" were sent to the model and answered."""
    await _slack_daemon(fake_slack, platform_daemon, {})
    root = fake_slack.add_message("Anyone know what this error means?", channel="C0GENERAL")
    fake_slack.add_message("no idea", channel="C0GENERAL", thread_ts=root["ts"])
    clip = fake_slack.add_file("audio_message.webm", b"webm", "audio/webm")
    event = fake_slack.message(
        f"<@{slack_api.BOT_USER}>",
        channel="C0GENERAL",
        thread_ts=root["ts"],
        subtype="file_share",
        files=[clip],
    )
    await fake_slack.wait_acked(await fake_slack.push(event))
    [post] = await fake_slack.wait_posts(1)
    assert post["text"] == CANNOT_HEAR
    assert fake_slack.calls_to("conversations.replies")  # the thread was read: framed
    assert fake_llm.requests == []


async def test_slack_files_are_fetched_with_the_bot_token_and_read(
    slack_media: Daemon, fake_slack: FakeSlack, fake_llm
) -> None:
    fake_llm.default = image_responder
    fake_llm.hear("call the plumber")
    files = [
        fake_slack.add_file("shot.png", PNG, "image/png"),
        {**fake_slack.add_file("memo.m4a", b"m4a audio", "audio/mp4"), "subtype": "slack_audio"},
        fake_slack.add_file("inv.docx", DOCX, "application/octet-stream"),
    ]
    event = fake_slack.message("", files=files)
    await fake_slack.wait_acked(await fake_slack.push(event))
    [post] = await fake_slack.wait_posts(1)
    assert post["text"].startswith('🎤 "call the plumber"')
    assert seen_as(PNG, "image/png") in post["text"]
    request = fake_llm.requests[-1].json["messages"][-1]["content"]
    assert "Invoice total: 99 euros." in request[0]["text"]
    assert fake_llm.transcriptions[-1] == ("whisper-1", "memo.m4a", b"m4a audio")
    token = f"Bearer {fake_slack.bot_token}"
    assert fake_slack.file_fetches == [(f["id"], token) for f in files]


async def test_a_web_page_shared_in_slack_is_read_not_taken_for_the_sign_in_page(
    slack_media: Daemon, fake_slack: FakeSlack, fake_llm
) -> None:
    """Slack answers a fetch without the files:read scope with its sign-in page (HTML);
    an HTML file someone shares is HTML too, and was refused as that page."""
    page = b"<html><body><h1>Quarterly report</h1><p>Revenue rose 12 percent.</p></body></html>"
    shared = fake_slack.add_file("report.html", page, "text/html")
    event = fake_slack.message("summarize", files=[shared])
    await fake_slack.wait_acked(await fake_slack.push(event))
    await fake_slack.wait_posts(1)
    assert "Revenue rose 12 percent." in json.dumps(fake_llm.requests[-1].json["messages"][-1])


async def test_slack_never_sends_its_token_elsewhere_and_refuses_large_files(
    slack_media: Daemon, fake_slack: FakeSlack, fake_llm
) -> None:
    elsewhere = fake_slack.add_file("x.png", PNG, "image/png", host="http://127.0.0.2:9")
    large = fake_slack.add_file("big.pdf", b"%PDF-", "application/pdf", size=30_000_000)
    event = fake_slack.message("look", files=[elsewhere, large])
    await fake_slack.wait_acked(await fake_slack.push(event))
    [post] = await fake_slack.wait_posts(1)
    assert 'I could not take "x.png": the platform did not hand the file over.' in post["text"]
    assert '"big.pdf" is 30.0 MB, over the 20 MB limit' in post["text"]
    assert fake_slack.file_fetches == []  # neither was fetched, so no token went out


async def test_slack_sends_files_through_the_external_upload_flow(
    slack_media: Daemon, fake_slack: FakeSlack, tmp_path
) -> None:
    channel = slack_media.channels["slack"]
    await deliver(channel, _outgoing(ChatKey("slack", "D0DM", "1700.1"), tmp_path, 1_000_000_000))
    assert list(fake_slack.uploaded.values()) == [PNG, DOCX]
    assert [c.method for c in fake_slack.calls if c.method.startswith("files.")] == [
        "files.getUploadURLExternal",
        "files.completeUploadExternal",
        "files.getUploadURLExternal",
        "files.completeUploadExternal",
    ]
    assert [s["thread_ts"] for s in fake_slack.shared] == ["1700.1", "1700.1"]
    assert [s.get("initial_comment") for s in fake_slack.shared] == ["the chart", None]
    texts = [p["text"] for p in fake_slack.posts("D0DM")]
    assert texts == [
        "here are the files",
        "the chart",
        "",
        TOO_LARGE.format("1000.0 MB", "1000.0 MB"),
    ]


# -- Discord -----------------------------------------------------------------------------
async def _discord_daemon(fake_discord: FakeDiscord, platform_daemon, media: dict) -> Daemon:
    values = {"token": fake_discord.token, "api_base": fake_discord.api_base,
              "allow_from": ["*"]}  # fmt: skip
    daemon = await platform_daemon(
        {"discord": values},
        extras={"discord": {"identify_delay_s": 0.01, "guild_ready_timeout": 0.05}},
        media=media,
        streaming=NO_PREVIEW,
    )
    await fake_discord.wait_session()
    await until(lambda: daemon.channels["discord"].connected, 10)
    return daemon


@pytest_asyncio.fixture
async def discord_media(fake_discord: FakeDiscord, platform_daemon, fake_llm) -> Daemon:
    return await _discord_daemon(fake_discord, platform_daemon, _media(fake_llm))


# A voice message recorded in Discord (what discord.py's is_voice_message reads).
VOICE_MESSAGE = {"flags": 1 << 13, "duration_secs": 2.0, "waveform": "AAAA"}


def _attachment(fake: FakeDiscord, name: str, data: bytes, mime: str, **kw: Any) -> dict:
    url = fake.add_file(name, data)
    return {"id": str(discord_api.snowflake()), "filename": name, "size": len(data),
            "url": url, "proxy_url": url, "content_type": mime, **kw}  # fmt: skip


async def test_discord_attachments_of_every_kind(
    discord_media: Daemon, fake_discord: FakeDiscord, fake_llm
) -> None:
    fake_llm.default = image_responder
    fake_llm.hear("see you at noon")
    attachments = [
        _attachment(fake_discord, "pic.png", PNG, "image/png"),
        _attachment(fake_discord, "voice-message.ogg", b"OggS", "audio/ogg", **VOICE_MESSAGE),
        _attachment(fake_discord, "inv.docx", DOCX, ""),
        {**_attachment(fake_discord, "huge.bin", b"", ""), "size": 25_000_000},
    ]
    fake_discord.user_message("", attachments=attachments)
    await fake_discord.wait_until(lambda: len(fake_discord.posts()) >= 1)
    text = fake_discord.posts()[0].json["content"]
    assert text.startswith('🎤 "see you at noon"')
    assert '"huge.bin" is 25.0 MB, over the 20 MB limit' in text
    assert seen_as(PNG, "image/png") in text
    assert "Invoice total: 99 euros." in _user_texts(fake_llm)[-1]
    assert fake_llm.transcriptions[-1][2] == b"OggS"


async def test_discord_a_file_the_bot_cannot_take_gets_the_note_alone_under_framing(
    fake_discord: FakeDiscord, platform_daemon, fake_llm
) -> None:
    """No vision, no transcription model: "@Bot" + a picture (the lone mention was kept as
    the text) and a voice message replying to the bot (the reply's quote above it) were
    each answered by the model as well."""
    gid = fake_discord.add_guild()
    cid = fake_discord.channel_of(gid)
    await _discord_daemon(fake_discord, platform_daemon, {})
    picture = _attachment(fake_discord, "pic.png", PNG, "image/png")
    fake_discord.user_message(
        f"<@{fake_discord.bot_id}>", mentions=(fake_discord.mention_of_bot(),),
        attachments=[picture], guild_id=gid, channel_id=cid,
    )  # fmt: skip
    earlier = fake_discord.bot_said("The capital of France is Paris.", cid)
    voice = _attachment(fake_discord, "voice-message.ogg", b"OggS", "audio/ogg", **VOICE_MESSAGE)
    fake_discord.user_message(
        "", referenced_message=earlier, flags=1 << 13, attachments=[voice],
        guild_id=gid, channel_id=cid,
    )  # fmt: skip
    posts = await fake_discord.wait_posts(2)
    assert [p.json["content"] for p in posts] == [CANNOT_SEE, CANNOT_HEAR]
    assert fake_llm.requests == []


async def test_discord_sends_files_as_multipart_attachments(
    discord_media: Daemon, fake_discord: FakeDiscord, tmp_path
) -> None:
    channel = discord_media.channels["discord"]
    await deliver(channel, _outgoing(ChatKey("discord", "4242"), tmp_path, 10_000_000))
    posts = fake_discord.posts()
    assert [p.files for p in posts if p.files] == [{"chart.png": PNG}, {"report.docx": DOCX}]
    assert [p.json.get("content") for p in posts] == [
        "here are the files",
        "the chart",
        None,
        TOO_LARGE.format("10.0 MB", "10.0 MB"),
    ]
