-- The bot.db that commit 2997765 (schema version 10) left, made by its own code:
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
INSERT INTO sessions VALUES(1,'cli','local','','2026-12-07T04:30:24.725503+00:00','2026-12-07T04:30:32.948186+00:00');
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
INSERT INTO messages VALUES(1,1,'user','hello, my name is Ada',NULL,NULL,NULL,'2026-12-07T04:30:24.726053+00:00','741ae467ec7a');
INSERT INTO messages VALUES(2,1,'assistant',NULL,'[{"id": "call_fake1", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"echo: hello, my name is Ada\"}"}}]',NULL,NULL,'2026-12-07T04:30:32.206029+00:00',NULL);
INSERT INTO messages VALUES(3,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake1','final_result','2026-12-07T04:30:32.206029+00:00',NULL);
INSERT INTO messages VALUES(4,1,'user','REMIND_ONCE 2030-01-01T09:00:00+00:00|dentist appointment',NULL,NULL,NULL,'2026-12-07T04:30:32.221240+00:00','e2cad859d642');
INSERT INTO messages VALUES(5,1,'assistant',NULL,'[{"id": "call_fake2", "type": "function", "function": {"name": "create_reminder", "arguments": "{\"content\": \"dentist appointment\", \"time\": \"2030-01-01T09:00:00+00:00\"}"}}]',NULL,NULL,'2026-12-07T04:30:32.261584+00:00',NULL);
INSERT INTO messages VALUES(6,1,'tool',replace('[tool output: create_reminder]\nCreated #1 reminder at Tue 2030-01-01 09:00 UTC: dentist appointment','\n',char(10)),NULL,'call_fake2','create_reminder','2026-12-07T04:30:32.261584+00:00',NULL);
INSERT INTO messages VALUES(7,1,'assistant',NULL,'[{"id": "call_fake3", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: create_reminder]\\nCreated #1 reminder at Tue 2030-01-01 09:00 UTC: \"}"}}]',NULL,NULL,'2026-12-07T04:30:32.283192+00:00',NULL);
INSERT INTO messages VALUES(8,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake3','final_result','2026-12-07T04:30:32.283192+00:00',NULL);
INSERT INTO messages VALUES(9,1,'user','REMIND_CRON 0 9 * * 1|weekly standup',NULL,NULL,NULL,'2026-12-07T04:30:32.292269+00:00','16384c0327b9');
INSERT INTO messages VALUES(10,1,'assistant',NULL,'[{"id": "call_fake4", "type": "function", "function": {"name": "create_reminder", "arguments": "{\"content\": \"weekly standup\", \"time\": \"in 1 minute\", \"recurrence\": \"0 9 * * 1\"}"}}]',NULL,NULL,'2026-12-07T04:30:32.664054+00:00',NULL);
INSERT INTO messages VALUES(11,1,'tool',replace('[tool output: create_reminder]\nCreated #2 reminder at Tue 2026-12-08 09:00 UTC, repeats ''0 9 * * 1'': weekly standup','\n',char(10)),NULL,'call_fake4','create_reminder','2026-12-07T04:30:32.664054+00:00',NULL);
INSERT INTO messages VALUES(12,1,'assistant',NULL,'[{"id": "call_fake5", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: create_reminder]\\nCreated #2 reminder at Tue 2026-12-08 09:00 UTC, \"}"}}]',NULL,NULL,'2026-12-07T04:30:32.687692+00:00',NULL);
INSERT INTO messages VALUES(13,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake5','final_result','2026-12-07T04:30:32.687692+00:00',NULL);
INSERT INTO messages VALUES(14,1,'user','REMIND_ONCE in 3 minutes|soon thing',NULL,NULL,NULL,'2026-12-07T04:30:32.701758+00:00','8890eb997588');
INSERT INTO messages VALUES(15,1,'assistant',NULL,'[{"id": "call_fake6", "type": "function", "function": {"name": "create_reminder", "arguments": "{\"content\": \"soon thing\", \"time\": \"in 3 minutes\"}"}}]',NULL,NULL,'2026-12-07T04:30:32.746046+00:00',NULL);
INSERT INTO messages VALUES(16,1,'tool',replace('[tool output: create_reminder]\nCreated #3 reminder at Mon 2026-12-07 04:33 UTC: soon thing','\n',char(10)),NULL,'call_fake6','create_reminder','2026-12-07T04:30:32.746046+00:00',NULL);
INSERT INTO messages VALUES(17,1,'assistant',NULL,'[{"id": "call_fake7", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: create_reminder]\\nCreated #3 reminder at Mon 2026-12-07 04:33 UTC: \"}"}}]',NULL,NULL,'2026-12-07T04:30:32.762705+00:00',NULL);
INSERT INTO messages VALUES(18,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake7','final_result','2026-12-07T04:30:32.762705+00:00',NULL);
INSERT INTO messages VALUES(19,1,'user','FOLLOWUP 2030-06-01T07:00:00+00:00 check the weather and tell me about an umbrella',NULL,NULL,NULL,'2026-12-07T04:30:32.775281+00:00','bdc157e591f8');
INSERT INTO messages VALUES(20,1,'assistant',NULL,'[{"id": "call_fake8", "type": "function", "function": {"name": "schedule_followup", "arguments": "{\"prompt\": \"check the weather and tell me about an umbrella\", \"time\": \"2030-06-01T07:00:00+00:00\"}"}}]',NULL,NULL,'2026-12-07T04:30:32.811289+00:00',NULL);
INSERT INTO messages VALUES(21,1,'tool',replace('[tool output: schedule_followup]\nCreated #4 follow-up at Sat 2030-06-01 07:00 UTC: check the weather and tell me about an umbrella','\n',char(10)),NULL,'call_fake8','schedule_followup','2026-12-07T04:30:32.811289+00:00',NULL);
INSERT INTO messages VALUES(22,1,'assistant',NULL,'[{"id": "call_fake9", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: schedule_followup]\\nCreated #4 follow-up at Sat 2030-06-01 07:00 UT\"}"}}]',NULL,NULL,'2026-12-07T04:30:32.828529+00:00',NULL);
INSERT INTO messages VALUES(23,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake9','final_result','2026-12-07T04:30:32.828529+00:00',NULL);
INSERT INTO messages VALUES(24,1,'user','REMEMBER I prefer metric units',NULL,NULL,NULL,'2026-12-07T04:30:32.843303+00:00','3ab3ec8c5c6b');
INSERT INTO messages VALUES(25,1,'assistant',NULL,'[{"id": "call_fake10", "type": "function", "function": {"name": "remember", "arguments": "{\"fact\": \"I prefer metric units\", \"scope\": \"user\"}"}}]',NULL,NULL,'2026-12-07T04:30:32.868538+00:00',NULL);
INSERT INTO messages VALUES(26,1,'tool',replace('[tool output: remember]\nRemembered about you: I prefer metric units','\n',char(10)),NULL,'call_fake10','remember','2026-12-07T04:30:32.868538+00:00',NULL);
INSERT INTO messages VALUES(27,1,'assistant',NULL,'[{"id": "call_fake11", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: remember]\\nRemembered about you: I prefer metric units\"}"}}]',NULL,NULL,'2026-12-07T04:30:32.882115+00:00',NULL);
INSERT INTO messages VALUES(28,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake11','final_result','2026-12-07T04:30:32.882115+00:00',NULL);
INSERT INTO messages VALUES(29,1,'user','what did I say my name was?',NULL,NULL,NULL,'2026-12-07T04:30:32.934925+00:00','187c6494e40e');
INSERT INTO messages VALUES(30,1,'assistant',NULL,'[{"id": "call_fake12", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"echo: what did I say my name was?\"}"}}]',NULL,NULL,'2026-12-07T04:30:32.948186+00:00',NULL);
INSERT INTO messages VALUES(31,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake12','final_result','2026-12-07T04:30:32.948186+00:00',NULL);
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
INSERT INTO inbox VALUES(1,'cli','local','','741ae467ec7a','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "hello, my name is Ada", "kind": "user", "message_id": "741ae467ec7a", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:24.722651+00:00", "direct": true}','done','2026-12-07T04:30:24.722651+00:00','2026-12-07T04:30:32.213754+00:00');
INSERT INTO inbox VALUES(2,'cli','local','','e2cad859d642','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMIND_ONCE 2030-01-01T09:00:00+00:00|dentist appointment", "kind": "user", "message_id": "e2cad859d642", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:32.214364+00:00", "direct": true}','done','2026-12-07T04:30:32.214364+00:00','2026-12-07T04:30:32.289761+00:00');
INSERT INTO inbox VALUES(3,'cli','local','','16384c0327b9','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMIND_CRON 0 9 * * 1|weekly standup", "kind": "user", "message_id": "16384c0327b9", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:32.290034+00:00", "direct": true}','done','2026-12-07T04:30:32.290034+00:00','2026-12-07T04:30:32.695441+00:00');
INSERT INTO inbox VALUES(4,'cli','local','','8890eb997588','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMIND_ONCE in 3 minutes|soon thing", "kind": "user", "message_id": "8890eb997588", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:32.695962+00:00", "direct": true}','done','2026-12-07T04:30:32.695962+00:00','2026-12-07T04:30:32.769023+00:00');
INSERT INTO inbox VALUES(5,'cli','local','','bdc157e591f8','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "FOLLOWUP 2030-06-01T07:00:00+00:00 check the weather and tell me about an umbrella", "kind": "user", "message_id": "bdc157e591f8", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:32.769411+00:00", "direct": true}','done','2026-12-07T04:30:32.769411+00:00','2026-12-07T04:30:32.834828+00:00');
INSERT INTO inbox VALUES(6,'cli','local','','3ab3ec8c5c6b','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMEMBER I prefer metric units", "kind": "user", "message_id": "3ab3ec8c5c6b", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:32.835155+00:00", "direct": true}','done','2026-12-07T04:30:32.835155+00:00','2026-12-07T04:30:32.886683+00:00');
INSERT INTO inbox VALUES(7,'cli','local','','3a86cff5c0dd','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "/timezone Europe/Paris", "kind": "user", "message_id": "3a86cff5c0dd", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:32.887053+00:00", "direct": true}','done','2026-12-07T04:30:32.887053+00:00','2026-12-07T04:30:32.893174+00:00');
INSERT INTO inbox VALUES(8,'cli','local','','eb128f3b074c','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "/remind in 2 hours take out the trash", "kind": "user", "message_id": "eb128f3b074c", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:32.893502+00:00", "direct": true}','done','2026-12-07T04:30:32.893502+00:00','2026-12-07T04:30:32.927029+00:00');
INSERT INTO inbox VALUES(9,'cli','local','','c53c17fc3d83','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "/reminders", "kind": "user", "message_id": "c53c17fc3d83", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:32.927443+00:00", "direct": true}','done','2026-12-07T04:30:32.927443+00:00','2026-12-07T04:30:32.933498+00:00');
INSERT INTO inbox VALUES(10,'cli','local','','187c6494e40e','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "what did I say my name was?", "kind": "user", "message_id": "187c6494e40e", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:32.933780+00:00", "direct": true}','done','2026-12-07T04:30:32.933780+00:00','2026-12-07T04:30:32.957706+00:00');
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
INSERT INTO outbox VALUES(1,'msg:e081ac6ca786','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "echo: hello, my name is Ada", "kind": "reply", "reply_to": "741ae467ec7a", "final": true, "attachments": [], "extras": {}, "message_id": "e081ac6ca786", "idempotency_key": null}','sent',1,'2026-12-07T04:30:32.213248+00:00',NULL,'2026-12-07T04:30:32.213248+00:00','2026-12-07T04:30:32.214507+00:00');
INSERT INTO outbox VALUES(2,'msg:d04dd7c62867','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: create_reminder]\nCreated #1 reminder at Tue 2030-01-01 09:00 UTC: ", "kind": "reply", "reply_to": "e2cad859d642", "final": true, "attachments": [], "extras": {}, "message_id": "d04dd7c62867", "idempotency_key": null}','sent',1,'2026-12-07T04:30:32.289384+00:00',NULL,'2026-12-07T04:30:32.289384+00:00','2026-12-07T04:30:32.290163+00:00');
INSERT INTO outbox VALUES(3,'msg:3e8d8c4be8fb','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: create_reminder]\nCreated #2 reminder at Tue 2026-12-08 09:00 UTC, ", "kind": "reply", "reply_to": "16384c0327b9", "final": true, "attachments": [], "extras": {}, "message_id": "3e8d8c4be8fb", "idempotency_key": null}','sent',1,'2026-12-07T04:30:32.695003+00:00',NULL,'2026-12-07T04:30:32.695003+00:00','2026-12-07T04:30:32.696128+00:00');
INSERT INTO outbox VALUES(4,'msg:338ffa731682','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: create_reminder]\nCreated #3 reminder at Mon 2026-12-07 04:33 UTC: ", "kind": "reply", "reply_to": "8890eb997588", "final": true, "attachments": [], "extras": {}, "message_id": "338ffa731682", "idempotency_key": null}','sent',1,'2026-12-07T04:30:32.768476+00:00',NULL,'2026-12-07T04:30:32.768476+00:00','2026-12-07T04:30:32.769574+00:00');
INSERT INTO outbox VALUES(5,'msg:71e169b3b7a6','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: schedule_followup]\nCreated #4 follow-up at Sat 2030-06-01 07:00 UT", "kind": "reply", "reply_to": "bdc157e591f8", "final": true, "attachments": [], "extras": {}, "message_id": "71e169b3b7a6", "idempotency_key": null}','sent',1,'2026-12-07T04:30:32.834531+00:00',NULL,'2026-12-07T04:30:32.834531+00:00','2026-12-07T04:30:32.835256+00:00');
INSERT INTO outbox VALUES(6,'msg:674bc70c2315','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: remember]\nRemembered about you: I prefer metric units", "kind": "reply", "reply_to": "3ab3ec8c5c6b", "final": true, "attachments": [], "extras": {}, "message_id": "674bc70c2315", "idempotency_key": null}','sent',1,'2026-12-07T04:30:32.886284+00:00',NULL,'2026-12-07T04:30:32.886284+00:00','2026-12-07T04:30:32.887153+00:00');
INSERT INTO outbox VALUES(7,'msg:2bc27a2ce0b4','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "Time zone set to Europe/Paris; it is now Mon 2026-12-07 05:30 Europe/Paris.", "kind": "reply", "reply_to": "3a86cff5c0dd", "final": true, "attachments": [], "extras": {}, "message_id": "2bc27a2ce0b4", "idempotency_key": null}','sent',1,'2026-12-07T04:30:32.890164+00:00',NULL,'2026-12-07T04:30:32.890164+00:00','2026-12-07T04:30:32.893597+00:00');
INSERT INTO outbox VALUES(8,'msg:876775f00005','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "OK, #5 reminder at Mon 2026-12-07 07:30 Europe/Paris: take out the trash", "kind": "reply", "reply_to": "eb128f3b074c", "final": true, "attachments": [], "extras": {}, "message_id": "876775f00005", "idempotency_key": null}','sent',1,'2026-12-07T04:30:32.926751+00:00',NULL,'2026-12-07T04:30:32.926751+00:00','2026-12-07T04:30:32.927535+00:00');
INSERT INTO outbox VALUES(9,'msg:3b1d2a32bf09','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "Your reminders:\n#3 reminder at Mon 2026-12-07 04:33 UTC: soon thing\n#5 reminder at Mon 2026-12-07 07:30 Europe/Paris: take out the trash\n#2 reminder at Tue 2026-12-08 09:00 UTC, repeats ''0 9 * * 1'': weekly standup\n#1 reminder at Tue 2030-01-01 09:00 UTC: dentist appointment\n#4 follow-up at Sat 2030-06-01 07:00 UTC: check the weather and tell me about an umbrella", "kind": "reply", "reply_to": "c53c17fc3d83", "final": true, "attachments": [], "extras": {}, "message_id": "3b1d2a32bf09", "idempotency_key": null}','sent',1,'2026-12-07T04:30:32.933207+00:00',NULL,'2026-12-07T04:30:32.933207+00:00','2026-12-07T04:30:32.933903+00:00');
INSERT INTO outbox VALUES(10,'msg:7dd00d3bff28','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "echo: what did I say my name was?", "kind": "reply", "reply_to": "187c6494e40e", "final": true, "attachments": [], "extras": {}, "message_id": "7dd00d3bff28", "idempotency_key": null}','sent',1,'2026-12-07T04:30:32.957401+00:00',NULL,'2026-12-07T04:30:32.957401+00:00','2026-12-07T04:30:32.958051+00:00');
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
);
INSERT INTO reminders VALUES(1,'cli','local','','local','dentist appointment','reminder','2030-01-01T09:00:00+00:00',NULL,'UTC','active','2026-12-07T04:30:32.258376+00:00',NULL,0,'cli:local:e2cad859d642#reminder1');
INSERT INTO reminders VALUES(2,'cli','local','','local','weekly standup','reminder','2026-12-08T09:00:00+00:00','0 9 * * 1','UTC','active','2026-12-07T04:30:32.660365+00:00',NULL,0,'cli:local:16384c0327b9#reminder1');
INSERT INTO reminders VALUES(3,'cli','local','','local','soon thing','reminder','2026-12-07T04:33:32.735986+00:00',NULL,'UTC','active','2026-12-07T04:30:32.745330+00:00',NULL,0,'cli:local:8890eb997588#reminder1');
INSERT INTO reminders VALUES(4,'cli','local','','local','check the weather and tell me about an umbrella','followup','2030-06-01T07:00:00+00:00',NULL,'UTC','active','2026-12-07T04:30:32.810810+00:00',NULL,0,'cli:local:bdc157e591f8#reminder1');
INSERT INTO reminders VALUES(5,'cli','local','','local','take out the trash','reminder','2026-12-07T06:30:32.925320+00:00',NULL,'Europe/Paris','active','2026-12-07T04:30:32.926191+00:00',NULL,0,'cli:local:eb128f3b074c#command');
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
INSERT INTO pairing_requests VALUES('ABCD2345','telegram','111','user111','111','','2026-12-07T04:30:35.877117+00:00','2036-12-04T04:30:35.877117+00:00');
CREATE TABLE approved_users (
    channel     TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    user_name   TEXT NOT NULL DEFAULT '',
    approved_by TEXT NOT NULL,
    approved_at TEXT NOT NULL,
    PRIMARY KEY (channel, user_id)
);
INSERT INTO approved_users VALUES('telegram','222','user222','telegram:999','2026-12-07T04:30:35.877117+00:00');
CREATE TABLE allow_names (
    channel     TEXT NOT NULL,
    name        TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    bound_at    TEXT NOT NULL,
    PRIMARY KEY (channel, name)
);
INSERT INTO allow_names VALUES('telegram','alice','111','2026-12-07T04:30:35.877117+00:00');
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
INSERT INTO memory_facts VALUES(1,'default','user','cli:local','I prefer metric units','remember','2026-12-07T04:30:32.868084+00:00','2026-12-07T04:30:32.868084+00:00');
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
