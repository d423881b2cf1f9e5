-- The bot.db that commit 82713d4 (schema version 10) left, made by its own code:
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
INSERT INTO sessions VALUES(1,'cli','local','','2026-12-07T04:30:52.717449+00:00','2026-12-07T04:31:00.388064+00:00');
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
INSERT INTO messages VALUES(1,1,'user','hello, my name is Ada',NULL,NULL,NULL,'2026-12-07T04:30:52.717819+00:00','5aca1789a496');
INSERT INTO messages VALUES(2,1,'assistant',NULL,'[{"id": "call_fake1", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"echo: hello, my name is Ada\"}"}}]',NULL,NULL,'2026-12-07T04:30:59.855371+00:00',NULL);
INSERT INTO messages VALUES(3,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake1','final_result','2026-12-07T04:30:59.855371+00:00',NULL);
INSERT INTO messages VALUES(4,1,'user','REMIND_ONCE 2030-01-01T09:00:00+00:00|dentist appointment',NULL,NULL,NULL,'2026-12-07T04:30:59.880980+00:00','cc5c42640f22');
INSERT INTO messages VALUES(5,1,'assistant',NULL,'[{"id": "call_fake2", "type": "function", "function": {"name": "create_reminder", "arguments": "{\"content\": \"dentist appointment\", \"time\": \"2030-01-01T09:00:00+00:00\"}"}}]',NULL,NULL,'2026-12-07T04:30:59.901527+00:00',NULL);
INSERT INTO messages VALUES(6,1,'tool',replace('[tool output: create_reminder]\nCreated #1 reminder at Tue 2030-01-01 09:00 UTC: dentist appointment','\n',char(10)),NULL,'call_fake2','create_reminder','2026-12-07T04:30:59.901527+00:00',NULL);
INSERT INTO messages VALUES(7,1,'assistant',NULL,'[{"id": "call_fake3", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: create_reminder]\\nCreated #1 reminder at Tue 2030-01-01 09:00 UTC: \"}"}}]',NULL,NULL,'2026-12-07T04:30:59.914009+00:00',NULL);
INSERT INTO messages VALUES(8,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake3','final_result','2026-12-07T04:30:59.914009+00:00',NULL);
INSERT INTO messages VALUES(9,1,'user','REMIND_CRON 0 9 * * 1|weekly standup',NULL,NULL,NULL,'2026-12-07T04:30:59.926062+00:00','515d83b6b04c');
INSERT INTO messages VALUES(10,1,'assistant',NULL,'[{"id": "call_fake4", "type": "function", "function": {"name": "create_reminder", "arguments": "{\"content\": \"weekly standup\", \"time\": \"in 1 minute\", \"recurrence\": \"0 9 * * 1\"}"}}]',NULL,NULL,'2026-12-07T04:31:00.256716+00:00',NULL);
INSERT INTO messages VALUES(11,1,'tool',replace('[tool output: create_reminder]\nCreated #2 reminder at Tue 2026-12-08 09:00 UTC, repeats ''0 9 * * 1'': weekly standup','\n',char(10)),NULL,'call_fake4','create_reminder','2026-12-07T04:31:00.256716+00:00',NULL);
INSERT INTO messages VALUES(12,1,'assistant',NULL,'[{"id": "call_fake5", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: create_reminder]\\nCreated #2 reminder at Tue 2026-12-08 09:00 UTC, \"}"}}]',NULL,NULL,'2026-12-07T04:31:00.272371+00:00',NULL);
INSERT INTO messages VALUES(13,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake5','final_result','2026-12-07T04:31:00.272371+00:00',NULL);
INSERT INTO messages VALUES(14,1,'user','REMIND_ONCE in 3 minutes|soon thing',NULL,NULL,NULL,'2026-12-07T04:31:00.281672+00:00','d5703ef281b4');
INSERT INTO messages VALUES(15,1,'assistant',NULL,'[{"id": "call_fake6", "type": "function", "function": {"name": "create_reminder", "arguments": "{\"content\": \"soon thing\", \"time\": \"in 3 minutes\"}"}}]',NULL,NULL,'2026-12-07T04:31:00.307912+00:00',NULL);
INSERT INTO messages VALUES(16,1,'tool',replace('[tool output: create_reminder]\nCreated #3 reminder at Mon 2026-12-07 04:34 UTC: soon thing','\n',char(10)),NULL,'call_fake6','create_reminder','2026-12-07T04:31:00.307912+00:00',NULL);
INSERT INTO messages VALUES(17,1,'assistant',NULL,'[{"id": "call_fake7", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: create_reminder]\\nCreated #3 reminder at Mon 2026-12-07 04:34 UTC: \"}"}}]',NULL,NULL,'2026-12-07T04:31:00.315108+00:00',NULL);
INSERT INTO messages VALUES(18,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake7','final_result','2026-12-07T04:31:00.315108+00:00',NULL);
INSERT INTO messages VALUES(19,1,'user','FOLLOWUP 2030-06-01T07:00:00+00:00 check the weather and tell me about an umbrella',NULL,NULL,NULL,'2026-12-07T04:31:00.318726+00:00','a92f11738685');
INSERT INTO messages VALUES(20,1,'assistant',NULL,'[{"id": "call_fake8", "type": "function", "function": {"name": "schedule_followup", "arguments": "{\"prompt\": \"check the weather and tell me about an umbrella\", \"time\": \"2030-06-01T07:00:00+00:00\"}"}}]',NULL,NULL,'2026-12-07T04:31:00.328138+00:00',NULL);
INSERT INTO messages VALUES(21,1,'tool',replace('[tool output: schedule_followup]\nCreated #4 follow-up at Sat 2030-06-01 07:00 UTC: check the weather and tell me about an umbrella','\n',char(10)),NULL,'call_fake8','schedule_followup','2026-12-07T04:31:00.328138+00:00',NULL);
INSERT INTO messages VALUES(22,1,'assistant',NULL,'[{"id": "call_fake9", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: schedule_followup]\\nCreated #4 follow-up at Sat 2030-06-01 07:00 UT\"}"}}]',NULL,NULL,'2026-12-07T04:31:00.334734+00:00',NULL);
INSERT INTO messages VALUES(23,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake9','final_result','2026-12-07T04:31:00.334734+00:00',NULL);
INSERT INTO messages VALUES(24,1,'user','REMEMBER I prefer metric units',NULL,NULL,NULL,'2026-12-07T04:31:00.338266+00:00','18c72e92f6cc');
INSERT INTO messages VALUES(25,1,'assistant',NULL,'[{"id": "call_fake10", "type": "function", "function": {"name": "remember", "arguments": "{\"fact\": \"I prefer metric units\", \"scope\": \"user\"}"}}]',NULL,NULL,'2026-12-07T04:31:00.345656+00:00',NULL);
INSERT INTO messages VALUES(26,1,'tool',replace('[tool output: remember]\nRemembered about you: I prefer metric units','\n',char(10)),NULL,'call_fake10','remember','2026-12-07T04:31:00.345656+00:00',NULL);
INSERT INTO messages VALUES(27,1,'assistant',NULL,'[{"id": "call_fake11", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: remember]\\nRemembered about you: I prefer metric units\"}"}}]',NULL,NULL,'2026-12-07T04:31:00.353837+00:00',NULL);
INSERT INTO messages VALUES(28,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake11','final_result','2026-12-07T04:31:00.353837+00:00',NULL);
INSERT INTO messages VALUES(29,1,'user','what did I say my name was?',NULL,NULL,NULL,'2026-12-07T04:31:00.378340+00:00','a0cc8762fde9');
INSERT INTO messages VALUES(30,1,'assistant',NULL,'[{"id": "call_fake12", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"echo: what did I say my name was?\"}"}}]',NULL,NULL,'2026-12-07T04:31:00.388064+00:00',NULL);
INSERT INTO messages VALUES(31,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake12','final_result','2026-12-07T04:31:00.388064+00:00',NULL);
CREATE TABLE inbox (
    id          INTEGER PRIMARY KEY,
    channel     TEXT NOT NULL,
    chat_id     TEXT NOT NULL,
    thread_id   TEXT NOT NULL DEFAULT '',
    message_id  TEXT NOT NULL,
    payload     TEXT NOT NULL,
    status      TEXT NOT NULL DEFAULT 'pending',
    received_at TEXT NOT NULL,
    done_at     TEXT, attempts INTEGER NOT NULL DEFAULT 0,
    UNIQUE (channel, chat_id, thread_id, message_id)
);
INSERT INTO inbox VALUES(1,'cli','local','','5aca1789a496','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "hello, my name is Ada", "kind": "user", "message_id": "5aca1789a496", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:52.682314+00:00", "direct": true}','done','2026-12-07T04:30:52.682314+00:00','2026-12-07T04:30:59.865963+00:00',1);
INSERT INTO inbox VALUES(2,'cli','local','','cc5c42640f22','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMIND_ONCE 2030-01-01T09:00:00+00:00|dentist appointment", "kind": "user", "message_id": "cc5c42640f22", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:59.875078+00:00", "direct": true}','done','2026-12-07T04:30:59.875078+00:00','2026-12-07T04:30:59.918314+00:00',1);
INSERT INTO inbox VALUES(3,'cli','local','','515d83b6b04c','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMIND_CRON 0 9 * * 1|weekly standup", "kind": "user", "message_id": "515d83b6b04c", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:59.919115+00:00", "direct": true}','done','2026-12-07T04:30:59.919115+00:00','2026-12-07T04:31:00.277818+00:00',1);
INSERT INTO inbox VALUES(4,'cli','local','','d5703ef281b4','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMIND_ONCE in 3 minutes|soon thing", "kind": "user", "message_id": "d5703ef281b4", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:31:00.278803+00:00", "direct": true}','done','2026-12-07T04:31:00.278803+00:00','2026-12-07T04:31:00.316314+00:00',1);
INSERT INTO inbox VALUES(5,'cli','local','','a92f11738685','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "FOLLOWUP 2030-06-01T07:00:00+00:00 check the weather and tell me about an umbrella", "kind": "user", "message_id": "a92f11738685", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:31:00.317205+00:00", "direct": true}','done','2026-12-07T04:31:00.317205+00:00','2026-12-07T04:31:00.335938+00:00',1);
INSERT INTO inbox VALUES(6,'cli','local','','18c72e92f6cc','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMEMBER I prefer metric units", "kind": "user", "message_id": "18c72e92f6cc", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:31:00.336826+00:00", "direct": true}','done','2026-12-07T04:31:00.336826+00:00','2026-12-07T04:31:00.355156+00:00',1);
INSERT INTO inbox VALUES(7,'cli','local','','b1bbbe1e99bb','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "/timezone Europe/Paris", "kind": "user", "message_id": "b1bbbe1e99bb", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:31:00.356023+00:00", "direct": true}','done','2026-12-07T04:31:00.356023+00:00','2026-12-07T04:31:00.357875+00:00',1);
INSERT INTO inbox VALUES(8,'cli','local','','f062bc7a987e','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "/remind in 2 hours take out the trash", "kind": "user", "message_id": "f062bc7a987e", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:31:00.358343+00:00", "direct": true}','done','2026-12-07T04:31:00.358343+00:00','2026-12-07T04:31:00.374398+00:00',1);
INSERT INTO inbox VALUES(9,'cli','local','','794ad3c74844','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "/reminders", "kind": "user", "message_id": "794ad3c74844", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:31:00.374974+00:00", "direct": true}','done','2026-12-07T04:31:00.374974+00:00','2026-12-07T04:31:00.376582+00:00',1);
INSERT INTO inbox VALUES(10,'cli','local','','a0cc8762fde9','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "what did I say my name was?", "kind": "user", "message_id": "a0cc8762fde9", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:31:00.377086+00:00", "direct": true}','done','2026-12-07T04:31:00.377086+00:00','2026-12-07T04:31:00.389511+00:00',1);
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
, claimed_by TEXT);
INSERT INTO outbox VALUES(1,'msg:6a35a5a09508','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "echo: hello, my name is Ada", "kind": "reply", "reply_to": "5aca1789a496", "final": true, "attachments": [], "extras": {}, "message_id": "6a35a5a09508", "idempotency_key": null}','sent',1,'2026-12-07T04:30:59.864045+00:00',NULL,'2026-12-07T04:30:59.864045+00:00','2026-12-07T04:30:59.875754+00:00','6fc537abf8e8');
INSERT INTO outbox VALUES(2,'msg:611d3f255c50','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: create_reminder]\nCreated #1 reminder at Tue 2030-01-01 09:00 UTC: ", "kind": "reply", "reply_to": "cc5c42640f22", "final": true, "attachments": [], "extras": {}, "message_id": "611d3f255c50", "idempotency_key": null}','sent',1,'2026-12-07T04:30:59.917916+00:00',NULL,'2026-12-07T04:30:59.917916+00:00','2026-12-07T04:30:59.919266+00:00','6fc537abf8e8');
INSERT INTO outbox VALUES(3,'msg:4b32bb79603d','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: create_reminder]\nCreated #2 reminder at Tue 2026-12-08 09:00 UTC, ", "kind": "reply", "reply_to": "515d83b6b04c", "final": true, "attachments": [], "extras": {}, "message_id": "4b32bb79603d", "idempotency_key": null}','sent',1,'2026-12-07T04:31:00.277411+00:00',NULL,'2026-12-07T04:31:00.277411+00:00','2026-12-07T04:31:00.278968+00:00','6fc537abf8e8');
INSERT INTO outbox VALUES(4,'msg:7d9f10ee16f1','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: create_reminder]\nCreated #3 reminder at Mon 2026-12-07 04:34 UTC: ", "kind": "reply", "reply_to": "d5703ef281b4", "final": true, "attachments": [], "extras": {}, "message_id": "7d9f10ee16f1", "idempotency_key": null}','sent',1,'2026-12-07T04:31:00.315959+00:00',NULL,'2026-12-07T04:31:00.315959+00:00','2026-12-07T04:31:00.317359+00:00','6fc537abf8e8');
INSERT INTO outbox VALUES(5,'msg:26b9811c51b4','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: schedule_followup]\nCreated #4 follow-up at Sat 2030-06-01 07:00 UT", "kind": "reply", "reply_to": "a92f11738685", "final": true, "attachments": [], "extras": {}, "message_id": "26b9811c51b4", "idempotency_key": null}','sent',1,'2026-12-07T04:31:00.335592+00:00',NULL,'2026-12-07T04:31:00.335592+00:00','2026-12-07T04:31:00.336996+00:00','6fc537abf8e8');
INSERT INTO outbox VALUES(6,'msg:512f94325428','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: remember]\nRemembered about you: I prefer metric units", "kind": "reply", "reply_to": "18c72e92f6cc", "final": true, "attachments": [], "extras": {}, "message_id": "512f94325428", "idempotency_key": null}','sent',1,'2026-12-07T04:31:00.354782+00:00',NULL,'2026-12-07T04:31:00.354782+00:00','2026-12-07T04:31:00.356200+00:00','6fc537abf8e8');
INSERT INTO outbox VALUES(7,'msg:c3102de95a1a','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "Time zone set to Europe/Paris; it is now Mon 2026-12-07 05:31 Europe/Paris.", "kind": "reply", "reply_to": "b1bbbe1e99bb", "final": true, "attachments": [], "extras": {}, "message_id": "c3102de95a1a", "idempotency_key": null}','sent',1,'2026-12-07T04:31:00.357589+00:00',NULL,'2026-12-07T04:31:00.357589+00:00','2026-12-07T04:31:00.358475+00:00','6fc537abf8e8');
INSERT INTO outbox VALUES(8,'msg:8a43bc5dedfb','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "OK, #5 reminder at Mon 2026-12-07 07:31 Europe/Paris: take out the trash", "kind": "reply", "reply_to": "f062bc7a987e", "final": true, "attachments": [], "extras": {}, "message_id": "8a43bc5dedfb", "idempotency_key": null}','sent',1,'2026-12-07T04:31:00.374114+00:00',NULL,'2026-12-07T04:31:00.374114+00:00','2026-12-07T04:31:00.375135+00:00','6fc537abf8e8');
INSERT INTO outbox VALUES(9,'msg:92a5cfef0856','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "Your reminders:\n#3 reminder at Mon 2026-12-07 04:34 UTC: soon thing\n#5 reminder at Mon 2026-12-07 07:31 Europe/Paris: take out the trash\n#2 reminder at Tue 2026-12-08 09:00 UTC, repeats ''0 9 * * 1'': weekly standup\n#1 reminder at Tue 2030-01-01 09:00 UTC: dentist appointment\n#4 follow-up at Sat 2030-06-01 07:00 UTC: check the weather and tell me about an umbrella", "kind": "reply", "reply_to": "794ad3c74844", "final": true, "attachments": [], "extras": {}, "message_id": "92a5cfef0856", "idempotency_key": null}','sent',1,'2026-12-07T04:31:00.376290+00:00',NULL,'2026-12-07T04:31:00.376290+00:00','2026-12-07T04:31:00.377223+00:00','6fc537abf8e8');
INSERT INTO outbox VALUES(10,'msg:05c4628f55d0','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "echo: what did I say my name was?", "kind": "reply", "reply_to": "a0cc8762fde9", "final": true, "attachments": [], "extras": {}, "message_id": "05c4628f55d0", "idempotency_key": null}','sent',1,'2026-12-07T04:31:00.389144+00:00',NULL,'2026-12-07T04:31:00.389144+00:00','2026-12-07T04:31:00.390145+00:00','6fc537abf8e8');
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
INSERT INTO reminders VALUES(1,'cli','local','','local','dentist appointment','reminder','2030-01-01T09:00:00+00:00',NULL,'UTC','active','2026-12-07T04:30:59.896906+00:00',NULL,0,'cli:local:cc5c42640f22#reminder1','default');
INSERT INTO reminders VALUES(2,'cli','local','','local','weekly standup','reminder','2026-12-08T09:00:00+00:00','0 9 * * 1','UTC','active','2026-12-07T04:31:00.255054+00:00',NULL,0,'cli:local:515d83b6b04c#reminder1','default');
INSERT INTO reminders VALUES(3,'cli','local','','local','soon thing','reminder','2026-12-07T04:34:00.305263+00:00',NULL,'UTC','active','2026-12-07T04:31:00.306372+00:00',NULL,0,'cli:local:d5703ef281b4#reminder1','default');
INSERT INTO reminders VALUES(4,'cli','local','','local','check the weather and tell me about an umbrella','followup','2030-06-01T07:00:00+00:00',NULL,'UTC','active','2026-12-07T04:31:00.326983+00:00',NULL,0,'cli:local:a92f11738685#reminder1','default');
INSERT INTO reminders VALUES(5,'cli','local','','local','take out the trash','reminder','2026-12-07T06:31:00.373099+00:00',NULL,'Europe/Paris','active','2026-12-07T04:31:00.373713+00:00',NULL,0,'cli:local:f062bc7a987e#command','default');
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
INSERT INTO persona_versions VALUES(1,'default','AGENTS.md',1,replace('# AGENTS.md: how this assistant works\n\nEdit this file to give the assistant standing instructions for this workspace\n(house rules, tone for replies, what to do and not to do). It is read into every\nconversation. While it is unchanged from this template it is ignored.\n','\n',char(10)),'306d1768e5eb092ee1fac6625c45d8a4a873f5dd4770aee3315043332e59f602','template','template','2026-12-07T04:30:52.689675+00:00');
INSERT INTO persona_versions VALUES(2,'default','SOUL.md',1,replace('# SOUL.md: who this assistant is\n\nDescribe the assistant''s persona here: its name, its character, how it speaks.\nIt is read into every conversation. While it is unchanged from this template it is ignored.\n','\n',char(10)),'f533c900b219511c4d18f71fa9a18edb15f53fe3ee0999562890dda64d78073a','template','template','2026-12-07T04:30:52.716431+00:00');
INSERT INTO persona_versions VALUES(3,'default','USER.md',1,replace('# USER.md: who the assistant works for\n\nWrite what the assistant should know about its users: names, preferences, where\nthey live, languages. It is read into every conversation. While it is unchanged\nfrom this template it is ignored.\n','\n',char(10)),'11bb93bf1d3ef097faf7d3df240f1c1282ca26cb4a2e552c51a2f36f2a3dc612','template','template','2026-12-07T04:30:52.717133+00:00');
INSERT INTO persona_versions VALUES(4,'default','SOUL.md',2,replace('You are a terse pirate.\n','\n',char(10)),'55d97f1b2da4409acf890c30e6ceb1d9ed6a0b417c5ff751f103d791dcf832d2','cli:root','cli','2026-12-07T04:31:35.737429+00:00');
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
INSERT INTO pairing_requests VALUES('ABCD2345','telegram','111','user111','111','','2026-12-07T04:31:04.352291+00:00','2036-12-04T04:31:04.352291+00:00');
CREATE TABLE approved_users (
    channel     TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    user_name   TEXT NOT NULL DEFAULT '',
    approved_by TEXT NOT NULL,
    approved_at TEXT NOT NULL,
    PRIMARY KEY (channel, user_id)
);
INSERT INTO approved_users VALUES('telegram','222','user222','telegram:999','2026-12-07T04:31:04.352291+00:00');
CREATE TABLE allow_names (
    channel     TEXT NOT NULL,
    name        TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    bound_at    TEXT NOT NULL,
    PRIMARY KEY (channel, name)
);
INSERT INTO allow_names VALUES('telegram','alice','111','2026-12-07T04:31:04.352291+00:00');
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
INSERT INTO memory_facts VALUES(1,'default','user','cli:local','I prefer metric units','remember','2026-12-07T04:31:00.344742+00:00','2026-12-07T04:31:00.344742+00:00');
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
INSERT INTO memory_speakers VALUES('cli:local',29,'local');
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
