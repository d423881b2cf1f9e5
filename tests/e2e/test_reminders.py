"""Reminders and follow-ups through the whole daemon: commands, tools, firing into the
exact origin chat and thread, durability across restarts, and every bad input."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.app import build_daemon
from bot.errors import ToolError
from bot.messages import ChatKey, OutboundKind
from bot.reminders.schedule import describe
from bot.store.access import AccessStore, PairingRequest
from bot.store.reminders import ReminderKind, ReminderStatus, ReminderStore
from tests.conftest import make_settings
from tests.fakes.channel import FakeChannel
from tests.fakes.web_client import get

REMINDER = "⏰ Reminder"
README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
FOLLOWUP_LABEL = (
    "[Scheduled follow-up: a prompt you (the assistant) wrote earlier with "
    "schedule_followup, running now; the user did not write it]"
)


def _reminders(sent):
    return [m for m in sent if m.kind is OutboundKind.REMINDER]


async def _wait_reminders(chat, n: int, timeout: float = 10.0):
    await chat.wait_for(lambda sent: len(_reminders(sent)) >= n, timeout)
    return _reminders(chat.sent)


async def test_remind_command_fires_in_origin_thread_without_llm(daemon_factory, fake_llm):
    _, chat = await daemon_factory()
    ack = await chat.ask("/remind in 2 seconds stretch your legs", chat="g1", thread="topic-7")
    assert ack.text.startswith("OK, #1 reminder at ")
    (fired,) = await _wait_reminders(chat, 1)
    assert fired.key == ChatKey("test", "g1", "topic-7")
    assert fired.text == f"{REMINDER}: stretch your legs"
    assert fake_llm.requests == []  # no model in a plain reminder's path


async def test_a_time_zone_is_taken_as_people_type_it(daemon_factory, fake_llm):
    """The name in any case, or its city, is the zone, and the answer says which; a typo
    gets the zone it likely meant (each was "not an IANA time zone; use a name like
    'Europe/Berlin'", also to someone who had typed europe/berlin)."""
    _, chat = await daemon_factory()
    for typed, zone in [
        ("europe/berlin", "Europe/Berlin"),
        ("new york", "America/New_York"),
        ("Buenos Aires", "America/Argentina/Buenos_Aires"),  # its alias is the same zone
        ("utc", "UTC"),
    ]:
        answer = (await chat.ask(f"/timezone {typed}")).text
        assert answer.startswith(f"Time zone set to {zone}; it is now "), answer
    refused = (await chat.ask("/timezone Europe/Berln")).text
    assert refused == (
        "Error: 'Europe/Berln' is not an IANA time zone; did you mean 'Europe/Berlin'?"
    )
    # an offset means what it says: GMT+1 was tzdata's Etc/GMT+1, an hour behind UTC
    answer = (await chat.ask("/timezone GMT+1")).text
    assert answer.startswith("Time zone set to UTC+1 (Etc/GMT-1, a fixed offset"), answer
    shown = (await chat.ask("/timezone")).text
    assert shown.startswith("Your time zone is UTC+1 (Etc/GMT-1, a fixed offset"), shown
    ack = (await chat.ask("/remind 2026-12-24T18:00 | lights")).text
    assert "at Thu 2026-12-24 18:00 UTC+1: lights" in ack, ack
    # an abbreviation names the place whose clock it is; PST was refused
    answer = (await chat.ask("/timezone PST")).text
    assert answer.startswith("Time zone set to America/Los_Angeles; it is now "), answer
    assert "say which: 'Asia/Kolkata'" in (await chat.ask("/timezone IST")).text
    assert "America/Los_Angeles" in (await chat.ask("/timezone")).text
    assert fake_llm.requests == []


async def test_commands_work_without_a_model(daemon_factory, fake_llm, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    _, chat = await daemon_factory(llm={"api_base": "", "api_key": ""})
    assert "Europe/Berlin" in (await chat.ask("/timezone Europe/Berlin")).text
    assert "Europe/Berlin" in (await chat.ask("/timezone")).text
    ack = await chat.ask("/remind tomorrow 9am | call mom")
    assert "09:00 Europe/Berlin" in ack.text
    listing = (await chat.ask("/reminders")).text
    assert "#1 reminder" in listing and "call mom" in listing
    assert "Cancelled #1" in (await chat.ask("/cancel 1")).text
    assert "no active reminders" in (await chat.ask("/reminders")).text
    for n in range(3):
        await chat.ask(f"/remind tomorrow 9am | call {n}")
    several = (await chat.ask("/cancel 2, #4 9 2")).text.splitlines()
    assert several[0].startswith("Cancelled #2 ") and several[1].startswith("Cancelled #4 ")
    assert several[2:] == ["Error: there is no active reminder #9 of yours"]
    left = [line for line in (await chat.ask("/reminders")).text.splitlines() if "call" in line]
    assert len(left) == 1 and left[0].startswith("#3 ")
    help_text = (await chat.ask("/help")).text
    for name in ("/remind", "/reminders", "/cancel", "/timezone", "/weather", "/help"):
        assert name in help_text
    # With no zone it shows the current one: the usage says so, as the README's table does.
    assert "/timezone [zone] — " in help_text
    assert "| `/timezone [zone]` |" in README
    assert fake_llm.requests == []


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("/remind", "usage: /remind"),
        ("/remind blorp flurb", "usage: /remind"),
        ("/remind 2020-01-01T09:00 | old", "in the past"),
        ("/remind 2040-01-01T09:00 | far", "10 years"),
        ("/cancel abc", "usage: /cancel"),
        ("/cancel 99", "no active reminder #99"),
        ("/timezone Mars/Olympus", "IANA"),
    ],
)
async def test_bad_commands_get_clear_errors(daemon_factory, command, expected):
    _, chat = await daemon_factory()
    reply = await chat.ask(command)
    assert reply.text.startswith("Error: ")
    assert expected in reply.text


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("create_reminder", {"content": "x", "time": "yesterday at noon"}, "in the past"),
        ("create_reminder", {"content": "x", "time": "when pigs fly"}, "could not understand"),
        ("create_reminder", {"content": "x", "time": "now", "recurrence": "0 9 * *"}, "cron"),
        ("create_reminder", {"content": "x", "time": "in 11 years"}, "10 years"),
        ("set_timezone", {"timezone": "Atlantis/Capital"}, "IANA"),
        ("cancel_reminder", {"reminder_id": 1}, "no active reminder #1 of yours"),
        ("create_reminder", {"content": "x", "time": "in 1 hour"}, "most allowed"),
    ],
    ids=["past", "unparseable", "bad-cron", "ten-years", "bad-zone", "not-yours", "cap"],
)
async def test_bad_tool_inputs_become_error_results(daemon_factory, fake_llm, name, args, expected):
    daemon, chat = await daemon_factory(reminders={"max_active_per_user": 1})
    await chat.ask("/remind in 1 hour | someone else's", user="other")
    if name == "create_reminder" and expected == "most allowed":
        await chat.ask("/remind in 2 hours | mine")
    fake_llm.reply_tool_calls([(name, args)])
    fake_llm.reply_tool_calls([("final_result", {"answer": "relayed"})])
    assert (await chat.ask("please")).text == "relayed"
    msgs = fake_llm.requests[-1].json["messages"]
    result = next(m["content"] for m in reversed(msgs) if m["role"] == "tool")
    assert "\nError" in result and expected in result
    active = await daemon.reminders.list("test", "other")
    assert len(active) == 1  # someone else's reminder untouched


