-- The bot.db that commit 6b5f127 (schema version 18) left, made by its own code:
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
INSERT INTO sessions VALUES(1,'cli','local','','2026-12-07T04:31:20.869585+00:00','2026-12-07T04:31:32.054308+00:00');
CREATE TABLE messages (
    id           INTEGER PRIMARY KEY,
    session_id   INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    role         TEXT NOT NULL,
    content      TEXT,
    tool_calls   TEXT,
    tool_call_id TEXT,
    name         TEXT,
    created_at   TEXT NOT NULL
, source_id TEXT, media TEXT);
INSERT INTO messages VALUES(1,1,'user','hello, my name is Ada',NULL,NULL,NULL,'2026-12-07T04:31:20.869585+00:00','bbca14878e98',NULL);
INSERT INTO messages VALUES(2,1,'assistant',NULL,'[{"id": "call_fake1", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"echo: hello, my name is Ada\"}"}}]',NULL,NULL,'2026-12-07T04:31:31.330507+00:00',NULL,NULL);
INSERT INTO messages VALUES(3,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake1','final_result','2026-12-07T04:31:31.330507+00:00',NULL,NULL);
INSERT INTO messages VALUES(4,1,'user','REMIND_ONCE 2030-01-01T09:00:00+00:00|dentist appointment',NULL,NULL,NULL,'2026-12-07T04:31:31.348440+00:00','483c9e6890cf',NULL);
INSERT INTO messages VALUES(5,1,'assistant',NULL,'[{"id": "call_fake2", "type": "function", "function": {"name": "create_reminder", "arguments": "{\"content\": \"dentist appointment\", \"time\": \"2030-01-01T09:00:00+00:00\"}"}}]',NULL,NULL,'2026-12-07T04:31:31.377574+00:00',NULL,NULL);
INSERT INTO messages VALUES(6,1,'tool',replace('[tool output: create_reminder]\nCreated #1 reminder at Tue 2030-01-01 09:00 UTC: dentist appointment','\n',char(10)),NULL,'call_fake2','create_reminder','2026-12-07T04:31:31.377574+00:00',NULL,NULL);
INSERT INTO messages VALUES(7,1,'assistant',NULL,'[{"id": "call_fake3", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: create_reminder]\\nCreated #1 reminder at Tue 2030-01-01 09:00 UTC: \"}"}}]',NULL,NULL,'2026-12-07T04:31:31.403107+00:00',NULL,NULL);
INSERT INTO messages VALUES(8,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake3','final_result','2026-12-07T04:31:31.403107+00:00',NULL,NULL);
INSERT INTO messages VALUES(9,1,'user','REMIND_CRON 0 9 * * 1|weekly standup',NULL,NULL,NULL,'2026-12-07T04:31:31.417544+00:00','0b162b8b743b',NULL);
INSERT INTO messages VALUES(10,1,'assistant',NULL,'[{"id": "call_fake4", "type": "function", "function": {"name": "create_reminder", "arguments": "{\"content\": \"weekly standup\", \"time\": \"in 1 minute\", \"recurrence\": \"0 9 * * 1\"}"}}]',NULL,NULL,'2026-12-07T04:31:31.753516+00:00',NULL,NULL);
INSERT INTO messages VALUES(11,1,'tool',replace('[tool output: create_reminder]\nCreated #2 reminder at Tue 2026-12-08 09:00 UTC, repeats ''0 9 * * 1'': weekly standup','\n',char(10)),NULL,'call_fake4','create_reminder','2026-12-07T04:31:31.753516+00:00',NULL,NULL);
INSERT INTO messages VALUES(12,1,'assistant',NULL,'[{"id": "call_fake5", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: create_reminder]\\nCreated #2 reminder at Tue 2026-12-08 09:00 UTC, \"}"}}]',NULL,NULL,'2026-12-07T04:31:31.777997+00:00',NULL,NULL);
INSERT INTO messages VALUES(13,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake5','final_result','2026-12-07T04:31:31.777997+00:00',NULL,NULL);
INSERT INTO messages VALUES(14,1,'user','REMIND_ONCE in 3 minutes|soon thing',NULL,NULL,NULL,'2026-12-07T04:31:31.789543+00:00','576b2dd893f1',NULL);
INSERT INTO messages VALUES(15,1,'assistant',NULL,'[{"id": "call_fake6", "type": "function", "function": {"name": "create_reminder", "arguments": "{\"content\": \"soon thing\", \"time\": \"in 3 minutes\"}"}}]',NULL,NULL,'2026-12-07T04:31:31.821514+00:00',NULL,NULL);
INSERT INTO messages VALUES(16,1,'tool',replace('[tool output: create_reminder]\nCreated #3 reminder at Mon 2026-12-07 04:34 UTC: soon thing','\n',char(10)),NULL,'call_fake6','create_reminder','2026-12-07T04:31:31.821514+00:00',NULL,NULL);
INSERT INTO messages VALUES(17,1,'assistant',NULL,'[{"id": "call_fake7", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: create_reminder]\\nCreated #3 reminder at Mon 2026-12-07 04:34 UTC: \"}"}}]',NULL,NULL,'2026-12-07T04:31:31.843787+00:00',NULL,NULL);
INSERT INTO messages VALUES(18,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake7','final_result','2026-12-07T04:31:31.843787+00:00',NULL,NULL);
INSERT INTO messages VALUES(19,1,'user','FOLLOWUP 2030-06-01T07:00:00+00:00 check the weather and tell me about an umbrella',NULL,NULL,NULL,'2026-12-07T04:31:31.853561+00:00','6afb0d6d0566',NULL);
INSERT INTO messages VALUES(20,1,'assistant',NULL,'[{"id": "call_fake8", "type": "function", "function": {"name": "schedule_followup", "arguments": "{\"prompt\": \"check the weather and tell me about an umbrella\", \"time\": \"2030-06-01T07:00:00+00:00\"}"}}]',NULL,NULL,'2026-12-07T04:31:31.885962+00:00',NULL,NULL);
INSERT INTO messages VALUES(21,1,'tool',replace('[tool output: schedule_followup]\nCreated #4 follow-up at Sat 2030-06-01 07:00 UTC: check the weather and tell me about an umbrella','\n',char(10)),NULL,'call_fake8','schedule_followup','2026-12-07T04:31:31.885962+00:00',NULL,NULL);
INSERT INTO messages VALUES(22,1,'assistant',NULL,'[{"id": "call_fake9", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: schedule_followup]\\nCreated #4 follow-up at Sat 2030-06-01 07:00 UT\"}"}}]',NULL,NULL,'2026-12-07T04:31:31.909578+00:00',NULL,NULL);
INSERT INTO messages VALUES(23,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake9','final_result','2026-12-07T04:31:31.909578+00:00',NULL,NULL);
INSERT INTO messages VALUES(24,1,'user','REMEMBER I prefer metric units',NULL,NULL,NULL,'2026-12-07T04:31:31.921529+00:00','35d005c75628',NULL);
INSERT INTO messages VALUES(25,1,'assistant',NULL,'[{"id": "call_fake10", "type": "function", "function": {"name": "remember", "arguments": "{\"fact\": \"I prefer metric units\", \"scope\": \"user\"}"}}]',NULL,NULL,'2026-12-07T04:31:31.949348+00:00',NULL,NULL);
INSERT INTO messages VALUES(26,1,'tool',replace('[tool output: remember]\nRemembered about you: I prefer metric units','\n',char(10)),NULL,'call_fake10','remember','2026-12-07T04:31:31.949348+00:00',NULL,NULL);
INSERT INTO messages VALUES(27,1,'assistant',NULL,'[{"id": "call_fake11", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: remember]\\nRemembered about you: I prefer metric units\"}"}}]',NULL,NULL,'2026-12-07T04:31:31.973576+00:00',NULL,NULL);
INSERT INTO messages VALUES(28,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake11','final_result','2026-12-07T04:31:31.973576+00:00',NULL,NULL);
INSERT INTO messages VALUES(29,1,'user','what did I say my name was?',NULL,NULL,NULL,'2026-12-07T04:31:32.025582+00:00','e76954700760',NULL);
INSERT INTO messages VALUES(30,1,'assistant',NULL,'[{"id": "call_fake12", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"echo: what did I say my name was?\"}"}}]',NULL,NULL,'2026-12-07T04:31:32.054308+00:00',NULL,NULL);
INSERT INTO messages VALUES(31,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake12','final_result','2026-12-07T04:31:32.054308+00:00',NULL,NULL);
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
INSERT INTO inbox VALUES(1,'cli','local','','bbca14878e98','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "hello, my name is Ada", "kind": "user", "message_id": "bbca14878e98", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:31:20.814341+00:00", "direct": true, "chain_depth": 0}','done','2026-12-07T04:31:20.814341+00:00','2026-12-07T04:31:31.338958+00:00',1);
INSERT INTO inbox VALUES(2,'cli','local','','483c9e6890cf','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMIND_ONCE 2030-01-01T09:00:00+00:00|dentist appointment", "kind": "user", "message_id": "483c9e6890cf", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:31:31.339474+00:00", "direct": true, "chain_depth": 0}','done','2026-12-07T04:31:31.339474+00:00','2026-12-07T04:31:31.409473+00:00',1);
INSERT INTO inbox VALUES(3,'cli','local','','0b162b8b743b','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMIND_CRON 0 9 * * 1|weekly standup", "kind": "user", "message_id": "0b162b8b743b", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:31:31.413102+00:00", "direct": true, "chain_depth": 0}','done','2026-12-07T04:31:31.413102+00:00','2026-12-07T04:31:31.779810+00:00',1);
INSERT INTO inbox VALUES(4,'cli','local','','576b2dd893f1','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMIND_ONCE in 3 minutes|soon thing", "kind": "user", "message_id": "576b2dd893f1", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:31:31.785217+00:00", "direct": true, "chain_depth": 0}','done','2026-12-07T04:31:31.785217+00:00','2026-12-07T04:31:31.849357+00:00',1);
INSERT INTO inbox VALUES(5,'cli','local','','6afb0d6d0566','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "FOLLOWUP 2030-06-01T07:00:00+00:00 check the weather and tell me about an umbrella", "kind": "user", "message_id": "6afb0d6d0566", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:31:31.849868+00:00", "direct": true, "chain_depth": 0}','done','2026-12-07T04:31:31.849868+00:00','2026-12-07T04:31:31.913335+00:00',1);
INSERT INTO inbox VALUES(6,'cli','local','','35d005c75628','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMEMBER I prefer metric units", "kind": "user", "message_id": "35d005c75628", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:31:31.917212+00:00", "direct": true, "chain_depth": 0}','done','2026-12-07T04:31:31.917212+00:00','2026-12-07T04:31:31.977369+00:00',1);
INSERT INTO inbox VALUES(7,'cli','local','','296034715557','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "/timezone Europe/Paris", "kind": "user", "message_id": "296034715557", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:31:31.977842+00:00", "direct": true, "chain_depth": 0}','done','2026-12-07T04:31:31.977842+00:00','2026-12-07T04:31:31.981896+00:00',1);
INSERT INTO inbox VALUES(8,'cli','local','','6b5d91646cee','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "/remind in 2 hours take out the trash", "kind": "user", "message_id": "6b5d91646cee", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:31:31.982282+00:00", "direct": true, "chain_depth": 0}','done','2026-12-07T04:31:31.982282+00:00','2026-12-07T04:31:32.014691+00:00',1);
INSERT INTO inbox VALUES(9,'cli','local','','7e3e3e37a28a','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "/reminders", "kind": "user", "message_id": "7e3e3e37a28a", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:31:32.015171+00:00", "direct": true, "chain_depth": 0}','done','2026-12-07T04:31:32.015171+00:00','2026-12-07T04:31:32.022119+00:00',1);
INSERT INTO inbox VALUES(10,'cli','local','','e76954700760','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "what did I say my name was?", "kind": "user", "message_id": "e76954700760", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:31:32.022548+00:00", "direct": true, "chain_depth": 0}','done','2026-12-07T04:31:32.022548+00:00','2026-12-07T04:31:32.061505+00:00',1);
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
INSERT INTO outbox VALUES(1,'reply:cli:local:bbca14878e98','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "echo: hello, my name is Ada", "kind": "reply", "reply_to": "bbca14878e98", "final": true, "attachments": [], "extras": {}, "message_id": "1c944a6393fe", "idempotency_key": "reply:cli:local:bbca14878e98", "preview_id": "preview-1"}','sent',1,'2026-12-07T04:31:31.338431+00:00',NULL,'2026-12-07T04:31:31.338431+00:00','2026-12-07T04:31:31.339686+00:00','6a196ae1c9fa');
INSERT INTO outbox VALUES(2,'reply:cli:local:483c9e6890cf','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: create_reminder]\nCreated #1 reminder at Tue 2030-01-01 09:00 UTC: ", "kind": "reply", "reply_to": "483c9e6890cf", "final": true, "attachments": [], "extras": {}, "message_id": "52c45ed0ac29", "idempotency_key": "reply:cli:local:483c9e6890cf", "preview_id": "preview-2"}','sent',1,'2026-12-07T04:31:31.409238+00:00',NULL,'2026-12-07T04:31:31.409238+00:00','2026-12-07T04:31:31.413242+00:00','6a196ae1c9fa');
INSERT INTO outbox VALUES(3,'reply:cli:local:0b162b8b743b','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: create_reminder]\nCreated #2 reminder at Tue 2026-12-08 09:00 UTC, ", "kind": "reply", "reply_to": "0b162b8b743b", "final": true, "attachments": [], "extras": {}, "message_id": "03de314b4faf", "idempotency_key": "reply:cli:local:0b162b8b743b", "preview_id": "preview-3"}','sent',1,'2026-12-07T04:31:31.779626+00:00',NULL,'2026-12-07T04:31:31.779626+00:00','2026-12-07T04:31:31.785350+00:00','6a196ae1c9fa');
INSERT INTO outbox VALUES(4,'reply:cli:local:576b2dd893f1','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: create_reminder]\nCreated #3 reminder at Mon 2026-12-07 04:34 UTC: ", "kind": "reply", "reply_to": "576b2dd893f1", "final": true, "attachments": [], "extras": {}, "message_id": "a13411ee428c", "idempotency_key": "reply:cli:local:576b2dd893f1", "preview_id": "preview-4"}','sent',1,'2026-12-07T04:31:31.849113+00:00',NULL,'2026-12-07T04:31:31.849113+00:00','2026-12-07T04:31:31.849960+00:00','6a196ae1c9fa');
INSERT INTO outbox VALUES(5,'reply:cli:local:6afb0d6d0566','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: schedule_followup]\nCreated #4 follow-up at Sat 2030-06-01 07:00 UT", "kind": "reply", "reply_to": "6afb0d6d0566", "final": true, "attachments": [], "extras": {}, "message_id": "b62363da06f3", "idempotency_key": "reply:cli:local:6afb0d6d0566", "preview_id": "preview-5"}','sent',1,'2026-12-07T04:31:31.913143+00:00',NULL,'2026-12-07T04:31:31.913143+00:00','2026-12-07T04:31:31.917341+00:00','6a196ae1c9fa');
INSERT INTO outbox VALUES(6,'reply:cli:local:35d005c75628','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: remember]\nRemembered about you: I prefer metric units", "kind": "reply", "reply_to": "35d005c75628", "final": true, "attachments": [], "extras": {}, "message_id": "f3b65499762c", "idempotency_key": "reply:cli:local:35d005c75628", "preview_id": "preview-6"}','sent',1,'2026-12-07T04:31:31.977163+00:00',NULL,'2026-12-07T04:31:31.977163+00:00','2026-12-07T04:31:31.977929+00:00','6a196ae1c9fa');
INSERT INTO outbox VALUES(7,'reply:cli:local:296034715557','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "Time zone set to Europe/Paris; it is now Mon 2026-12-07 05:31 Europe/Paris.", "kind": "reply", "reply_to": "296034715557", "final": true, "attachments": [], "extras": {}, "message_id": "e72a28bab2f8", "idempotency_key": "reply:cli:local:296034715557", "preview_id": null}','sent',1,'2026-12-07T04:31:31.981691+00:00',NULL,'2026-12-07T04:31:31.981691+00:00','2026-12-07T04:31:31.982359+00:00','6a196ae1c9fa');
INSERT INTO outbox VALUES(8,'reply:cli:local:6b5d91646cee','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "OK, #5 reminder at Mon 2026-12-07 07:31 Europe/Paris: take out the trash", "kind": "reply", "reply_to": "6b5d91646cee", "final": true, "attachments": [], "extras": {}, "message_id": "d9a59bc6a1b0", "idempotency_key": "reply:cli:local:6b5d91646cee", "preview_id": null}','sent',1,'2026-12-07T04:31:32.014493+00:00',NULL,'2026-12-07T04:31:32.014493+00:00','2026-12-07T04:31:32.015248+00:00','6a196ae1c9fa');
INSERT INTO outbox VALUES(9,'reply:cli:local:7e3e3e37a28a','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "Your reminders:\n#3 reminder at Mon 2026-12-07 04:34 UTC: soon thing\n#5 reminder at Mon 2026-12-07 07:31 Europe/Paris: take out the trash\n#2 reminder at Tue 2026-12-08 09:00 UTC, repeats ''0 9 * * 1'': weekly standup\n#1 reminder at Tue 2030-01-01 09:00 UTC: dentist appointment\n#4 follow-up at Sat 2030-06-01 07:00 UTC: check the weather and tell me about an umbrella", "kind": "reply", "reply_to": "7e3e3e37a28a", "final": true, "attachments": [], "extras": {}, "message_id": "335b9abcb83b", "idempotency_key": "reply:cli:local:7e3e3e37a28a", "preview_id": null}','sent',1,'2026-12-07T04:31:32.021920+00:00',NULL,'2026-12-07T04:31:32.021920+00:00','2026-12-07T04:31:32.022628+00:00','6a196ae1c9fa');
INSERT INTO outbox VALUES(10,'reply:cli:local:e76954700760','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "echo: what did I say my name was?", "kind": "reply", "reply_to": "e76954700760", "final": true, "attachments": [], "extras": {}, "message_id": "6c5ac39aa7ba", "idempotency_key": "reply:cli:local:e76954700760", "preview_id": "preview-7"}','sent',1,'2026-12-07T04:31:32.061276+00:00',NULL,'2026-12-07T04:31:32.061276+00:00','2026-12-07T04:31:32.061835+00:00','6a196ae1c9fa');
CREATE TABLE kv (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
, expires_at TEXT);
INSERT INTO kv VALUES('telegram:offset','4242',NULL);
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
, workspace TEXT NOT NULL DEFAULT 'default', chain_depth INTEGER NOT NULL DEFAULT 0);
INSERT INTO reminders VALUES(1,'cli','local','','local','dentist appointment','reminder','2030-01-01T09:00:00+00:00',NULL,'UTC','active','2026-12-07T04:31:31.377172+00:00',NULL,0,'cli:local:483c9e6890cf#reminder1','default',0);
INSERT INTO reminders VALUES(2,'cli','local','','local','weekly standup','reminder','2026-12-08T09:00:00+00:00','0 9 * * 1','UTC','active','2026-12-07T04:31:31.747719+00:00',NULL,0,'cli:local:0b162b8b743b#reminder1','default',0);
INSERT INTO reminders VALUES(3,'cli','local','','local','soon thing','reminder','2026-12-07T04:34:31.814933+00:00',NULL,'UTC','active','2026-12-07T04:31:31.815971+00:00',NULL,0,'cli:local:576b2dd893f1#reminder1','default',0);
INSERT INTO reminders VALUES(4,'cli','local','','local','check the weather and tell me about an umbrella','followup','2030-06-01T07:00:00+00:00',NULL,'UTC','active','2026-12-07T04:31:31.885515+00:00',NULL,0,'cli:local:6afb0d6d0566#reminder1','default',1);
INSERT INTO reminders VALUES(5,'cli','local','','local','take out the trash','reminder','2026-12-07T06:31:32.013107+00:00',NULL,'Europe/Paris','active','2026-12-07T04:31:32.014127+00:00',NULL,0,'cli:local:6b5d91646cee#command','default',0);
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
INSERT INTO persona_versions VALUES(1,'default','AGENTS.md',1,replace('# AGENTS.md: how this assistant works\n\nEdit this file to give the assistant standing instructions for this workspace\n(house rules, tone for replies, what to do and not to do). It is read into every\nconversation. While it is unchanged from this template it is ignored.\n','\n',char(10)),'306d1768e5eb092ee1fac6625c45d8a4a873f5dd4770aee3315043332e59f602','template','template','2026-12-07T04:31:20.842480+00:00');
INSERT INTO persona_versions VALUES(2,'default','SOUL.md',1,replace('# SOUL.md: who this assistant is\n\nDescribe the assistant''s persona here: its name, its character, how it speaks.\nIt is read into every conversation. While it is unchanged from this template it is ignored.\n','\n',char(10)),'f533c900b219511c4d18f71fa9a18edb15f53fe3ee0999562890dda64d78073a','template','template','2026-12-07T04:31:20.865327+00:00');
INSERT INTO persona_versions VALUES(3,'default','USER.md',1,replace('# USER.md: who the assistant works for\n\nWrite what the assistant should know about its users: names, preferences, where\nthey live, languages. It is read into every conversation. While it is unchanged\nfrom this template it is ignored.\n','\n',char(10)),'11bb93bf1d3ef097faf7d3df240f1c1282ca26cb4a2e552c51a2f36f2a3dc612','template','template','2026-12-07T04:31:20.869157+00:00');
INSERT INTO persona_versions VALUES(4,'default','SOUL.md',2,replace('You are a terse pirate.\n','\n',char(10)),'55d97f1b2da4409acf890c30e6ceb1d9ed6a0b417c5ff751f103d791dcf832d2','cli:root','cli','2026-12-07T04:31:37.912699+00:00');
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
INSERT INTO pairing_requests VALUES('ABCD2345','telegram','111','user111','111','','2026-12-07T04:31:32.778269+00:00','2036-12-04T04:31:32.778269+00:00');
CREATE TABLE approved_users (
    channel     TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    user_name   TEXT NOT NULL DEFAULT '',
    approved_by TEXT NOT NULL,
    approved_at TEXT NOT NULL,
    PRIMARY KEY (channel, user_id)
);
INSERT INTO approved_users VALUES('telegram','222','user222','telegram:999','2026-12-07T04:31:32.778269+00:00');
CREATE TABLE allow_names (
    channel     TEXT NOT NULL,
    name        TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    bound_at    TEXT NOT NULL,
    PRIMARY KEY (channel, name)
);
INSERT INTO allow_names VALUES('telegram','alice','111','2026-12-07T04:31:32.778269+00:00');
CREATE TABLE memory_facts (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace   TEXT NOT NULL,
    scope       TEXT NOT NULL CHECK (scope IN ('user', 'chat')),
    owner       TEXT NOT NULL,
    fact        TEXT NOT NULL,
    source      TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
, author TEXT NOT NULL DEFAULT '');
INSERT INTO memory_facts VALUES(1,'default','user','cli:local','I prefer metric units','remember','2026-12-07T04:31:31.947869+00:00','2026-12-07T04:31:31.947869+00:00','cli:local');
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
CREATE TABLE pairing_holds (
    channel     TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    reason      TEXT NOT NULL,
    held_until  TEXT NOT NULL,
    PRIMARY KEY (channel, user_id)
);
CREATE TABLE cluster_replicas (
    replica TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    seen_ms BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL,
    web TEXT NOT NULL DEFAULT ''
);
CREATE TABLE cluster_leases (
    name TEXT PRIMARY KEY,
    owner TEXT,
    token BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL
);
CREATE TABLE admin_tokens (
    token_hash  TEXT PRIMARY KEY,
    kind        TEXT NOT NULL,
    admin       TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    used_at     TEXT
);
CREATE TABLE previews (
    turn        TEXT PRIMARY KEY,
    channel     TEXT NOT NULL,
    chat_id     TEXT NOT NULL,
    message_id  TEXT NOT NULL,
    final       INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL
);
INSERT INTO previews VALUES('cli:local:bbca14878e98','cli','local','preview-1',1,'2026-12-07T04:31:31.321338+00:00');
INSERT INTO previews VALUES('cli:local:483c9e6890cf','cli','local','preview-2',1,'2026-12-07T04:31:31.376797+00:00');
INSERT INTO previews VALUES('cli:local:0b162b8b743b','cli','local','preview-3',1,'2026-12-07T04:31:31.445027+00:00');
INSERT INTO previews VALUES('cli:local:576b2dd893f1','cli','local','preview-4',1,'2026-12-07T04:31:31.814732+00:00');
INSERT INTO previews VALUES('cli:local:6afb0d6d0566','cli','local','preview-5',1,'2026-12-07T04:31:31.885426+00:00');
INSERT INTO previews VALUES('cli:local:35d005c75628','cli','local','preview-6',1,'2026-12-07T04:31:31.947828+00:00');
INSERT INTO previews VALUES('cli:local:e76954700760','cli','local','preview-7',1,'2026-12-07T04:31:32.049694+00:00');
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
CREATE INDEX cluster_leases_owner ON cluster_leases (owner);
CREATE INDEX admin_tokens_by_kind ON admin_tokens (kind, expires_at);
CREATE INDEX previews_by_age ON previews (created_at);
COMMIT;
PRAGMA user_version = 18;
