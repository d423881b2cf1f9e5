"""Inbound guards: deny-by-default access control and the message size limit."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from bot.bus.base import InProcessBus
from bot.dispatcher.middlewares import AccessControl, SizeGuard
from bot.messages import ChatKey, InboundMessage, MessageKind, OutboundKind, OutboundMessage


def tg(
    user_id: str = "42",
    user_name: str = "",
    *,
    kind: MessageKind = MessageKind.USER,
    message_id: str = "m0",
    direct: bool = False,
) -> InboundMessage:
    return InboundMessage(
        key=ChatKey("telegram", "chat1"),
        user_id=user_id,
        user_name=user_name,
        text="hi",
        kind=kind,
        message_id=message_id,
        direct=direct,
    )


def make(
    allow_from: Mapping[str, Sequence[str]] | None = None,
    admins: Sequence[str] = (),
    trusted_channels: Sequence[str] = ("cli",),
) -> tuple[AccessControl, InProcessBus]:
    bus = InProcessBus()
    return AccessControl(bus, allow_from or {}, admins, trusted_channels), bus


def drain_outbound(bus: InProcessBus) -> list[OutboundMessage]:
    out = []
    while bus.outbound_depth():
        out.append(bus._outbound.get_nowait())
    return out


async def test_platform_channel_denies_by_default() -> None:
    access, _ = make()
    assert not access.allowed(tg())
    assert not await access(tg())
    assert not access.is_admin(tg())


async def test_other_channels_list_does_not_apply() -> None:
    access, _ = make({"slack": ["42", "*"]})
    assert not access.allowed(tg("42"))


@pytest.mark.parametrize(
    ("allow", "user_id", "user_name"),
    [
        (["42"], "42", ""),
        (["42"], "42", "whoever"),
        (["alice"], "7", "alice"),
        (["@alice"], "7", "alice"),
        (["alice"], "7", "@alice"),
        (["@Alice"], "7", "ALICE"),
        (["ALICE"], "7", "@alice"),
        (["*"], "999", ""),
        (["U0ABC"], "u0abc", ""),
    ],
)
async def test_allowed_users(allow: list[str], user_id: str, user_name: str) -> None:
    access, bus = make({"telegram": allow})
    assert access.allowed(tg(user_id, user_name))
    assert await access(tg(user_id, user_name))
    assert bus.outbound_depth() == 0


@pytest.mark.parametrize(
    ("allow", "user_id", "user_name"),
    [
        (["42"], "43", ""),
        (["42"], "421", ""),
        (["alice"], "7", "alicia"),
        (["alice"], "7", ""),
        (["@"], "7", "@"),  # an empty name never matches
        ([], "7", "alice"),
    ],
)
async def test_refused_users(allow: list[str], user_id: str, user_name: str) -> None:
    access, _ = make({"telegram": allow})
    assert not access.allowed(tg(user_id, user_name))


async def test_admins_always_allowed() -> None:
    access, bus = make({"telegram": []}, admins=["Telegram:42"])
    assert access.is_admin(tg("42"))
    assert await access(tg("42"))
    # Admin on another platform with the same id is not an admin here.
    assert not access.is_admin(InboundMessage(key=ChatKey("slack", "c"), user_id="42", text="hi"))
    assert bus.outbound_depth() == 0


async def test_trusted_channels_always_allowed() -> None:
    access = AccessControl(InProcessBus(), {}, [])  # the terminal is trusted by default
    cli = InboundMessage(key=ChatKey("cli", "local"), user_id="me", text="hi")
    assert access.allowed(cli)
    assert access.is_admin(cli)

    custom, _ = make(trusted_channels=("test",))
    fake = InboundMessage(key=ChatKey("test", "x"), user_id="me", text="hi")
    assert custom.allowed(fake)
    assert not custom.allowed(InboundMessage(key=ChatKey("cli", "x"), user_id="me", text="hi"))


async def test_scheduled_messages_are_checked_against_their_owner() -> None:
    """A follow-up runs as its owner: one removed from allow_from no longer costs turns."""
    access, _ = make({"telegram": ["42"]}, admins=["telegram:7"])
    assert access.allowed(tg("42", kind=MessageKind.SCHEDULED))
    assert access.allowed(tg("7", kind=MessageKind.SCHEDULED))  # admins stay admins
    assert not access.allowed(tg("stranger", kind=MessageKind.SCHEDULED))
    assert not await access(tg("stranger", kind=MessageKind.SCHEDULED))


async def test_refusal_notice_sent_once_per_user() -> None:
    access, bus = make({"telegram": ["alice"]})
    first = tg("13", "mallory", message_id="m1", direct=True)
    assert not await access(first)
    assert not await access(tg("13", "mallory", message_id="m2", direct=True))
    assert not await access(tg("13", "mallory", message_id="m3", direct=True))
    [notice] = drain_outbound(bus)
    assert notice.kind is OutboundKind.NOTICE
    assert notice.key == first.key
    assert notice.reply_to == "m1"
    assert "'13'" in notice.text
    assert "channels.telegram.allow_from" in notice.text

    # Another user gets their own single notice.
    assert not await access(tg("14", direct=True))
    assert not await access(tg("14", direct=True))
    [other] = drain_outbound(bus)
    assert "'14'" in other.text


async def test_strangers_in_groups_are_never_answered_under_allowlist() -> None:
    """A notice in a group showed every member the stranger's id and the config key."""
    access, bus = make({"telegram": ["alice"]})
    assert access.policy("telegram") == "allowlist"
    for n, uid in enumerate(("8", "9", "10")):
        assert not await access(tg(uid, message_id=f"m{n}"))
    assert drain_outbound(bus) == []