async def test_umbrella_walkthrough(daemon_factory, fake_llm, fake_weather):
    """Umbrella walkthrough: get_weather -> create_reminder -> final_result; it fires."""
    tomorrow = (datetime.now(UTC) + timedelta(days=1)).date().isoformat()
    fake_weather.add_place("Shanghai", "China", 31.22, 121.46, "Asia/Shanghai")
    fake_weather.set_forecast(tomorrow, weather_code=63, low=18, high=24, precipitation=90)
    _, chat = await daemon_factory(weather=fake_weather.settings().model_dump())
    fake_llm.reply_tool_calls([("get_weather", {"city": "Shanghai", "date": tomorrow})])
    fake_llm.reply_tool_calls(
        [("create_reminder", {"content": "Take an umbrella", "time": "in 2 seconds"})]
    )
    fake_llm.reply_tool_calls(
        [
            (
                "final_result",
                {
                    "answer": "It will rain tomorrow; I set a reminder to take an umbrella.",
                    "structured_data": {"reminder_id": 1, "rain": True},
                },
            )
        ]
    )
    reply = await chat.ask(
        "check tomorrow's weather in Shanghai and remind me to take an umbrella if it rains",
        chat="dm",
        thread="t1",
    )
    assert reply.extras["structured_data"] == {"reminder_id": 1, "rain": True}
    tool_results = [m for m in fake_llm.requests[1].json["messages"] if m["role"] == "tool"]
    assert "moderate rain" in tool_results[0]["content"]
    assert "Shanghai, China" in tool_results[0]["content"]
    assert len(fake_llm.requests) == 3
    (fired,) = await _wait_reminders(chat, 1)
    assert fired.key == ChatKey("test", "dm", "t1")
    assert fired.text == f"{REMINDER}: Take an umbrella"
    assert len(fake_llm.requests) == 3  # firing did not involve the model


