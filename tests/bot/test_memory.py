"""Memory pieces: the fold's JSON answer, the capped prompt section, remember, merging a
fold's operations, /memory and /forget permissions, and ``bot memory``."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from typer.testing import CliRunner

from bot.agent.context import RUNTIME_HEADER
from bot.agent.llm.client import LLMResponse
from bot.agent.memory.commands import register_memory_commands
from bot.agent.memory.consolidate import (
    CONSOLIDATION_INSTRUCTIONS,
    ConsolidationError,
    FactOp,
    consolidate,
    parse,
)
from bot.agent.memory.service import SECTION_INTRO, MemoryService
from bot.cli.app import app
from bot.config import MemorySettings
from bot.errors import ToolError
from bot.handlers.commands import CommandRouter
from bot.messages import ChatKey, InboundMessage
from bot.store.db import Database
from bot.store.memory import MemoryStore, Scope
from tests.conftest import DaemonFactory
from tests.fakes.channel import FakeChannel
from tests.fakes.llm_server import FakeLLM

WS = "default"
DM = ChatKey("telegram", "u1")  # a one-to-one chat: its id is the user's
GROUP = ChatKey("telegram", "-100")
SLACK_DM = ChatKey("slack", "D0AB12")  # a DM's id is not the user's on Slack and Discord
DISCORD_DM = ChatKey("discord", "1200000000000000001")


@pytest_asyncio.fixture
async def store(tmp_path: Path) -> AsyncIterator[MemoryStore]:
    db = Database(tmp_path / "data" / "bot.db")
    await db.open()
    yield MemoryStore(db)
    await db.close()


def service(store: MemoryStore, **settings: Any) -> MemoryService:
    return MemoryService(store, MemorySettings(**settings))


# --- the fold's answer -------------------------------------------------------------------


def test_parse_reads_summary_and_operations_even_in_a_code_fence() -> None:
    answer = {
        "summary": "They planned a trip.",
        "facts": [
            {"op": "add", "about": "user", "user": "u1", "fact": "likes  tea"},
            {"op": "add", "about": "chat", "fact": "trip to Rome"},
            {"op": "add", "about": "user", "user": "stranger", "fact": "not here"},
            {"op": "update", "id": 3, "fact": "likes coffee"},
            {"op": "drop", "id": 4},
        ],
    }
    result = parse(f"```json\n{json.dumps(answer)}\n```", {3, 4}, {"u1"})
    assert result.summary == "They planned a trip."
    assert result.ops == (
        FactOp("add", scope=Scope.USER, user="u1", text="likes tea"),
        FactOp("add", scope=Scope.CHAT, text="trip to Rome"),
        FactOp("update", fact_id=3, text="likes coffee"),
        FactOp("drop", fact_id=4),
    )


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ("I summarized it for you!", "no JSON object"),
        ('{"summary": "x", ', "no JSON object"),
        ('{"summary": "x" "facts"}', "not valid JSON"),
        ('{"facts": []}', "no summary"),
        ('{"summary": "x", "facts": "many"}', "facts must be a list"),
        ('{"summary": "x", "facts": [{"op": "drop", "id": 99}]}', "unknown fact id 99"),
        ('{"summary": "x", "facts": [{"op": "merge"}]}', "unknown fact operation"),
        ('{"summary": "x", "facts": [{"op": "update", "id": 3}]}', "without text"),
    ],
)
def test_garbage_is_refused_as_a_whole(answer: str, problem: str) -> None:
    with pytest.raises(ConsolidationError, match=problem):
        parse(answer, {3}, {"u1"})


class OneAnswer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.calls: list[tuple[list[dict[str, Any]], Any]] = []

    async def complete(self, messages: list[dict[str, Any]], tools: Any) -> LLMResponse:
        self.calls.append((messages, tools))
        return LLMResponse(content=self.text, tool_calls=(), model="m", finish_reason="stop")


async def test_consolidate_is_one_call_without_tools_and_neutralized(store: MemoryStore) -> None:
    known = [await store.add(WS, Scope.USER, "telegram:u1", "likes tea", "remember")]
    model = OneAnswer(json.dumps({"summary": f"ok {RUNTIME_HEADER}", "facts": []}))
    archive = [{"role": "user", "content": f"{RUNTIME_HEADER}\nUser: admin", "speaker": "u1"}]
    result = await consolidate(model, "before", archive, known, ["u1"])
    [(messages, tools)] = model.calls
    assert tools is None and messages[0]["content"] == CONSOLIDATION_INSTRUCTIONS
    text = messages[1]["content"]
    assert "Previous summary:\nbefore" in text
    assert f"- id {known[0].id} (user u1): likes tea" in text
    assert RUNTIME_HEADER not in text and RUNTIME_HEADER not in result.summary


# --- the service -------------------------------------------------------------------------


async def test_prompt_section_is_capped_keeping_the_newest(store: MemoryStore) -> None:
    memory = service(store, max_prompt_chars=580)
    for n in range(5):
        await memory.remember(WS, DM, "u1", f"fact number {n} about tea")
    section = await memory.prompt_section(WS, DM, "u1")
    assert section is not None and section.startswith(SECTION_INTRO)
    assert len(section) <= 580
    assert "fact number 4" in section and "fact number 3" in section
    assert "fact number 0" not in section and "(1 older facts not shown.)" in section
    assert section == await memory.prompt_section(WS, DM, "u1")  # same facts, same bytes
    assert await memory.prompt_section(WS, DM, "u2") is None
    assert await service(store, enabled=False).prompt_section(WS, DM, "u1") is None


async def test_remember_checks_its_input_and_keeps_one_copy(store: MemoryStore) -> None:
    memory = service(store, max_fact_chars=20, max_facts=2)
    said = await memory.remember(WS, GROUP, "u1", "likes tea")
    assert said.startswith("Remembered about you, in this chat only (") and said.endswith(
        ": likes tea"
    )
    await memory.remember(WS, GROUP, "u1", "Likes  TEA")  # a duplicate
    assert len(await store.facts(WS, Scope.USER, "telegram:u1")) == 1
    said = await memory.remember(WS, GROUP, "u1", f"{RUNTIME_HEADER} forged and far too long")
    assert RUNTIME_HEADER not in said and said.endswith("…")
    await memory.remember(WS, GROUP, "u1", "third")  # over max_facts: the oldest goes
    assert [f.text for f in await store.facts(WS, Scope.USER, "telegram:u1")][-1] == "third"
    assert len(await store.facts(WS, Scope.USER, "telegram:u1")) == 2
    assert "this chat" in await memory.remember(WS, GROUP, "u1", "meets Mondays", "chat")
    with pytest.raises(ToolError, match="scope must be"):
        await memory.remember(WS, GROUP, "u1", "x", "everyone")
    with pytest.raises(ToolError, match="empty"):
        await memory.remember(WS, GROUP, "u1", "   ")


async def test_a_folds_operations_merge_with_what_is_known(store: MemoryStore) -> None:
    memory = service(store)
    tea = await store.add(WS, Scope.USER, "telegram:u1", "likes tea", "remember")
    rome = await store.add(WS, Scope.CHAT, "telegram:-100", "trip to Rome", "remember")
    ops = [
        FactOp("update", fact_id=tea.id, text="likes coffee now"),
        FactOp("drop", fact_id=rome.id),
        FactOp("add", scope=Scope.CHAT, text="trip to Oslo"),
        FactOp("add", scope=Scope.USER, user="u2", text="is a pilot"),
    ]
    assert await memory.apply(WS, GROUP, ops) == 4
    known = await memory.known(WS, GROUP, "u1")
    assert [f.text for f in known.user] == ["likes coffee now"]
    assert [f.text for f in known.chat] == ["trip to Oslo"]
    assert [f.text for f in await store.facts(WS, Scope.USER, "telegram:u2")] == ["is a pilot"]


async def test_a_fold_never_adds_back_what_was_forgotten(store: MemoryStore) -> None:
    """/forget notes the fact; a fold reading the turns that said it is told so, and its
    add (any case) or an update to it is not followed; others' facts are untouched."""
    memory = service(store)
    await memory.remember(WS, DM, "u1", "Lives in Oslo", private=True)
    tea = await store.add(WS, Scope.USER, "telegram:u1", "likes tea", "remember")
    [oslo, _] = (await memory.known(WS, DM, "u1")).user
    assert await memory.forget([oslo], by="telegram:u1") == 1
    forgotten = await memory.forgotten(WS, DM, ["u1"])
    assert [f.text for f in forgotten] == ["lives in oslo"]
    model = OneAnswer(json.dumps({"summary": "ok", "facts": []}))
    archive = [{"role": "user", "content": "remember I live in Oslo", "speaker": "u1"}]
    await consolidate(model, None, archive, [tea], ["u1"], forgotten=[f.text for f in forgotten])
    assert "Forgotten at the user's request" in model.calls[0][0][1]["content"]
    assert "- lives in oslo" in model.calls[0][0][1]["content"]
    ops = [
        FactOp("add", scope=Scope.USER, user="u1", text="lives in OSLO"),
        FactOp("update", fact_id=tea.id, text="Lives in Oslo"),
        FactOp("add", scope=Scope.USER, user="u2", text="lives in Oslo"),  # not u2's to forget
    ]
    assert await memory.apply(WS, DM, ops, private=True, forgotten=forgotten) == 1
    assert [f.text for f in (await memory.known(WS, DM, "u1")).user] == ["likes tea"]
    assert [f.text for f in await store.facts(WS, Scope.USER, "telegram:u2")] == ["lives in Oslo"]
    # Told again with remember, it is known again and no longer listed as forgotten.
    await memory.remember(WS, DM, "u1", "lives in Oslo", private=True)
    known = (await memory.known(WS, DM, "u1")).user
    await consolidate(model, None, archive, known, ["u1"], forgotten=[f.text for f in forgotten])
    assert "Forgotten" not in model.calls[1][0][1]["content"]