async def test_size_guard_boundary() -> None:
    bus = InProcessBus()
    guard = SizeGuard(bus, max_chars=100)
    key = ChatKey("telegram", "c")
    exact = InboundMessage(key=key, user_id="1", text="x" * 100)
    assert await guard(exact)
    assert bus.outbound_depth() == 0

    over = InboundMessage(key=key, user_id="1", text="é" * 101, message_id="big")
    assert not await guard(over)
    [notice] = drain_outbound(bus)
    assert notice.kind is OutboundKind.NOTICE
    assert notice.key == key
    assert notice.reply_to == "big"
    assert "101" in notice.text
    assert "100" in notice.text


async def test_size_guard_counts_characters_with_thousands() -> None:
    bus = InProcessBus()
    guard = SizeGuard(bus, max_chars=16_000)
    assert not await guard(InboundMessage(key=ChatKey("t", "c"), user_id="1", text="a" * 20_000))
    [notice] = drain_outbound(bus)
    assert "20,000" in notice.text
    assert "16,000" in notice.text


# --- usernames are bound to the first id seen with them ---------------------------------


async def test_a_username_entry_binds_to_the_first_id_and_warns(caplog) -> None:
    access, _ = make({"telegram": ["@alice"]})
    with caplog.at_level("WARNING", logger="bot.dispatcher.allowlist"):
        assert access.allowed(tg("7", "@alice"))
    assert "'alice'" in caplog.text and "user id 7" in caplog.text and "list the id" in caplog.text
    assert not access.allowed(tg("8", "@alice"))  # someone who took the name later
    assert access.allowed(tg("7", "@alice_renamed"))  # the entry now means id 7


async def test_username_binding_is_stored_and_survives_a_restart(tmp_path) -> None:
    from bot.dispatcher.pairing import Pairing
    from bot.store.sqlite import sqlite_storage

    async def control() -> tuple[AccessControl, object]:
        storage = sqlite_storage(tmp_path / "bot.db")
        await storage.backend.open()
        ac = AccessControl(
            InProcessBus(), {"telegram": ["alice"]}, [], pairing=Pairing(storage.access)
        )
        return ac, storage

    access, storage = await control()
    await access.refresh(tg("7", "@Alice"))  # first sight, as the inbound path does it
    assert access.allowed(tg("7", "@Alice"))
    await storage.backend.close()  # type: ignore[attr-defined]

    access, storage = await control()  # a restart: nothing in memory
    usurper = tg("8", "@alice")
    assert not await access(usurper)
    assert not access.allowed(usurper)
    assert await access(tg("7", "@someone_else"))
    await storage.backend.close()  # type: ignore[attr-defined]


# --- policies -------------------------------------------------------------------------


async def test_policy_follows_allow_from_unless_set() -> None:
    access, _ = make({"telegram": ["7"], "slack": []})
    assert access.policy("telegram") == "allowlist"
    assert access.policy("slack") == "pairing"
    assert access.policy("discord") == "pairing"
    bus = InProcessBus()
    open_ = AccessControl(bus, {"telegram": ["7"]}, [], policy="open")
    assert open_.allowed(tg("999"))
    assert open_.policy("telegram") == "open"


async def test_strangers_in_groups_are_never_answered_under_pairing(tmp_path) -> None:
    from bot.dispatcher.pairing import Pairing
    from bot.store.sqlite import sqlite_storage

    storage = sqlite_storage(tmp_path / "bot.db")
    await storage.backend.open()
    bus = InProcessBus()
    access = AccessControl(bus, {}, [], pairing=Pairing(storage.access))
    group = tg("13")
    assert not group.direct
    assert not access.may_answer(group)
    assert not await access(group)
    assert drain_outbound(bus) == []
    dm = InboundMessage(key=ChatKey("telegram", "13"), user_id="13", text="hi", direct=True)
    assert not access.may_answer(dm)  # no rate-limit notice: it promised an answer
    assert not await access(dm)
    [notice] = drain_outbound(bus)
    assert "pairing code" in notice.text
    await storage.backend.close()