async def test_followup_runs_as_scheduled_turn_in_origin_chat(daemon_factory, fake_llm):
    daemon, chat = await daemon_factory()
    fake_llm.reply_tool_calls(
        [("schedule_followup", {"prompt": "say good morning", "time": "in 2 seconds"})]
    )
    fake_llm.reply_tool_calls([("final_result", {"answer": "scheduled"})])
    assert (await chat.ask("follow up with me", chat="c9", thread="th")).text == "scheduled"
    fake_llm.reply_tool_calls([("final_result", {"answer": "Good morning!"})])
    await chat.wait_for(lambda sent: any(m.text == "Good morning!" for m in sent))
    answer = next(m for m in chat.sent if m.text == "Good morning!")
    assert answer.key == ChatKey("test", "c9", "th")
    last = fake_llm.requests[-1].json["messages"][-1]["content"]
    assert last.startswith(f"{FOLLOWUP_LABEL}\nsay good morning\n\n[Runtime Context")
    assert "scheduled task" in last and "Scheduled for:" in last
    assert "set earlier by the user" not in last  # the model wrote the prompt, not the user
    # In the stored history, and so in later turns, it stays the model's own note.
    stored = [m["content"] for m in await daemon.sessions.history(ChatKey("test", "c9", "th"))]
    assert f"{FOLLOWUP_LABEL}\nsay good morning" in stored
    assert "say good morning" not in stored


async def _status(daemon, reminder_id: int, status: ReminderStatus):
    """The reminder row moves on right after the outbox write: await that, with a timeout."""
    store = ReminderStore(daemon.db)
    async with asyncio.timeout(5):
        while True:
            stored = await store.get(reminder_id)
            if stored is not None and stored.status is status and stored.last_fired_at:
                return stored
            await asyncio.sleep(0.01)


async def _seed(daemon, *, minutes_ago: float, kind=ReminderKind.REMINDER, recurrence=None):
    store = ReminderStore(daemon.db)
    return await store.add(
        ChatKey("test", "c1", "th1"),
        "u1",
        content="water the plants",
        kind=kind,
        fire_at=datetime.now(UTC) - timedelta(minutes=minutes_ago),
        recurrence=recurrence,
        timezone="Asia/Shanghai",
    )