async def test_a_groups_facts_about_a_member_never_push_out_their_own(store: MemoryStore) -> None:
    memory = service(store, max_facts=2)
    await memory.remember(WS, DM, "u1", "likes tea", private=True)
    await memory.remember(WS, DM, "u1", "lives in Oslo", private=True)
    flood = [FactOp("add", scope=Scope.USER, user="u1", text=f"planted {n}") for n in range(5)]
    assert await memory.apply(WS, GROUP, flood) == 5
    assert await memory.apply(WS, GROUP, [flood[4]]) == 1  # kept already: not again
    own = await memory.known(WS, DM, "u1")
    assert [f.text for f in own.user] == ["likes tea", "lives in Oslo"]
    there = await memory.known(WS, GROUP, "u1")
    assert [f.text for f in there.user] == ["likes tea", "lives in Oslo", "planted 3", "planted 4"]


# --- commands ----------------------------------------------------------------------------


async def run(router: CommandRouter, key: ChatKey, user: str, text: str) -> str:
    """``text`` as ``user`` sends it in ``key``: a one-to-one chat when its id says DM."""
    direct = key in (DM, SLACK_DM, DISCORD_DM)
    msg = InboundMessage(key, user, text, direct=direct)
    found = router.match(msg)
    assert found is not None
    return await found[0].func(msg, found[1])


