-- The bot.db that commit feb4874 (schema version 10) left, made by its own code:
-- sqlite3 bot.db .dump, plus its user_version. See tests/bot/test_old_stores.py.
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE sessions (
    id          INTEGER PRIMARY KEY,
    channel     TEXT NOT NULL,
    chat_id     TEXT NOT NULL,
    thread_id   TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    UNIQUE (channel, chat_id, thread_id)
);
INSERT INTO sessions VALUES(1,'cli','local','','2026-12-07T04:30:38.735094+00:00','2026-12-07T04:30:45.428507+00:00');
CREATE TABLE messages (
    id           INTEGER PRIMARY KEY,
    session_id   INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    role         TEXT NOT NULL,
    content      TEXT,
    tool_calls   TEXT,
    tool_call_id TEXT,
    name         TEXT,
    created_at   TEXT NOT NULL
, source_id TEXT);
INSERT INTO messages VALUES(1,1,'user','hello, my name is Ada',NULL,NULL,NULL,'2026-12-07T04:30:38.736467+00:00','5ef326949fdf');
INSERT INTO messages VALUES(2,1,'assistant',NULL,'[{"id": "call_fake1", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"echo: hello, my name is Ada\"}"}}]',NULL,NULL,'2026-12-07T04:30:44.843283+00:00',NULL);
INSERT INTO messages VALUES(3,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake1','final_result','2026-12-07T04:30:44.843283+00:00',NULL);
INSERT INTO messages VALUES(4,1,'user','REMIND_ONCE 2030-01-01T09:00:00+00:00|dentist appointment',NULL,NULL,NULL,'2026-12-07T04:30:44.856010+00:00','91278899a5c1');
INSERT INTO messages VALUES(5,1,'assistant',NULL,'[{"id": "call_fake2", "type": "function", "function": {"name": "create_reminder", "arguments": "{\"content\": \"dentist appointment\", \"time\": \"2030-01-01T09:00:00+00:00\"}"}}]',NULL,NULL,'2026-12-07T04:30:44.875340+00:00',NULL);
INSERT INTO messages VALUES(6,1,'tool',replace('[tool output: create_reminder]\nCreated #1 reminder at Tue 2030-01-01 09:00 UTC: dentist appointment','\n',char(10)),NULL,'call_fake2','create_reminder','2026-12-07T04:30:44.875340+00:00',NULL);
INSERT INTO messages VALUES(7,1,'assistant',NULL,'[{"id": "call_fake3", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: create_reminder]\\nCreated #1 reminder at Tue 2030-01-01 09:00 UTC: \"}"}}]',NULL,NULL,'2026-12-07T04:30:44.894072+00:00',NULL);
INSERT INTO messages VALUES(8,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake3','final_result','2026-12-07T04:30:44.894072+00:00',NULL);
INSERT INTO messages VALUES(9,1,'user','REMIND_CRON 0 9 * * 1|weekly standup',NULL,NULL,NULL,'2026-12-07T04:30:44.901871+00:00','84268d355dd9');
INSERT INTO messages VALUES(10,1,'assistant',NULL,'[{"id": "call_fake4", "type": "function", "function": {"name": "create_reminder", "arguments": "{\"content\": \"weekly standup\", \"time\": \"in 1 minute\", \"recurrence\": \"0 9 * * 1\"}"}}]',NULL,NULL,'2026-12-07T04:30:45.201656+00:00',NULL);
INSERT INTO messages VALUES(11,1,'tool',replace('[tool output: create_reminder]\nCreated #2 reminder at Tue 2026-12-08 09:00 UTC, repeats ''0 9 * * 1'': weekly standup','\n',char(10)),NULL,'call_fake4','create_reminder','2026-12-07T04:30:45.201656+00:00',NULL);
INSERT INTO messages VALUES(12,1,'assistant',NULL,'[{"id": "call_fake5", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: create_reminder]\\nCreated #2 reminder at Tue 2026-12-08 09:00 UTC, \"}"}}]',NULL,NULL,'2026-12-07T04:30:45.219828+00:00',NULL);
INSERT INTO messages VALUES(13,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake5','final_result','2026-12-07T04:30:45.219828+00:00',NULL);
INSERT INTO messages VALUES(14,1,'user','REMIND_ONCE in 3 minutes|soon thing',NULL,NULL,NULL,'2026-12-07T04:30:45.230114+00:00','feb674100aa8');
INSERT INTO messages VALUES(15,1,'assistant',NULL,'[{"id": "call_fake6", "type": "function", "function": {"name": "create_reminder", "arguments": "{\"content\": \"soon thing\", \"time\": \"in 3 minutes\"}"}}]',NULL,NULL,'2026-12-07T04:30:45.257996+00:00',NULL);
INSERT INTO messages VALUES(16,1,'tool',replace('[tool output: create_reminder]\nCreated #3 reminder at Mon 2026-12-07 04:33 UTC: soon thing','\n',char(10)),NULL,'call_fake6','create_reminder','2026-12-07T04:30:45.257996+00:00',NULL);
INSERT INTO messages VALUES(17,1,'assistant',NULL,'[{"id": "call_fake7", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: create_reminder]\\nCreated #3 reminder at Mon 2026-12-07 04:33 UTC: \"}"}}]',NULL,NULL,'2026-12-07T04:30:45.273444+00:00',NULL);
INSERT INTO messages VALUES(18,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake7','final_result','2026-12-07T04:30:45.273444+00:00',NULL);
INSERT INTO messages VALUES(19,1,'user','FOLLOWUP 2030-06-01T07:00:00+00:00 check the weather and tell me about an umbrella',NULL,NULL,NULL,'2026-12-07T04:30:45.286033+00:00','3efeb74afe75');
INSERT INTO messages VALUES(20,1,'assistant',NULL,'[{"id": "call_fake8", "type": "function", "function": {"name": "schedule_followup", "arguments": "{\"prompt\": \"check the weather and tell me about an umbrella\", \"time\": \"2030-06-01T07:00:00+00:00\"}"}}]',NULL,NULL,'2026-12-07T04:30:45.310439+00:00',NULL);
INSERT INTO messages VALUES(21,1,'tool',replace('[tool output: schedule_followup]\nCreated #4 follow-up at Sat 2030-06-01 07:00 UTC: check the weather and tell me about an umbrella','\n',char(10)),NULL,'call_fake8','schedule_followup','2026-12-07T04:30:45.310439+00:00',NULL);
INSERT INTO messages VALUES(22,1,'assistant',NULL,'[{"id": "call_fake9", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: schedule_followup]\\nCreated #4 follow-up at Sat 2030-06-01 07:00 UT\"}"}}]',NULL,NULL,'2026-12-07T04:30:45.330678+00:00',NULL);
INSERT INTO messages VALUES(23,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake9','final_result','2026-12-07T04:30:45.330678+00:00',NULL);
INSERT INTO messages VALUES(24,1,'user','REMEMBER I prefer metric units',NULL,NULL,NULL,'2026-12-07T04:30:45.341973+00:00','177e866d5187');
INSERT INTO messages VALUES(25,1,'assistant',NULL,'[{"id": "call_fake10", "type": "function", "function": {"name": "remember", "arguments": "{\"fact\": \"I prefer metric units\", \"scope\": \"user\"}"}}]',NULL,NULL,'2026-12-07T04:30:45.354483+00:00',NULL);
INSERT INTO messages VALUES(26,1,'tool',replace('[tool output: remember]\nRemembered about you: I prefer metric units','\n',char(10)),NULL,'call_fake10','remember','2026-12-07T04:30:45.354483+00:00',NULL);
INSERT INTO messages VALUES(27,1,'assistant',NULL,'[{"id": "call_fake11", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: remember]\\nRemembered about you: I prefer metric units\"}"}}]',NULL,NULL,'2026-12-07T04:30:45.369275+00:00',NULL);
INSERT INTO messages VALUES(28,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake11','final_result','2026-12-07T04:30:45.369275+00:00',NULL);
INSERT INTO messages VALUES(29,1,'user','what did I say my name was?',NULL,NULL,NULL,'2026-12-07T04:30:45.408390+00:00','b8e3a5a3f4be');
INSERT INTO messages VALUES(30,1,'assistant',NULL,'[{"id": "call_fake12", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"echo: what did I say my name was?\"}"}}]',NULL,NULL,'2026-12-07T04:30:45.428507+00:00',NULL);
INSERT INTO messages VALUES(31,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake12','final_result','2026-12-07T04:30:45.428507+00:00',NULL);
CREATE TABLE inbox (
    id          INTEGER PRIMARY KEY,
    channel     TEXT NOT NULL,
    chat_id     TEXT NOT NULL,
    thread_id   TEXT NOT NULL DEFAULT '',
    message_id  TEXT NOT NULL,
    payload     TEXT NOT NULL,
    status      TEXT NOT NULL DEFAULT 'pending',
    received_at TEXT NOT NULL,
    done_at     TEXT,
    UNIQUE (channel, chat_id, thread_id, message_id)
);
INSERT INTO inbox VALUES(1,'cli','local','','5ef326949fdf','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "hello, my name is Ada", "kind": "user", "message_id": "5ef326949fdf", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:38.707104+00:00", "direct": true}','done','2026-12-07T04:30:38.707104+00:00','2026-12-07T04:30:44.848951+00:00');
INSERT INTO inbox VALUES(2,'cli','local','','91278899a5c1','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMIND_ONCE 2030-01-01T09:00:00+00:00|dentist appointment", "kind": "user", "message_id": "91278899a5c1", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:44.853556+00:00", "direct": true}','done','2026-12-07T04:30:44.853556+00:00','2026-12-07T04:30:44.895990+00:00');
INSERT INTO inbox VALUES(3,'cli','local','','84268d355dd9','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMIND_CRON 0 9 * * 1|weekly standup", "kind": "user", "message_id": "84268d355dd9", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:44.896297+00:00", "direct": true}','done','2026-12-07T04:30:44.896297+00:00','2026-12-07T04:30:45.227186+00:00');
INSERT INTO inbox VALUES(4,'cli','local','','feb674100aa8','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMIND_ONCE in 3 minutes|soon thing", "kind": "user", "message_id": "feb674100aa8", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:45.227508+00:00", "direct": true}','done','2026-12-07T04:30:45.227508+00:00','2026-12-07T04:30:45.278036+00:00');
INSERT INTO inbox VALUES(5,'cli','local','','3efeb74afe75','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "FOLLOWUP 2030-06-01T07:00:00+00:00 check the weather and tell me about an umbrella", "kind": "user", "message_id": "3efeb74afe75", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:45.278501+00:00", "direct": true}','done','2026-12-07T04:30:45.278501+00:00','2026-12-07T04:30:45.333550+00:00');
INSERT INTO inbox VALUES(6,'cli','local','','177e866d5187','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMEMBER I prefer metric units", "kind": "user", "message_id": "177e866d5187", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:45.334171+00:00", "direct": true}','done','2026-12-07T04:30:45.334171+00:00','2026-12-07T04:30:45.371249+00:00');
INSERT INTO inbox VALUES(7,'cli','local','','6107b84f51a2','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "/timezone Europe/Paris", "kind": "user", "message_id": "6107b84f51a2", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:45.371534+00:00", "direct": true}','done','2026-12-07T04:30:45.371534+00:00','2026-12-07T04:30:45.374046+00:00');
INSERT INTO inbox VALUES(8,'cli','local','','2c65cd6e776c','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "/remind in 2 hours take out the trash", "kind": "user", "message_id": "2c65cd6e776c", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:45.374269+00:00", "direct": true}','done','2026-12-07T04:30:45.374269+00:00','2026-12-07T04:30:45.402128+00:00');
INSERT INTO inbox VALUES(9,'cli','local','','8ce759e8f2eb','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "/reminders", "kind": "user", "message_id": "8ce759e8f2eb", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:45.405124+00:00", "direct": true}','done','2026-12-07T04:30:45.405124+00:00','2026-12-07T04:30:45.406706+00:00');
INSERT INTO inbox VALUES(10,'cli','local','','b8e3a5a3f4be','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "what did I say my name was?", "kind": "user", "message_id": "b8e3a5a3f4be", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:45.407212+00:00", "direct": true}','done','2026-12-07T04:30:45.407212+00:00','2026-12-07T04:30:45.430692+00:00');
CREATE TABLE outbox (
    id              INTEGER PRIMARY KEY,
    delivery_key    TEXT NOT NULL UNIQUE,
    channel         TEXT NOT NULL,
    payload         TEXT NOT NULL,
    status          TEXT NOT NULL DEFAULT 'pending',
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    last_error      TEXT,
    created_at      TEXT NOT NULL,
    sent_at         TEXT
);
INSERT INTO outbox VALUES(1,'msg:c3f1ffb72dd2','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "echo: hello, my name is Ada", "kind": "reply", "reply_to": "5ef326949fdf", "final": true, "attachments": [], "extras": {}, "message_id": "c3f1ffb72dd2", "idempotency_key": null}','sent',1,'2026-12-07T04:30:44.848458+00:00',NULL,'2026-12-07T04:30:44.848458+00:00','2026-12-07T04:30:44.853707+00:00');
INSERT INTO outbox VALUES(2,'msg:884e99566b50','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: create_reminder]\nCreated #1 reminder at Tue 2030-01-01 09:00 UTC: ", "kind": "reply", "reply_to": "91278899a5c1", "final": true, "attachments": [], "extras": {}, "message_id": "884e99566b50", "idempotency_key": null}','sent',1,'2026-12-07T04:30:44.895650+00:00',NULL,'2026-12-07T04:30:44.895650+00:00','2026-12-07T04:30:44.896430+00:00');
INSERT INTO outbox VALUES(3,'msg:130f981602e6','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: create_reminder]\nCreated #2 reminder at Tue 2026-12-08 09:00 UTC, ", "kind": "reply", "reply_to": "84268d355dd9", "final": true, "attachments": [], "extras": {}, "message_id": "130f981602e6", "idempotency_key": null}','sent',1,'2026-12-07T04:30:45.226835+00:00',NULL,'2026-12-07T04:30:45.226835+00:00','2026-12-07T04:30:45.227643+00:00');
INSERT INTO outbox VALUES(4,'msg:7ad738de6120','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: create_reminder]\nCreated #3 reminder at Mon 2026-12-07 04:33 UTC: ", "kind": "reply", "reply_to": "feb674100aa8", "final": true, "attachments": [], "extras": {}, "message_id": "7ad738de6120", "idempotency_key": null}','sent',1,'2026-12-07T04:30:45.277541+00:00',NULL,'2026-12-07T04:30:45.277541+00:00','2026-12-07T04:30:45.278668+00:00');
INSERT INTO outbox VALUES(5,'msg:5c27f387e0ee','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: schedule_followup]\nCreated #4 follow-up at Sat 2030-06-01 07:00 UT", "kind": "reply", "reply_to": "3efeb74afe75", "final": true, "attachments": [], "extras": {}, "message_id": "5c27f387e0ee", "idempotency_key": null}','sent',1,'2026-12-07T04:30:45.333088+00:00',NULL,'2026-12-07T04:30:45.333088+00:00','2026-12-07T04:30:45.334336+00:00');
INSERT INTO outbox VALUES(6,'msg:67040f416808','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: remember]\nRemembered about you: I prefer metric units", "kind": "reply", "reply_to": "177e866d5187", "final": true, "attachments": [], "extras": {}, "message_id": "67040f416808", "idempotency_key": null}','sent',1,'2026-12-07T04:30:45.370946+00:00',NULL,'2026-12-07T04:30:45.370946+00:00','2026-12-07T04:30:45.371653+00:00');
INSERT INTO outbox VALUES(7,'msg:1983cf446cec','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "Time zone set to Europe/Paris; it is now Mon 2026-12-07 05:30 Europe/Paris.", "kind": "reply", "reply_to": "6107b84f51a2", "final": true, "attachments": [], "extras": {}, "message_id": "1983cf446cec", "idempotency_key": null}','sent',1,'2026-12-07T04:30:45.373262+00:00',NULL,'2026-12-07T04:30:45.373262+00:00','2026-12-07T04:30:45.374424+00:00');
INSERT INTO outbox VALUES(8,'msg:5bc8a7b4f411','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "OK, #5 reminder at Mon 2026-12-07 07:30 Europe/Paris: take out the trash", "kind": "reply", "reply_to": "2c65cd6e776c", "final": true, "attachments": [], "extras": {}, "message_id": "5bc8a7b4f411", "idempotency_key": null}','sent',1,'2026-12-07T04:30:45.401828+00:00',NULL,'2026-12-07T04:30:45.401828+00:00','2026-12-07T04:30:45.405285+00:00');
INSERT INTO outbox VALUES(9,'msg:c387520b3738','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "Your reminders:\n#3 reminder at Mon 2026-12-07 04:33 UTC: soon thing\n#5 reminder at Mon 2026-12-07 07:30 Europe/Paris: take out the trash\n#2 reminder at Tue 2026-12-08 09:00 UTC, repeats ''0 9 * * 1'': weekly standup\n#1 reminder at Tue 2030-01-01 09:00 UTC: dentist appointment\n#4 follow-up at Sat 2030-06-01 07:00 UTC: check the weather and tell me about an umbrella", "kind": "reply", "reply_to": "8ce759e8f2eb", "final": true, "attachments": [], "extras": {}, "message_id": "c387520b3738", "idempotency_key": null}','sent',1,'2026-12-07T04:30:45.406282+00:00',NULL,'2026-12-07T04:30:45.406282+00:00','2026-12-07T04:30:45.407327+00:00');
INSERT INTO outbox VALUES(10,'msg:0b42fdccd110','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "echo: what did I say my name was?", "kind": "reply", "reply_to": "b8e3a5a3f4be", "final": true, "attachments": [], "extras": {}, "message_id": "0b42fdccd110", "idempotency_key": null}','sent',1,'2026-12-07T04:30:45.430355+00:00',NULL,'2026-12-07T04:30:45.430355+00:00','2026-12-07T04:30:45.430967+00:00');
CREATE TABLE kv (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
INSERT INTO kv VALUES('telegram:offset','4242');
CREATE TABLE reminders (
    id           INTEGER PRIMARY KEY,
    channel      TEXT NOT NULL,
    chat_id      TEXT NOT NULL,
    thread_id    TEXT NOT NULL DEFAULT '',
    user_id      TEXT NOT NULL,
    content      TEXT NOT NULL,
    kind         TEXT NOT NULL,
    next_fire_at TEXT,
    recurrence   TEXT,
    timezone     TEXT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'active',
    created_at   TEXT NOT NULL,
    last_fired_at TEXT,
    attempts     INTEGER NOT NULL DEFAULT 0,
    source       TEXT
, workspace TEXT NOT NULL DEFAULT 'default');
INSERT INTO reminders VALUES(1,'cli','local','','local','dentist appointment','reminder','2030-01-01T09:00:00+00:00',NULL,'UTC','active','2026-12-07T04:30:44.874733+00:00',NULL,0,'cli:local:91278899a5c1#reminder1','default');
INSERT INTO reminders VALUES(2,'cli','local','','local','weekly standup','reminder','2026-12-08T09:00:00+00:00','0 9 * * 1','UTC','active','2026-12-07T04:30:45.201053+00:00',NULL,0,'cli:local:84268d355dd9#reminder1','default');
INSERT INTO reminders VALUES(3,'cli','local','','local','soon thing','reminder','2026-12-07T04:33:45.250755+00:00',NULL,'UTC','active','2026-12-07T04:30:45.257221+00:00',NULL,0,'cli:local:feb674100aa8#reminder1','default');
INSERT INTO reminders VALUES(4,'cli','local','','local','check the weather and tell me about an umbrella','followup','2030-06-01T07:00:00+00:00',NULL,'UTC','active','2026-12-07T04:30:45.309686+00:00',NULL,0,'cli:local:3efeb74afe75#reminder1','default');
INSERT INTO reminders VALUES(5,'cli','local','','local','take out the trash','reminder','2026-12-07T06:30:45.400255+00:00',NULL,'Europe/Paris','active','2026-12-07T04:30:45.401432+00:00',NULL,0,'cli:local:2c65cd6e776c#command','default');
CREATE TABLE user_settings (
    channel  TEXT NOT NULL,
    user_id  TEXT NOT NULL,
    timezone TEXT,
    PRIMARY KEY (channel, user_id)
);
INSERT INTO user_settings VALUES('cli','local','Europe/Paris');
INSERT INTO user_settings VALUES('telegram','111','Asia/Tokyo');
CREATE TABLE summaries (
    session_id  INTEGER PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    summary     TEXT NOT NULL,
    through_id  INTEGER NOT NULL,
    updated_at  TEXT NOT NULL
);
CREATE TABLE persona_versions (
    id          INTEGER PRIMARY KEY,
    workspace   TEXT NOT NULL,
    file        TEXT NOT NULL,
    version     INTEGER NOT NULL,
    text        TEXT NOT NULL,
    sha256      TEXT NOT NULL,
    author      TEXT NOT NULL,
    via         TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    UNIQUE (workspace, file, version)
);
INSERT INTO persona_versions VALUES(1,'default','AGENTS.md',1,replace('# AGENTS.md: how this assistant works\n\nEdit this file to give the assistant standing instructions for this workspace\n(house rules, tone for replies, what to do and not to do). It is read into every\nconversation. While it is unchanged from this template it is ignored.\n','\n',char(10)),'306d1768e5eb092ee1fac6625c45d8a4a873f5dd4770aee3315043332e59f602','template','template','2026-12-07T04:30:38.730211+00:00');
INSERT INTO persona_versions VALUES(2,'default','SOUL.md',1,replace('# SOUL.md: who this assistant is\n\nDescribe the assistant''s persona here: its name, its character, how it speaks.\nIt is read into every conversation. While it is unchanged from this template it is ignored.\n','\n',char(10)),'f533c900b219511c4d18f71fa9a18edb15f53fe3ee0999562890dda64d78073a','template','template','2026-12-07T04:30:38.732058+00:00');
INSERT INTO persona_versions VALUES(3,'default','USER.md',1,replace('# USER.md: who the assistant works for\n\nWrite what the assistant should know about its users: names, preferences, where\nthey live, languages. It is read into every conversation. While it is unchanged\nfrom this template it is ignored.\n','\n',char(10)),'11bb93bf1d3ef097faf7d3df240f1c1282ca26cb4a2e552c51a2f36f2a3dc612','template','template','2026-12-07T04:30:38.733933+00:00');
INSERT INTO persona_versions VALUES(4,'default','SOUL.md',2,replace('You are a terse pirate.\n','\n',char(10)),'55d97f1b2da4409acf890c30e6ceb1d9ed6a0b417c5ff751f103d791dcf832d2','cli:root','cli','2026-12-07T04:31:33.901071+00:00');
CREATE TABLE persona_refusals (
    id          INTEGER PRIMARY KEY,
    workspace   TEXT NOT NULL,
    file        TEXT NOT NULL,
    author      TEXT NOT NULL,
    via         TEXT NOT NULL,
    action      TEXT NOT NULL,
    reason      TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
CREATE TABLE chat_workspaces (
    channel     TEXT NOT NULL,
    chat_id     TEXT NOT NULL,
    workspace   TEXT NOT NULL,
    set_by      TEXT NOT NULL,
    set_at      TEXT NOT NULL,
    PRIMARY KEY (channel, chat_id)
);
CREATE TABLE pairing_requests (
    code        TEXT PRIMARY KEY,
    channel     TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    user_name   TEXT NOT NULL DEFAULT '',
    chat_id     TEXT NOT NULL,
    thread_id   TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    UNIQUE (channel, user_id)
);
INSERT INTO pairing_requests VALUES('ABCD2345','telegram','111','user111','111','','2026-12-07T04:30:48.338536+00:00','2036-12-04T04:30:48.338536+00:00');
CREATE TABLE approved_users (
    channel     TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    user_name   TEXT NOT NULL DEFAULT '',
    approved_by TEXT NOT NULL,
    approved_at TEXT NOT NULL,
    PRIMARY KEY (channel, user_id)
);
INSERT INTO approved_users VALUES('telegram','222','user222','telegram:999','2026-12-07T04:30:48.338536+00:00');
CREATE TABLE allow_names (
    channel     TEXT NOT NULL,
    name        TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    bound_at    TEXT NOT NULL,
    PRIMARY KEY (channel, name)
);
INSERT INTO allow_names VALUES('telegram','alice','111','2026-12-07T04:30:48.338536+00:00');
CREATE TABLE memory_facts (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace   TEXT NOT NULL,
    scope       TEXT NOT NULL CHECK (scope IN ('user', 'chat')),
    owner       TEXT NOT NULL,
    fact        TEXT NOT NULL,
    source      TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);
INSERT INTO memory_facts VALUES(1,'default','user','cli:local','I prefer metric units','remember','2026-12-07T04:30:45.354042+00:00','2026-12-07T04:30:45.354042+00:00');
CREATE TABLE memory_speakers (
    chat        TEXT NOT NULL,
    message_id  INTEGER NOT NULL,
    user_id     TEXT NOT NULL,
    PRIMARY KEY (chat, message_id)
);
INSERT INTO memory_speakers VALUES('cli:local',1,'local');
INSERT INTO memory_speakers VALUES('cli:local',4,'local');
INSERT INTO memory_speakers VALUES('cli:local',9,'local');
INSERT INTO memory_speakers VALUES('cli:local',14,'local');
INSERT INTO memory_speakers VALUES('cli:local',19,'local');
INSERT INTO memory_speakers VALUES('cli:local',24,'local');
CREATE TABLE memory_failures (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace   TEXT NOT NULL,
    chat        TEXT NOT NULL,
    from_id     INTEGER NOT NULL,
    through_id  INTEGER NOT NULL,
    error       TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('memory_facts',1);
CREATE INDEX messages_by_session ON messages (session_id, id);
CREATE INDEX inbox_pending ON inbox (status, id);
CREATE INDEX outbox_due ON outbox (status, next_attempt_at);
CREATE UNIQUE INDEX reminders_by_source ON reminders (source);
CREATE INDEX reminders_active ON reminders (status, next_fire_at);
CREATE INDEX reminders_by_user ON reminders (channel, user_id, status);
CREATE INDEX messages_by_source ON messages (session_id, source_id);
CREATE INDEX pairing_requests_by_channel ON pairing_requests (channel, expires_at);
CREATE INDEX memory_facts_owner ON memory_facts (workspace, scope, owner, id);
COMMIT;
PRAGMA user_version = 10;