async def test_due_while_down_is_delivered_late_once_after_restart(tmp_path, daemon_factory):
    data = tmp_path / "d"
    daemon, _ = await daemon_factory(data_dir=data)
    reminder = await _seed(daemon, minutes_ago=125)
    await daemon.scheduler.stop()
    await daemon.stop()
    daemon2, chat = await daemon_factory(data_dir=data)
    (fired,) = await _wait_reminders(chat, 1)
    assert fired.text == f"{REMINDER} (late by 2 h 5 min): water the plants"
    assert fired.key == ChatKey("test", "c1", "th1")
    await _status(daemon2, reminder.id, ReminderStatus.DONE)
    await daemon2.stop()
    _, chat3 = await daemon_factory(data_dir=data)
    await chat3.ask("/help")  # the daemon is up and idle: nothing fires again
    assert _reminders(chat3.sent) == []


async def test_beyond_grace_is_reported_missed_once(tmp_path, daemon_factory):
    data = tmp_path / "d"
    daemon, _ = await daemon_factory(data_dir=data)
    reminder = await _seed(daemon, minutes_ago=25 * 60)
    await daemon.stop()
    daemon2, chat = await daemon_factory(data_dir=data)
    (fired,) = await _wait_reminders(chat, 1)
    assert fired.text.startswith("⏰ Missed reminder (was due ")
    assert "Asia/Shanghai" in fired.text and "1 d 1 h ago" in fired.text
    await _status(daemon2, reminder.id, ReminderStatus.MISSED)
    await daemon2.stop()
    _, chat3 = await daemon_factory(data_dir=data)
    await chat3.ask("/help")
    assert _reminders(chat3.sent) == []


async def test_recurring_catches_up_once_then_keeps_schedule(tmp_path, daemon_factory):
    data = tmp_path / "d"
    daemon, _ = await daemon_factory(data_dir=data)
    reminder = await _seed(daemon, minutes_ago=90, recurrence="0 * * * *")  # hourly, 1-2 missed
    await daemon.stop()
    daemon2, chat = await daemon_factory(data_dir=data)
    (fired,) = await _wait_reminders(chat, 1)
    assert "late by 1 h 30 min" in fired.text
    stored = await _status(daemon2, reminder.id, ReminderStatus.ACTIVE)
    assert stored.next_fire_at is not None
    assert datetime.now(UTC) < stored.next_fire_at <= datetime.now(UTC) + timedelta(hours=1)
    assert stored.next_fire_at.minute == 0


async def test_refire_of_same_occurrence_is_not_sent_twice(daemon_factory):
    daemon, chat = await daemon_factory()
    reminder = await _seed(daemon, minutes_ago=0.01)
    daemon.scheduler.schedule(reminder)
    due = reminder.next_fire_at
    assert due is not None
    await _wait_reminders(chat, 1)
    await _status(daemon, reminder.id, ReminderStatus.DONE)
    # A crash after the outbox write but before the reminder row moved on would re-fire
    # the same occurrence: the outbox's delivery key makes that a no-op.
    await ReminderStore(daemon.db).fired(reminder.id, due, due)  # back to "due"
    await daemon.scheduler.fire(reminder.id, due)
    await chat.ask("/help")
    assert len(_reminders(chat.sent)) == 1


async def test_dst_daily_reminder_keeps_local_time(daemon_factory):
    daemon, _ = await daemon_factory()
    await daemon.reminders.set_timezone("test", "u1", "Europe/Berlin")
    reminder = await daemon.reminders.create(
        ChatKey("test", "c1"), "u1", "stand-up", "now", recurrence="0 9 * * *"
    )
    assert reminder.timezone == "Europe/Berlin"
    assert reminder.next_fire_at is not None
    local = reminder.next_fire_at.astimezone(ZoneInfo("Europe/Berlin"))
    assert (local.hour, local.minute) == (9, 0)