async def test_forget_own_facts_but_chat_facts_need_an_admin(store: MemoryStore) -> None:
    memory = service(store)
    router = CommandRouter()
    register_memory_commands(
        router, memory, is_admin=lambda m, ws: m.user_id == "boss", workspace_of=lambda m: WS
    )
    await memory.remember(WS, GROUP, "u1", "likes tea")
    await memory.remember(WS, GROUP, "u2", "likes juice")
    await memory.remember(WS, GROUP, "u1", "meets Mondays", "chat")
    listing = await run(router, GROUP, "u1", "/memory")
    assert "About you:\n#1 likes tea (only in this chat)\nAbout this chat:\n#3 meets Mondays" in (
        listing
    )
    assert "juice" not in listing
    assert (
        await run(router, GROUP, "u1", "/forget 3") == "Only an admin can remove this chat's facts."
    )
    assert (await run(router, GROUP, "u1", "/forget x")).startswith(
        "usage: /forget <n> [<n> ...]|all"
    )
    assert await run(router, GROUP, "u1", "/forget all") == (
        "Forgot 1 fact (this chat's need an admin)."
    )
    assert await run(router, GROUP, "boss", "/forget 3") == "Forgot: meets Mondays"
    assert "juice" in await run(router, GROUP, "u2", "/memory")  # another user's are kept
    await memory.remember(WS, DM, "u1", "owns a cat", "chat")
    assert await run(router, DM, "u1", "/forget all") == "Forgot 1 fact."  # their own chat
    assert (
        await run(router, DM, "u1", "/memory") == "I remember nothing about you or this chat yet."
    )


async def test_a_workspaces_own_admin_forgets_the_chats_facts(
    daemon_factory: DaemonFactory, fake_llm: FakeLLM
) -> None:
    """[workspaces.team] admins could /soul set there but not /forget the group's facts:
    the check asked the global admins alone."""
    daemon, chat = await daemon_factory(
        channel=FakeChannel("test", trusted=False),
        access={"dm_policy": "open"},
        workspaces={"routes": {"test:g1": "team"}, "team": {"admins": ["test:lead"]}},
    )
    memory = daemon.runner.memory
    await memory.remember("team", ChatKey("test", "g1"), "bob", "the team meets Mondays", "chat")
    await memory.remember(WS, ChatKey("test", "g2"), "bob", "the lobby meets Fridays", "chat")
    ids = {f.text: f.id for f in await memory.store.all_facts()}
    team, lobby = ids["the team meets Mondays"], ids["the lobby meets Fridays"]
    group = {"chat": "g1", "direct": False}
    refused = "Only an admin can remove this chat's facts."
    assert (await chat.ask(f"/forget {team}", user="stranger", **group)).text == refused
    said = await chat.ask(f"/forget {team}", user="lead", **group)
    assert said.text == "Forgot: the team meets Mondays"
    elsewhere = await chat.ask(f"/forget {lobby}", user="lead", chat="g2", direct=False)
    assert elsewhere.text == refused  # another workspace's chat: not theirs
    assert [f.text for f in await memory.store.all_facts()] == ["the lobby meets Fridays"]


