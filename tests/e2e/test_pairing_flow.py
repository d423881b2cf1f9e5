"""Pairing for strangers through a whole daemon: codes, approval from chat and CLI,
deny (remembered), revocation, squatting, expiry and restarts; none of it costs a model call."""

from __future__ import annotations

import asyncio
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from bot.cli.app import app
from bot.dispatcher.pairing import ALPHABET
from bot.messages import ChatKey, utcnow
from bot.store.access import AccessStore, PairingRequest
from tests.fakes.channel import FakeChannel
from tests.fakes.waiting import inbox_done

CODE = re.compile(rf"pairing code is ([{ALPHABET}]{{8}})\b")
ADMIN = "boss"


async def _start(daemon_factory: Any, data_dir: Path | None = None, **kw: Any) -> Any:
    channel = FakeChannel("test", trusted=False)
    return await daemon_factory(data_dir, channel=channel, admins=[f"test:{ADMIN}"], **kw)


async def _code(chat: FakeChannel, user: str, text: str = "hi") -> str:
    reply = await chat.ask(text, user=user, chat=f"dm-{user}")
    found = CODE.search(reply.text)
    assert found, reply.text
    return found.group(1)


async def _admin(chat: FakeChannel, text: str) -> str:
    return (await chat.ask(text, user=ADMIN, chat="dm-boss")).text


async def _cli(tmp_path: Path, *args: str) -> Any:
    config = tmp_path / "bot.toml"
    config.write_text(f'data_dir = "{tmp_path / "data"}"\n', encoding="utf-8")
    result = await asyncio.to_thread(
        CliRunner().invoke, app, ["pairing", *args, "--config", str(config)]
    )
    return result


async def test_stranger_gets_one_code_repeated_and_no_model_call(daemon_factory, fake_llm):
    _, chat = await _start(daemon_factory)
    first = await _code(chat, "stranger")
    assert len(first) == 8 and not set(first) & set("0O1IL")
    again = await chat.say("hello?", user="stranger", chat="dm-stranger")
    await chat.ask("/help", user=ADMIN, chat="dm-stranger")  # one lane: taken after it
    assert chat.replies_to(again) == []  # said a moment ago: not again for each message
    assert await _code(chat, "other") != first
    assert fake_llm.requests == []


async def test_group_stranger_is_ignored(daemon_factory, fake_llm, tmp_path):
    daemon, chat = await _start(daemon_factory)
    ignored = await chat.say("hi all", user="stranger", chat="group", direct=False)
    # The admin's message in the same chat is answered after it: the stranger got nothing.
    barrier = await chat.ask("/help", user=ADMIN, chat="group", direct=False)
    assert "/approve" in barrier.text
    assert chat.replies_to(ignored) == []
    assert await AccessStore(daemon.db).pending_requests(utcnow()) == []
    assert fake_llm.requests == []


async def test_approve_from_chat_lets_the_stranger_in(daemon_factory, fake_llm):
    _, chat = await _start(daemon_factory)
    code = await _code(chat, "stranger")
    answer = await _admin(chat, f"/approve {code.lower()}")
    assert answer == "Approved test:stranger."
    told = await chat.wait_for(
        lambda sent: any(
            m.key == ChatKey("test", "dm-stranger") and "approved" in m.text for m in sent
        )
    )
    assert told
    assert fake_llm.requests == []
    reply = await chat.ask("now?", user="stranger", chat="dm-stranger")
    assert reply.text == "echo: now?"
    assert len(fake_llm.requests) == 1
    # An approved user is no admin: they cannot let others in.
    other = await _code(chat, "other")
    refused = await chat.ask(f"/approve {other}", user="stranger", chat="dm-stranger")
    assert refused.text == "Error: only an admin can approve pairing requests"
    assert "no pending" in await _admin(chat, f"/approve {code}")  # a code works once
    assert len(fake_llm.requests) == 1