async def test_a_new_time_zone_moves_repeats_and_keeps_one_offs_moment(daemon_factory):
    """After /timezone changed, a daily 9am still fired at 09:00 Berlin (03:00 in New
    York) and /reminders showed Berlin times."""
    daemon, chat = await daemon_factory()
    await chat.ask("/timezone Europe/Berlin")
    await chat.ask("/remind every day at 9am | water the plants")
    await chat.ask("/remind every monday at 18:00 | team call", chat="g1", direct=False)
    await chat.ask("/remind 2030-12-24T18:00 | lights")
    berlin = {r.content: r for r in await daemon.reminders.list("test", "u1")}
    answer = (await chat.ask("/timezone America/New_York")).text
    assert answer.endswith(
        "2 repeating reminders now run on New York time, at the same time of day; "
        "1 one-off reminder keeps its moment, now shown in New York time."
    )
    after = {r.content: r for r in await daemon.reminders.list("test", "u1")}
    new_york = ZoneInfo("America/New_York")
    for content, hour in (("water the plants", 9), ("team call", 18)):
        moved = after[content]
        assert moved.timezone == "America/New_York" and moved.next_fire_at is not None
        local = moved.next_fire_at.astimezone(new_york)
        assert (local.hour, local.minute) == (hour, 0)
        assert 0 < (moved.next_fire_at - datetime.now(UTC)).total_seconds() <= 7 * 86400
    assert after["team call"].next_fire_at.astimezone(new_york).weekday() == 0  # Monday
    assert after["lights"].next_fire_at == berlin["lights"].next_fire_at  # the same moment
    listing = (await chat.ask("/reminders")).text
    assert "Europe/Berlin" not in listing
    assert "#3 reminder at Tue 2030-12-24 12:00 America/New_York: lights" in listing
    again = (await chat.ask("/timezone America/New_York")).text
    assert "repeating" not in again and "one-off" not in again  # nothing left to move


@pytest.mark.parametrize("still_allowed", [True, False], ids=["allowed", "removed"])
async def test_followup_fires_only_while_its_owner_may_use_the_bot(
    daemon_factory, fake_llm, still_allowed
):

    allow = ["u1"] if still_allowed else ["someone-else"]
    daemon, chat = await daemon_factory(
        channel=FakeChannel("telegram", trusted=False),
        channels={"telegram": {"allow_from": allow}},
    )
    reminder = await ReminderStore(daemon.db).add(
        ChatKey("telegram", "c1"),
        "u1",
        content="check the weather every quarter hour",
        kind=ReminderKind.FOLLOWUP,
        fire_at=datetime.now(UTC) - timedelta(seconds=1),
        recurrence="*/15 * * * *",
        timezone="UTC",
    )
    daemon.scheduler.schedule(reminder)
    (answer,) = await chat.wait_for(lambda sent: len(sent) == 1)
    if still_allowed:
        assert answer.kind is OutboundKind.REPLY and len(fake_llm.requests) == 1
    else:
        assert answer.kind is OutboundKind.NOTICE and "allow_from" in answer.text
        assert fake_llm.requests == []  # no turn, no model call


async def test_a_reminder_of_a_revoked_owner_is_cancelled_not_sent(daemon_factory, caplog):
    """Revoked (`bot pairing revoke`), a user kept getting a daily reminder saying
    '/cancel N ends it' while every /cancel they sent got a pairing code."""
    daemon, chat = await daemon_factory(
        channel=FakeChannel("telegram", trusted=False),
        channels={"telegram": {"allow_from": []}},  # pairing: approved users only
    )
    access, store = AccessStore(daemon.db), ReminderStore(daemon.db)
    now = datetime.now(UTC)
    for user in ("u1", "u2"):
        request = PairingRequest("CODE", ChatKey("telegram", user), user, "", now, now)
        await access.approve(request, "telegram:1", now)
    ack = await chat.ask("/remind every day at 9am | take pills", chat="u1")
    assert ack.text.startswith("OK, #1")  # set while approved
    assert await access.revoke("telegram", "u1")
    due = [
        await store.add(
            ChatKey("telegram", user),
            user,
            content=f"{user}'s pills",
            kind=ReminderKind.REMINDER,
            fire_at=now - timedelta(seconds=1),
            recurrence="0 9 * * *",
            timezone="UTC",
        )
        for user in ("u1", "u2")
    ]
    for reminder in due:
        daemon.scheduler.schedule(reminder)
    (fired,) = await _wait_reminders(chat, 1)
    assert fired.key.chat_id == "u2" and "u2's pills" in fired.text
    assert (await store.get(due[0].id)).status is ReminderStatus.CANCELLED
    assert (await store.get(due[1].id)).status is ReminderStatus.ACTIVE
    assert f"reminder #{due[0].id} of telegram:u1 cancelled, not sent" in caplog.text
    await asyncio.sleep(0.5)
    assert len(_reminders(chat.sent)) == 1