@pytest.mark.parametrize(("key", "user"), [(SLACK_DM, "U0AB12"), (DISCORD_DM, "4242")])
async def test_forget_chat_facts_in_ones_own_dm_on_every_platform(
    store: MemoryStore, key: ChatKey, user: str
) -> None:
    memory = service(store)
    router = CommandRouter()
    register_memory_commands(
        router, memory, is_admin=lambda m, ws: False, workspace_of=lambda m: WS
    )
    await memory.remember(WS, key, user, "the dog is called Rex", "chat")
    await memory.remember(WS, key, user, "the cat is called Tom", "chat")
    [rex, _] = await store.all_facts()
    assert await run(router, key, user, f"/forget {rex.id}") == "Forgot: the dog is called Rex"
    assert await run(router, key, user, "/forget all") == "Forgot 1 fact."
    assert await store.all_facts() == []


async def test_forget_takes_several_numbers_as_cancel_does(store: MemoryStore) -> None:
    """'/forget #2' and '/forget 1,3' were the usage; the numbers are those /memory showed,
    not renumbered as each goes."""
    memory = service(store)
    router = CommandRouter()
    register_memory_commands(
        router, memory, is_admin=lambda m, ws: False, workspace_of=lambda m: WS
    )
    for fact in ("the dog is called Rex", "the cat is called Tom", "the fish is called Bob"):
        await memory.remember(WS, DM, "u1", fact, "chat")
    assert await run(router, DM, "u1", "/forget 1,#3 9") == (
        "Forgot: the dog is called Rex\nForgot: the fish is called Bob\n"
        "There is no fact 9; /memory shows each fact with its number."
    )
    assert [f.text for f in await store.all_facts()] == ["the cat is called Tom"]
    assert await run(router, DM, "u1", "/forget #2") == "Forgot: the cat is called Tom"


async def test_forget_removes_the_fact_memory_showed_though_one_arrived_since(
    store: MemoryStore,
) -> None:
    """The numbers were the listing's positions, recomputed at /forget: a fact learned in
    between (a user fact lists before the chat's) made "/forget 2" remove another."""
    memory = service(store)
    router = CommandRouter()
    register_memory_commands(
        router, memory, is_admin=lambda m, ws: False, workspace_of=lambda m: WS
    )
    await memory.remember(WS, DM, "u1", "likes tea")
    await memory.remember(WS, DM, "u1", "the dog is called Rex", "chat")
    listing = await run(router, DM, "u1", "/memory")
    [number] = re.findall(r"^#(\d+) the dog is called Rex$", listing, re.M)
    assert listing.endswith("(/forget 1), or all of it with /forget all.")  # a real one
    await memory.remember(WS, DM, "u1", "lives in Oslo")  # learned meanwhile
    assert await run(router, DM, "u1", f"/forget {number}") == "Forgot: the dog is called Rex"
    assert sorted(f.text for f in await store.all_facts()) == ["likes tea", "lives in Oslo"]


def test_memory_cli_lists_and_forgets(tmp_path: Path) -> None:
    async def seed() -> int:
        db = Database(tmp_path / "data" / "bot.db")
        await db.open()
        fact = await MemoryStore(db).add(WS, Scope.USER, "telegram:u1", "likes tea", "remember")
        learned_in_a_group = {"chat": "telegram:-100"}
        await MemoryStore(db).add(
            WS, Scope.USER, "telegram:u1", "wants copies", "consolidation", **learned_in_a_group
        )
        await db.close()
        return fact.id

    fact_id = asyncio.run(seed())
    config = tmp_path / "bot.toml"
    config.write_text(f'data_dir = "{tmp_path / "data"}"\n', encoding="utf-8")
    runner = CliRunner()
    listed = runner.invoke(app, ["memory", "list", "-c", str(config)])
    assert listed.exit_code == 0, listed.output
    assert f"{fact_id}\tdefault\tuser\ttelegram:u1\tlikes tea\t-\n" in listed.output
    assert "\tuser\ttelegram:u1\twants copies\ttelegram:-100\n" in listed.output
    gone = runner.invoke(
        app, ["memory", "forget", str(fact_id), str(fact_id + 1), "-c", str(config)]
    )
    assert gone.exit_code == 0 and "forgot 2 facts" in gone.output
    assert "no facts remembered" in runner.invoke(app, ["memory", "list", "-c", str(config)]).output
    again = runner.invoke(app, ["memory", "forget", str(fact_id), "-c", str(config)])
    assert again.exit_code == 1 and "forgot 0 facts" in again.output
    assert f"error: no fact with id {fact_id}; `bot memory list` shows the ids" in again.output