async def test_a_pending_code_is_said_again_only_after_a_while(tmp_path) -> None:
    """Each message of a stranger was answered with the same code (20 copies of it)."""
    from bot.dispatcher.middlewares import CODE_AGAIN_S
    from bot.dispatcher.pairing import Pairing
    from bot.store.sqlite import sqlite_storage

    storage = sqlite_storage(tmp_path / "bot.db")
    await storage.backend.open()
    bus, now = InProcessBus(), [0.0]
    access = AccessControl(bus, {}, [], pairing=Pairing(storage.access), clock=lambda: now[0])

    def dm(n: int) -> InboundMessage:
        key = ChatKey("telegram", "13")
        return InboundMessage(key, "13", f"hi {n}", message_id=f"m{n}", direct=True)

    for n in range(5):
        assert not await access(dm(n))
    [first] = drain_outbound(bus)
    now[0] += CODE_AGAIN_S - 1
    assert not await access(dm(5))
    assert drain_outbound(bus) == []
    now[0] += 1
    assert not await access(dm(6))
    assert not await access(dm(7))
    [again] = drain_outbound(bus)
    assert again.text == first.text and "pairing code" in again.text
    await storage.backend.close()


async def test_pairing_alongside_a_non_empty_allow_from(tmp_path) -> None:
    from bot.dispatcher.pairing import Pairing
    from bot.store.sqlite import sqlite_storage

    storage = sqlite_storage(tmp_path / "bot.db")
    await storage.backend.open()
    bus = InProcessBus()
    pairing = Pairing(storage.access)
    access = AccessControl(bus, {"telegram": ["7"]}, [], policy="pairing", pairing=pairing)
    assert await access(tg("7"))
    stranger = InboundMessage(key=ChatKey("telegram", "13"), user_id="13", text="hi", direct=True)
    assert not await access(stranger)
    [notice] = drain_outbound(bus)
    assert "pairing code" in notice.text
    [request] = await pairing.pending()
    await pairing.approve(request.code, by="cli")
    assert await access(stranger)  # read from the store at the next message
    await pairing.revoke("telegram:13")
    assert not await access(stranger)
    # The allowlist policy ignores approvals: only the list counts.
    strict = AccessControl(bus, {"telegram": ["7"]}, [], pairing=pairing)
    await pairing.store.approve(request, "cli", request.created_at)
    assert strict.policy("telegram") == "allowlist"
    assert not await strict(stranger)
    await storage.backend.close()


# --- ids are never matched as usernames -------------------------------------------------


def dc(user_id: str, user_name: str) -> InboundMessage:
    return InboundMessage(
        key=ChatKey("discord", "chan"), user_id=user_id, user_name=user_name, text="hi"
    )


@pytest.mark.parametrize("entry", ["123456789012345678", "@123456789012345678", "-1001234"])
async def test_an_account_named_like_a_listed_id_is_not_let_in(tmp_path, entry: str) -> None:
    """Discord allows usernames of digits: one equal to a listed id must not bind to it."""
    from bot.dispatcher.pairing import Pairing
    from bot.store.sqlite import sqlite_storage

    storage = sqlite_storage(tmp_path / "bot.db")
    await storage.backend.open()
    access = AccessControl(
        InProcessBus(), {"discord": [entry]}, [], pairing=Pairing(storage.access)
    )
    listed = entry.lstrip("@")
    squatter = dc("999", "@" + listed)
    assert not await access(squatter)
    assert not access.allowed(squatter)
    assert await storage.access.name_bindings() == {}  # nothing bound to the squatter
    assert await access(dc(listed, "@someone"))  # the id itself is still let in
    assert not access.allowed(dc("999", "@" + listed))
    await storage.backend.close()


async def test_a_stored_binding_of_an_id_entry_is_ignored(tmp_path) -> None:
    """A binding an older version stored for an id entry does not let its account in."""
    from datetime import UTC, datetime

    from bot.dispatcher.pairing import Pairing
    from bot.store.sqlite import sqlite_storage

    storage = sqlite_storage(tmp_path / "bot.db")
    await storage.backend.open()
    await storage.access.bind_name("discord", "4242", "999", datetime.now(UTC))
    access = AccessControl(
        InProcessBus(), {"discord": ["4242"]}, [], pairing=Pairing(storage.access)
    )
    assert not await access(dc("999", "@4242"))
    assert not await access(dc("999", "@renamed"))
    assert await access(dc("4242", ""))
    await storage.backend.close()


async def test_names_still_bind_on_every_platform() -> None:
    access, _ = make({"discord": ["@alice", "bob2"], "telegram": ["carol"]})
    assert access.allowed(dc("7", "@alice"))
    assert access.allowed(dc("8", "@bob2"))
    assert access.allowed(tg("9", "@carol"))
    assert not access.allowed(dc("10", "@alice"))  # bound to 7 now