async def test_recurring_followups_have_a_minimum_interval(daemon_factory):
    daemon, _ = await daemon_factory()
    key = ChatKey("test", "c1")
    followup = ReminderKind.FOLLOWUP
    for cron in ("* * * * *", "*/5 * * * *", "0,10 9 * * *"):
        with pytest.raises(ToolError, match="at most once every 15 minutes"):
            await daemon.reminders.create(key, "u1", "poll", "now", recurrence=cron, kind=followup)
    ok = await daemon.reminders.create(
        key, "u1", "poll", "now", recurrence="*/15 * * * *", kind=followup
    )
    assert ok.recurrence == "*/15 * * * *"
    # A plain reminder costs no model call: no minimum for it.
    await daemon.reminders.create(key, "u1", "stretch", "now", recurrence="*/5 * * * *")


async def test_the_minimum_interval_is_configurable(daemon_factory):
    daemon, _ = await daemon_factory(reminders={"min_followup_interval_min": 5})
    kind = ReminderKind.FOLLOWUP
    key = ChatKey("test", "c1")
    await daemon.reminders.create(key, "u1", "poll", "now", recurrence="*/5 * * * *", kind=kind)
    with pytest.raises(ToolError, match="at most once every 5 minutes"):
        await daemon.reminders.create(key, "u1", "poll", "now", recurrence="*/4 * * * *", kind=kind)


async def test_creation_is_idempotent_per_source(daemon_factory):
    """A message replayed after a crash must not create its reminder twice."""
    daemon, _ = await daemon_factory()
    key = ChatKey("test", "c1")
    first = await daemon.reminders.create(key, "u1", "tea", "in 1 hour", source="m1#reminder1")
    again = await daemon.reminders.create(key, "u1", "tea", "in 1 hour", source="m1#reminder1")
    other = await daemon.reminders.create(key, "u1", "tea", "in 1 hour", source="m1#reminder2")
    assert again.id == first.id and other.id != first.id
    assert len(await daemon.reminders.list("test", "u1")) == 2


async def test_failed_sends_are_retried_from_the_outbox(daemon_factory, fake_llm, monkeypatch):
    monkeypatch.setattr("bot.store.outbox.BACKOFF_BASE_S", 0.05)

    class Flaky(FakeChannel):
        failures = 2

        async def send(self, msg):
            if msg.kind is OutboundKind.REMINDER and self.failures:
                self.failures -= 1
                raise ConnectionError("platform down")
            return await super().send(msg)

    daemon, chat = await daemon_factory(channel=Flaky())
    await chat.ask("/remind in 1 second | retry me")
    (fired,) = await _wait_reminders(chat, 1)
    assert fired.text == f"{REMINDER}: retry me"
    rows = await daemon.db.fetchall(
        "SELECT status, attempts, last_error FROM outbox WHERE delivery_key LIKE 'reminder:%'"
    )
    async with asyncio.timeout(5):
        while rows[0]["status"] != "sent":
            await asyncio.sleep(0.01)
            rows = await daemon.db.fetchall(
                "SELECT status, attempts FROM outbox WHERE delivery_key LIKE 'reminder:%'"
            )
    assert rows[0]["attempts"] == 3


