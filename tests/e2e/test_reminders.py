"""Reminders and follow-ups through the whole daemon: commands, tools, firing into the
exact origin chat and thread, durability across restarts, and every bad input."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from bot.messages import ChatKey, MessageKind, OutboundKind
from bot.store.reminders import ReminderKind, ReminderStatus, ReminderStore

REMINDER = "⏰ Reminder"


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
    help_text = (await chat.ask("/help")).text
    for name in ("/remind", "/reminders", "/cancel", "/timezone", "/weather", "/help"):
        assert name in help_text
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
        ("cancel_reminder", {"reminder_id": 1}, "belongs to someone else"),
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
    _, chat = await daemon_factory()
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
    assert last.startswith("say good morning\n\n[Runtime Context")
    assert "scheduled task" in last and "Scheduled for:" in last


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


async def test_scheduled_followup_is_exempt_from_allow_from(daemon_factory, fake_llm):
    from tests.fakes.channel import FakeChannel

    channel = FakeChannel("telegram", trusted=False)
    _, chat = await daemon_factory(channel=channel)
    msg = await chat.say("do the scheduled thing", kind=MessageKind.SCHEDULED, user="stranger")
    reply = await chat.reply(msg)
    assert reply.text == "echo: do the scheduled thing"


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
    from tests.fakes.channel import FakeChannel

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