async def test_deny_voids_the_code_and_the_account_gets_no_new_one(daemon_factory, fake_llm):
    daemon, chat = await _start(daemon_factory)
    code = await _code(chat, "stranger")
    assert await _admin(chat, f"/deny {code}") == "Denied test:stranger; their code is void."
    await chat.wait_for(lambda sent: any("declined" in m.text for m in sent))
    assert "no pending pairing code" in await _admin(chat, f"/approve {code}")
    # Asking again at once gets no code: the denial is remembered for a day.
    held = await chat.ask("please?", user="stranger", chat="dm-stranger")
    assert "declined" in held.text and "ask again after" in held.text
    assert not CODE.search(held.text)
    again = await chat.say("pretty please?", user="stranger", chat="dm-stranger")
    await inbox_done(daemon, again.message_id)
    assert chat.replies_to(again) == []  # told once, not at every message
    assert await AccessStore(daemon.db).pending_requests(utcnow()) == []
    assert fake_llm.requests == []


async def test_squatters_cannot_lock_a_newcomer_out(daemon_factory, fake_llm):
    """Three accounts fill a channel capped at three: a newcomer still gets a code (the
    oldest is pushed out), and the pushed-out account cannot push back in at once."""
    daemon, chat = await _start(daemon_factory, access={"max_pending": 3})
    codes = [await _code(chat, f"s{n}") for n in range(3)]
    newcomer = await _code(chat, "newcomer")
    assert "no pending pairing code" in await _admin(chat, f"/approve {codes[0]}")
    pushed = await chat.ask("me again", user="s0", chat="dm-s0")
    assert "too many open access requests" in pushed.text and not CODE.search(pushed.text)
    again = await chat.say("me again?", user="s0", chat="dm-s0")
    await inbox_done(daemon, again.message_id)
    assert chat.replies_to(again) == []  # told once, not at every message
    assert await _admin(chat, f"/approve {newcomer}") == "Approved test:newcomer."
    assert (await chat.ask("in?", user="newcomer", chat="dm-newcomer")).text == "echo: in?"
    assert len(fake_llm.requests) == 1


async def test_an_expired_code_is_replaced_and_cannot_be_approved(daemon_factory, fake_llm):
    daemon, chat = await _start(daemon_factory)
    long_ago = utcnow() - timedelta(hours=2)
    stale = PairingRequest(
        "ABCDEFGH",
        ChatKey("test", "dm-stranger"),
        "stranger",
        "",
        long_ago,
        long_ago + timedelta(hours=1),
    )
    assert (await AccessStore(daemon.db).add_request(stale, max_pending=3)).added
    assert await _code(chat, "stranger") != "ABCDEFGH"
    assert "no pending pairing code ABCDEFGH" in await _admin(chat, "/approve ABCDEFGH")
    assert fake_llm.requests == []


async def test_cli_list_approve_revoke_and_deny(daemon_factory, fake_llm, tmp_path):
    _, chat = await _start(daemon_factory, tmp_path / "data")
    code = await _code(chat, "stranger")
    listed = await _cli(tmp_path, "list")
    assert listed.exit_code == 0 and code in listed.output and "test:stranger" in listed.output

    approved = await _cli(tmp_path, "approve", code)
    assert approved.exit_code == 0, approved.output
    assert "approved test:stranger" in approved.output
    # The running daemon sees the approval at the stranger's next message.
    assert (await chat.ask("in?", user="stranger", chat="dm-stranger")).text == "echo: in?"
    assert "by cli" in (await _cli(tmp_path, "list")).output

    revoked = await _cli(tmp_path, "revoke", "test:stranger")
    assert revoked.exit_code == 0 and "revoked test:stranger" in revoked.output
    assert await _code(chat, "stranger", "still in?")  # a stranger again
    again = await _cli(tmp_path, "revoke", "test:stranger")
    assert again.exit_code == 1 and "not an approved user" in again.output

    other = await _code(chat, "other")
    denied = await _cli(tmp_path, "deny", other)
    assert denied.exit_code == 0 and "denied test:other" in denied.output
    unknown = await _cli(tmp_path, "approve", other)
    assert unknown.exit_code == 1 and "no pending pairing code" in unknown.output
    assert len(fake_llm.requests) == 1


async def test_an_approval_survives_a_restart(daemon_factory, fake_llm, tmp_path):
    daemon, chat = await _start(daemon_factory, tmp_path / "data")
    await _admin(chat, f"/approve {await _code(chat, 'stranger')}")
    await daemon.stop(timeout=2)
    _, chat = await _start(daemon_factory, tmp_path / "data")
    assert (await chat.ask("back", user="stranger", chat="dm-stranger")).text == "echo: back"
    assert len(fake_llm.requests) == 1