async def test_reminder_text_never_returns_as_a_user_message(daemon_factory, fake_llm):
    _, chat = await daemon_factory()
    await chat.ask("/remind in 1 second | secret plan")
    await _wait_reminders(chat, 1)
    await chat.ask("what now?")
    sent = fake_llm.requests[-1].json["messages"]
    assert not any(
        "secret plan" in str(m.get("content"))
        for m in sent
        if m["role"] == "user" and "/remind" not in str(m.get("content"))
    )


async def test_reminders_listed_in_a_group_are_only_that_chats(daemon_factory, fake_llm):
    channel = FakeChannel("test", trusted=False)  # u1 is no admin (a group's sees all)
    _, chat = await daemon_factory(channel=channel, access={"dm_policy": "open"})
    await chat.ask("/remind in 1 hour | private dentist", chat="dm-u1")
    await chat.ask("/remind in 2 hours | group stand-up", chat="g1", direct=False)
    await chat.ask("/remind in 3 hours | other group", chat="g2", direct=False)
    in_group = (await chat.ask("/reminders", chat="g1", direct=False)).text
    assert in_group.startswith("Your reminders in this chat:")
    assert "group stand-up" in in_group
    assert "dentist" not in in_group and "other group" not in in_group
    empty = (await chat.ask("/reminders", chat="g3", direct=False)).text
    assert empty == "You have no active reminders in this chat."
    in_private = (await chat.ask("/reminders", chat="dm-u1")).text
    assert all(w in in_private for w in ("dentist", "stand-up", "other group"))
    assert fake_llm.requests == []
    # The model's list_reminders tool is scoped the same way.
    for where, direct in (("g1", False), ("dm-u1", True)):
        fake_llm.reply_tool_calls([("list_reminders", {})])
        fake_llm.reply_tool_calls([("final_result", {"answer": "listed"})])
        await chat.ask("what is set?", chat=where, direct=direct)
        msgs = fake_llm.requests[-1].json["messages"]
        listed = next(m["content"] for m in reversed(msgs) if m["role"] == "tool")
        assert "stand-up" in listed
        assert ("dentist" in listed) is direct and ("other group" in listed) is direct


async def test_a_group_cancels_only_that_chats_reminders(daemon_factory, fake_llm):
    """A /cancel in a group neither shows nor ends what its member set in private (it
    posted "Cancelled #1 reminder at ...: pick up my test results" to the group)."""
    daemon, chat = await daemon_factory()
    await chat.ask("/remind in 1 hour | pick up my test results", chat="dm-u1")
    await chat.ask("/remind in 2 hours | group stand-up", chat="g1", direct=False)
    refused = (await chat.ask("/cancel 1", chat="g1", direct=False)).text
    assert refused == "Error: there is no active reminder #1 of yours"
    several = (await chat.ask("/cancel 1 2", chat="g1", direct=False)).text
    assert several.startswith("Error: there is no active reminder #1 of yours\nCancelled #2")
    assert "test results" not in refused + several
    fake_llm.reply_tool_calls([("cancel_reminder", {"reminder_id": 1})])
    fake_llm.reply_tool_calls([("final_result", {"answer": "done"})])
    await chat.ask("cancel my reminder 1", chat="g1", direct=False)
    tool = [m for m in fake_llm.requests[-1].json["messages"] if m["role"] == "tool"][-1]
    assert "no active reminder #1" in tool["content"] and "results" not in tool["content"]
    assert [r.content for r in await daemon.reminders.list("test", "u1")] == [
        "pick up my test results"
    ]
    assert (await chat.ask("/cancel 1", chat="dm-u1")).text.startswith("Cancelled #1")


async def test_cancel_of_someone_elses_id_reads_like_a_missing_one(daemon_factory, fake_llm):
    daemon, chat = await daemon_factory()
    await chat.ask("/remind in 1 hour | theirs", user="other", chat="dm-other")
    foreign = (await chat.ask("/cancel 1")).text
    missing = (await chat.ask("/cancel 2")).text
    assert foreign == "Error: there is no active reminder #1 of yours"
    assert missing == "Error: there is no active reminder #2 of yours"
    assert "theirs" not in foreign and "someone" not in foreign
    assert [r.content for r in await daemon.reminders.list("test", "other")] == ["theirs"]


async def test_a_reminder_whose_channel_is_not_running_stays_pending(
    daemon_factory, tmp_path, caplog
):
    """Set in `bot chat` (the terminal channel), due while the daemon runs headless: it
    is not marked done, and the next daemon that runs the terminal delivers it."""
    data = tmp_path / "data"
    daemon, _ = await daemon_factory(data, channel=FakeChannel("cli"))
    store = ReminderStore(daemon.db)
    added = await store.add(
        ChatKey("cli", "local"),
        "local",
        content="tea",
        kind=ReminderKind.REMINDER,
        fire_at=datetime.now(UTC) + timedelta(hours=1),
        recurrence=None,
        timezone="UTC",
    )
    await daemon.stop()

    headless, _ = await daemon_factory(data)  # only the "test" channel runs
    due = datetime.now(UTC) - timedelta(seconds=5)
    await headless.db.execute(
        "UPDATE reminders SET next_fire_at = ? WHERE id = ?", (due.isoformat(), added.id)
    )
    await headless.scheduler.fire_due(datetime.now(UTC))
    kept = await ReminderStore(headless.db).get(added.id)
    assert kept is not None and kept.status is ReminderStatus.ACTIVE
    assert headless.scheduler.held == {added.id: "cli"}
    assert f"reminder #{added.id} stays pending: its channel 'cli' is not running" in caplog.text
    await headless.stop()

    terminal = FakeChannel("cli")
    await daemon_factory(data, channel=terminal)
    (fired,) = await _wait_reminders(terminal, 1)
    assert fired.key == ChatKey("cli", "local") and fired.text.endswith(": tea")


async def test_a_daemon_with_no_working_channel_warns_and_healthz_says_so(
    tmp_path, fake_llm, caplog
):
    daemon = build_daemon(make_settings(tmp_path / "data", fake_llm.url), [])
    await daemon.start()
    try:
        assert "no channel is running: none is configured" in caplog.text
        status, body = await get(daemon, "/healthz")
        assert status == 503 and body["channels"].startswith("no channel is running")
    finally:
        await daemon.stop()


@pytest.mark.parametrize(
    ("command", "cron", "what"),
    [
        ("/remind every day at 9am | water", "0 9 * * *", "water"),
        ("/remind every weekday at 8:30 standup", "30 8 * * 1-5", "standup"),
        ("/remind every monday and friday at 18:00 | gym", "0 18 * * 1,5", "gym"),
        ("/remind every 2 hours stretch", "0 */2 * * *", "stretch"),
        ("/remind every 15 minutes | blink", "*/15 * * * *", "blink"),
        ("/remind every 0 9 * * 1-5 | work", "0 9 * * 1-5", "work"),
    ],
)
async def test_remind_every_repeats_without_a_model(daemon_factory, fake_llm, command, cron, what):
    daemon, chat = await daemon_factory()
    await chat.ask("/timezone Europe/Berlin")
    ack = await chat.ask(command)
    assert ack.text.startswith("OK, #1 reminder"), ack.text
    assert f", repeats {describe(cron)}: {what}" in ack.text
    (reminder,) = await ReminderStore(daemon.db).active()
    assert (reminder.recurrence, reminder.content, reminder.timezone) == (
        cron,
        what,
        "Europe/Berlin",
    )
    assert fake_llm.requests == []


@pytest.mark.parametrize("command", ["/remind every 45 minutes | x", "/remind every blursday | x"])
async def test_remind_every_refuses_what_it_cannot_repeat(daemon_factory, command):
    _, chat = await daemon_factory()
    reply = await chat.ask(command)
    assert reply.text.startswith("Error: ") and "every" in reply.text
