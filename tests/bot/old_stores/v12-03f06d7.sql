-- The bot.db that commit 03f06d7 (schema version 12) left, made by its own code:
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
INSERT INTO sessions VALUES(1,'cli','local','','2026-12-07T04:31:08.024920+00:00','2026-12-07T04:31:15.254759+00:00');
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
INSERT INTO messages VALUES(1,1,'user','hello, my name is Ada',NULL,NULL,NULL,'2026-12-07T04:31:08.024920+00:00','66be7c1b26d7');
INSERT INTO messages VALUES(2,1,'assistant',NULL,'[{"id": "call_fake1", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"echo: hello, my name is Ada\"}"}}]',NULL,NULL,'2026-12-07T04:31:14.531590+00:00',NULL);
INSERT INTO messages VALUES(3,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake1','final_result','2026-12-07T04:31:14.531590+00:00',NULL);
INSERT INTO messages VALUES(4,1,'user','REMIND_ONCE 2030-01-01T09:00:00+00:00|dentist appointment',NULL,NULL,NULL,'2026-12-07T04:31:14.551714+00:00','0ce79d45b978');
INSERT INTO messages VALUES(5,1,'assistant',NULL,'[{"id": "call_fake2", "type": "function", "function": {"name": "create_reminder", "arguments": "{\"content\": \"dentist appointment\", \"time\": \"2030-01-01T09:00:00+00:00\"}"}}]',NULL,NULL,'2026-12-07T04:31:14.570933+00:00',NULL);
INSERT INTO messages VALUES(6,1,'tool',replace('[tool output: create_reminder]\nCreated #1 reminder at Tue 2030-01-01 09:00 UTC: dentist appointment','\n',char(10)),NULL,'call_fake2','create_reminder','2026-12-07T04:31:14.570933+00:00',NULL);
INSERT INTO messages VALUES(7,1,'assistant',NULL,'[{"id": "call_fake3", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: create_reminder]\\nCreated #1 reminder at Tue 2030-01-01 09:00 UTC: \"}"}}]',NULL,NULL,'2026-12-07T04:31:14.580020+00:00',NULL);
INSERT INTO messages VALUES(8,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake3','final_result','2026-12-07T04:31:14.580020+00:00',NULL);
INSERT INTO messages VALUES(9,1,'user','REMIND_CRON 0 9 * * 1|weekly standup',NULL,NULL,NULL,'2026-12-07T04:31:14.582891+00:00','2ddfc3d36abe');
INSERT INTO messages VALUES(10,1,'assistant',NULL,'[{"id": "call_fake4", "type": "function", "function": {"name": "create_reminder", "arguments": "{\"content\": \"weekly standup\", \"time\": \"in 1 minute\", \"recurrence\": \"0 9 * * 1\"}"}}]',NULL,NULL,'2026-12-07T04:31:15.002340+00:00',NULL);
INSERT INTO messages VALUES(11,1,'tool',replace('[tool output: create_reminder]\nCreated #2 reminder at Tue 2026-12-08 09:00 UTC, repeats ''0 9 * * 1'': weekly standup','\n',char(10)),NULL,'call_fake4','create_reminder','2026-12-07T04:31:15.002340+00:00',NULL);
INSERT INTO messages VALUES(12,1,'assistant',NULL,'[{"id": "call_fake5", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: create_reminder]\\nCreated #2 reminder at Tue 2026-12-08 09:00 UTC, \"}"}}]',NULL,NULL,'2026-12-07T04:31:15.019383+00:00',NULL);
INSERT INTO messages VALUES(13,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake5','final_result','2026-12-07T04:31:15.019383+00:00',NULL);
INSERT INTO messages VALUES(14,1,'user','REMIND_ONCE in 3 minutes|soon thing',NULL,NULL,NULL,'2026-12-07T04:31:15.033552+00:00','c68d9920c3cd');
INSERT INTO messages VALUES(15,1,'assistant',NULL,'[{"id": "call_fake6", "type": "function", "function": {"name": "create_reminder", "arguments": "{\"content\": \"soon thing\", \"time\": \"in 3 minutes\"}"}}]',NULL,NULL,'2026-12-07T04:31:15.067906+00:00',NULL);
INSERT INTO messages VALUES(16,1,'tool',replace('[tool output: create_reminder]\nCreated #3 reminder at Mon 2026-12-07 04:34 UTC: soon thing','\n',char(10)),NULL,'call_fake6','create_reminder','2026-12-07T04:31:15.067906+00:00',NULL);
INSERT INTO messages VALUES(17,1,'assistant',NULL,'[{"id": "call_fake7", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: create_reminder]\\nCreated #3 reminder at Mon 2026-12-07 04:34 UTC: \"}"}}]',NULL,NULL,'2026-12-07T04:31:15.079743+00:00',NULL);
INSERT INTO messages VALUES(18,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake7','final_result','2026-12-07T04:31:15.079743+00:00',NULL);
INSERT INTO messages VALUES(19,1,'user','FOLLOWUP 2030-06-01T07:00:00+00:00 check the weather and tell me about an umbrella',NULL,NULL,NULL,'2026-12-07T04:31:15.082583+00:00','6fd4c827d0ea');
INSERT INTO messages VALUES(20,1,'assistant',NULL,'[{"id": "call_fake8", "type": "function", "function": {"name": "schedule_followup", "arguments": "{\"prompt\": \"check the weather and tell me about an umbrella\", \"time\": \"2030-06-01T07:00:00+00:00\"}"}}]',NULL,NULL,'2026-12-07T04:31:15.094340+00:00',NULL);
INSERT INTO messages VALUES(21,1,'tool',replace('[tool output: schedule_followup]\nCreated #4 follow-up at Sat 2030-06-01 07:00 UTC: check the weather and tell me about an umbrella','\n',char(10)),NULL,'call_fake8','schedule_followup','2026-12-07T04:31:15.094340+00:00',NULL);
INSERT INTO messages VALUES(22,1,'assistant',NULL,'[{"id": "call_fake9", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: schedule_followup]\\nCreated #4 follow-up at Sat 2030-06-01 07:00 UT\"}"}}]',NULL,NULL,'2026-12-07T04:31:15.108358+00:00',NULL);
INSERT INTO messages VALUES(23,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake9','final_result','2026-12-07T04:31:15.108358+00:00',NULL);
INSERT INTO messages VALUES(24,1,'user','REMEMBER I prefer metric units',NULL,NULL,NULL,'2026-12-07T04:31:15.121683+00:00','9267614461ac');
INSERT INTO messages VALUES(25,1,'assistant',NULL,'[{"id": "call_fake10", "type": "function", "function": {"name": "remember", "arguments": "{\"fact\": \"I prefer metric units\", \"scope\": \"user\"}"}}]',NULL,NULL,'2026-12-07T04:31:15.146541+00:00',NULL);
INSERT INTO messages VALUES(26,1,'tool',replace('[tool output: remember]\nRemembered about you: I prefer metric units','\n',char(10)),NULL,'call_fake10','remember','2026-12-07T04:31:15.146541+00:00',NULL);
INSERT INTO messages VALUES(27,1,'assistant',NULL,'[{"id": "call_fake11", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: remember]\\nRemembered about you: I prefer metric units\"}"}}]',NULL,NULL,'2026-12-07T04:31:15.163377+00:00',NULL);
INSERT INTO messages VALUES(28,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake11','final_result','2026-12-07T04:31:15.163377+00:00',NULL);
INSERT INTO messages VALUES(29,1,'user','what did I say my name was?',NULL,NULL,NULL,'2026-12-07T04:31:15.237486+00:00','0f6549e29d11');
INSERT INTO messages VALUES(30,1,'assistant',NULL,'[{"id": "call_fake12", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"echo: what did I say my name was?\"}"}}]',NULL,NULL,'2026-12-07T04:31:15.254759+00:00',NULL);
INSERT INTO messages VALUES(31,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake12','final_result','2026-12-07T04:31:15.254759+00:00',NULL);
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
INSERT INTO inbox VALUES(1,'cli','local','','66be7c1b26d7','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "hello, my name is Ada", "kind": "user", "message_id": "66be7c1b26d7", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:31:08.002390+00:00", "direct": true, "chain_depth": 0}','done','2026-12-07T04:31:08.002390+00:00','2026-12-07T04:31:14.549781+00:00',1);
INSERT INTO inbox VALUES(2,'cli','local','','0ce79d45b978','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMIND_ONCE 2030-01-01T09:00:00+00:00|dentist appointment", "kind": "user", "message_id": "0ce79d45b978", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:31:14.550329+00:00", "direct": true, "chain_depth": 0}','done','2026-12-07T04:31:14.550329+00:00','2026-12-07T04:31:14.581306+00:00',1);
INSERT INTO inbox VALUES(3,'cli','local','','2ddfc3d36abe','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMIND_CRON 0 9 * * 1|weekly standup", "kind": "user", "message_id": "2ddfc3d36abe", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:31:14.581659+00:00", "direct": true, "chain_depth": 0}','done','2026-12-07T04:31:14.581659+00:00','2026-12-07T04:31:15.020508+00:00',1);
INSERT INTO inbox VALUES(4,'cli','local','','c68d9920c3cd','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMIND_ONCE in 3 minutes|soon thing", "kind": "user", "message_id": "c68d9920c3cd", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:31:15.025060+00:00", "direct": true, "chain_depth": 0}','done','2026-12-07T04:31:15.025060+00:00','2026-12-07T04:31:15.080996+00:00',1);
INSERT INTO inbox VALUES(5,'cli','local','','6fd4c827d0ea','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "FOLLOWUP 2030-06-01T07:00:00+00:00 check the weather and tell me about an umbrella", "kind": "user", "message_id": "6fd4c827d0ea", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:31:15.081410+00:00", "direct": true, "chain_depth": 0}','done','2026-12-07T04:31:15.081410+00:00','2026-12-07T04:31:15.109696+00:00',1);
INSERT INTO inbox VALUES(6,'cli','local','','9267614461ac','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMEMBER I prefer metric units", "kind": "user", "message_id": "9267614461ac", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:31:15.110142+00:00", "direct": true, "chain_depth": 0}','done','2026-12-07T04:31:15.110142+00:00','2026-12-07T04:31:15.164492+00:00',1);
INSERT INTO inbox VALUES(7,'cli','local','','cbcd35a721c7','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "/timezone Europe/Paris", "kind": "user", "message_id": "cbcd35a721c7", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:31:15.173321+00:00", "direct": true, "chain_depth": 0}','done','2026-12-07T04:31:15.173321+00:00','2026-12-07T04:31:15.183026+00:00',1);
INSERT INTO inbox VALUES(8,'cli','local','','4534430f2477','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "/remind in 2 hours take out the trash", "kind": "user", "message_id": "4534430f2477", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:31:15.185202+00:00", "direct": true, "chain_depth": 0}','done','2026-12-07T04:31:15.185202+00:00','2026-12-07T04:31:15.226954+00:00',1);
INSERT INTO inbox VALUES(9,'cli','local','','c11c12335cb3','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "/reminders", "kind": "user", "message_id": "c11c12335cb3", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:31:15.227487+00:00", "direct": true, "chain_depth": 0}','done','2026-12-07T04:31:15.227487+00:00','2026-12-07T04:31:15.232847+00:00',1);
INSERT INTO inbox VALUES(10,'cli','local','','0f6549e29d11','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "what did I say my name was?", "kind": "user", "message_id": "0f6549e29d11", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:31:15.233365+00:00", "direct": true, "chain_depth": 0}','done','2026-12-07T04:31:15.233365+00:00','2026-12-07T04:31:15.256156+00:00',1);
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
INSERT INTO outbox VALUES(1,'reply:cli:local:66be7c1b26d7','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "echo: hello, my name is Ada", "kind": "reply", "reply_to": "66be7c1b26d7", "final": true, "attachments": [], "extras": {}, "message_id": "14a86b6ad83b", "idempotency_key": "reply:cli:local:66be7c1b26d7"}','sent',1,'2026-12-07T04:31:14.549011+00:00',NULL,'2026-12-07T04:31:14.549011+00:00','2026-12-07T04:31:14.550587+00:00','95f3a9ae8d75');
INSERT INTO outbox VALUES(2,'reply:cli:local:0ce79d45b978','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: create_reminder]\nCreated #1 reminder at Tue 2030-01-01 09:00 UTC: ", "kind": "reply", "reply_to": "0ce79d45b978", "final": true, "attachments": [], "extras": {}, "message_id": "d86ddbfc60fa", "idempotency_key": "reply:cli:local:0ce79d45b978"}','sent',1,'2026-12-07T04:31:14.580519+00:00',NULL,'2026-12-07T04:31:14.580519+00:00','2026-12-07T04:31:14.581754+00:00','95f3a9ae8d75');
INSERT INTO outbox VALUES(3,'reply:cli:local:2ddfc3d36abe','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: create_reminder]\nCreated #2 reminder at Tue 2026-12-08 09:00 UTC, ", "kind": "reply", "reply_to": "2ddfc3d36abe", "final": true, "attachments": [], "extras": {}, "message_id": "15084fe6f879", "idempotency_key": "reply:cli:local:2ddfc3d36abe"}','sent',1,'2026-12-07T04:31:15.019767+00:00',NULL,'2026-12-07T04:31:15.019767+00:00','2026-12-07T04:31:15.025532+00:00','95f3a9ae8d75');
INSERT INTO outbox VALUES(4,'reply:cli:local:c68d9920c3cd','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: create_reminder]\nCreated #3 reminder at Mon 2026-12-07 04:34 UTC: ", "kind": "reply", "reply_to": "c68d9920c3cd", "final": true, "attachments": [], "extras": {}, "message_id": "01b60bd21b0c", "idempotency_key": "reply:cli:local:c68d9920c3cd"}','sent',1,'2026-12-07T04:31:15.080131+00:00',NULL,'2026-12-07T04:31:15.080131+00:00','2026-12-07T04:31:15.081537+00:00','95f3a9ae8d75');
INSERT INTO outbox VALUES(5,'reply:cli:local:6fd4c827d0ea','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: schedule_followup]\nCreated #4 follow-up at Sat 2030-06-01 07:00 UT", "kind": "reply", "reply_to": "6fd4c827d0ea", "final": true, "attachments": [], "extras": {}, "message_id": "8704739a1093", "idempotency_key": "reply:cli:local:6fd4c827d0ea"}','sent',1,'2026-12-07T04:31:15.108820+00:00',NULL,'2026-12-07T04:31:15.108820+00:00','2026-12-07T04:31:15.112955+00:00','95f3a9ae8d75');
INSERT INTO outbox VALUES(6,'reply:cli:local:9267614461ac','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: remember]\nRemembered about you: I prefer metric units", "kind": "reply", "reply_to": "9267614461ac", "final": true, "attachments": [], "extras": {}, "message_id": "5d8515cc4381", "idempotency_key": "reply:cli:local:9267614461ac"}','sent',1,'2026-12-07T04:31:15.163760+00:00',NULL,'2026-12-07T04:31:15.163760+00:00','2026-12-07T04:31:15.173493+00:00','95f3a9ae8d75');
INSERT INTO outbox VALUES(7,'reply:cli:local:cbcd35a721c7','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "Time zone set to Europe/Paris; it is now Mon 2026-12-07 05:31 Europe/Paris.", "kind": "reply", "reply_to": "cbcd35a721c7", "final": true, "attachments": [], "extras": {}, "message_id": "ec2d97cb583a", "idempotency_key": "reply:cli:local:cbcd35a721c7"}','sent',1,'2026-12-07T04:31:15.182724+00:00',NULL,'2026-12-07T04:31:15.182724+00:00','2026-12-07T04:31:15.185325+00:00','95f3a9ae8d75');
INSERT INTO outbox VALUES(8,'reply:cli:local:4534430f2477','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "OK, #5 reminder at Mon 2026-12-07 07:31 Europe/Paris: take out the trash", "kind": "reply", "reply_to": "4534430f2477", "final": true, "attachments": [], "extras": {}, "message_id": "2e394f455610", "idempotency_key": "reply:cli:local:4534430f2477"}','sent',1,'2026-12-07T04:31:15.226732+00:00',NULL,'2026-12-07T04:31:15.226732+00:00','2026-12-07T04:31:15.227598+00:00','95f3a9ae8d75');
INSERT INTO outbox VALUES(9,'reply:cli:local:c11c12335cb3','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "Your reminders:\n#3 reminder at Mon 2026-12-07 04:34 UTC: soon thing\n#5 reminder at Mon 2026-12-07 07:31 Europe/Paris: take out the trash\n#2 reminder at Tue 2026-12-08 09:00 UTC, repeats ''0 9 * * 1'': weekly standup\n#1 reminder at Tue 2030-01-01 09:00 UTC: dentist appointment\n#4 follow-up at Sat 2030-06-01 07:00 UTC: check the weather and tell me about an umbrella", "kind": "reply", "reply_to": "c11c12335cb3", "final": true, "attachments": [], "extras": {}, "message_id": "a34931e49d0b", "idempotency_key": "reply:cli:local:c11c12335cb3"}','sent',1,'2026-12-07T04:31:15.232656+00:00',NULL,'2026-12-07T04:31:15.232656+00:00','2026-12-07T04:31:15.233464+00:00','95f3a9ae8d75');
INSERT INTO outbox VALUES(10,'reply:cli:local:0f6549e29d11','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "echo: what did I say my name was?", "kind": "reply", "reply_to": "0f6549e29d11", "final": true, "attachments": [], "extras": {}, "message_id": "c37632d20a92", "idempotency_key": "reply:cli:local:0f6549e29d11"}','sent',1,'2026-12-07T04:31:15.255205+00:00',NULL,'2026-12-07T04:31:15.255205+00:00','2026-12-07T04:31:15.261209+00:00','95f3a9ae8d75');
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
, workspace TEXT NOT NULL DEFAULT 'default', chain_depth INTEGER NOT NULL DEFAULT 0);
INSERT INTO reminders VALUES(1,'cli','local','','local','dentist appointment','reminder','2030-01-01T09:00:00+00:00',NULL,'UTC','active','2026-12-07T04:31:14.569455+00:00',NULL,0,'cli:local:0ce79d45b978#reminder1','default',0);
INSERT INTO reminders VALUES(2,'cli','local','','local','weekly standup','reminder','2026-12-08T09:00:00+00:00','0 9 * * 1','UTC','active','2026-12-07T04:31:15.001828+00:00',NULL,0,'cli:local:2ddfc3d36abe#reminder1','default',0);
INSERT INTO reminders VALUES(3,'cli','local','','local','soon thing','reminder','2026-12-07T04:34:15.065289+00:00',NULL,'UTC','active','2026-12-07T04:31:15.066501+00:00',NULL,0,'cli:local:c68d9920c3cd#reminder1','default',0);
INSERT INTO reminders VALUES(4,'cli','local','','local','check the weather and tell me about an umbrella','followup','2030-06-01T07:00:00+00:00',NULL,'UTC','active','2026-12-07T04:31:15.093211+00:00',NULL,0,'cli:local:6fd4c827d0ea#reminder1','default',1);
INSERT INTO reminders VALUES(5,'cli','local','','local','take out the trash','reminder','2026-12-07T06:31:15.225118+00:00',NULL,'Europe/Paris','active','2026-12-07T04:31:15.226239+00:00',NULL,0,'cli:local:4534430f2477#command','default',0);
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
INSERT INTO persona_versions VALUES(1,'default','AGENTS.md',1,replace('# AGENTS.md: how this assistant works\n\nEdit this file to give the assistant standing instructions for this workspace\n(house rules, tone for replies, what to do and not to do). It is read into every\nconversation. While it is unchanged from this template it is ignored.\n','\n',char(10)),'306d1768e5eb092ee1fac6625c45d8a4a873f5dd4770aee3315043332e59f602','template','template','2026-12-07T04:31:08.022417+00:00');
INSERT INTO persona_versions VALUES(2,'default','SOUL.md',1,replace('# SOUL.md: who this assistant is\n\nDescribe the assistant''s persona here: its name, its character, how it speaks.\nIt is read into every conversation. While it is unchanged from this template it is ignored.\n','\n',char(10)),'f533c900b219511c4d18f71fa9a18edb15f53fe3ee0999562890dda64d78073a','template','template','2026-12-07T04:31:08.023438+00:00');
INSERT INTO persona_versions VALUES(3,'default','USER.md',1,replace('# USER.md: who the assistant works for\n\nWrite what the assistant should know about its users: names, preferences, where\nthey live, languages. It is read into every conversation. While it is unchanged\nfrom this template it is ignored.\n','\n',char(10)),'11bb93bf1d3ef097faf7d3df240f1c1282ca26cb4a2e552c51a2f36f2a3dc612','template','template','2026-12-07T04:31:08.024273+00:00');
INSERT INTO persona_versions VALUES(4,'default','SOUL.md',2,replace('You are a terse pirate.\n','\n',char(10)),'55d97f1b2da4409acf890c30e6ceb1d9ed6a0b417c5ff751f103d791dcf832d2','cli:root','cli','2026-12-07T04:31:36.817086+00:00');
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
INSERT INTO pairing_requests VALUES('ABCD2345','telegram','111','user111','111','','2026-12-07T04:31:16.130471+00:00','2036-12-04T04:31:16.130471+00:00');
CREATE TABLE approved_users (
    channel     TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    user_name   TEXT NOT NULL DEFAULT '',
    approved_by TEXT NOT NULL,
    approved_at TEXT NOT NULL,
    PRIMARY KEY (channel, user_id)
);
INSERT INTO approved_users VALUES('telegram','222','user222','telegram:999','2026-12-07T04:31:16.130471+00:00');
CREATE TABLE allow_names (
    channel     TEXT NOT NULL,
    name        TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    bound_at    TEXT NOT NULL,
    PRIMARY KEY (channel, name)
);
INSERT INTO allow_names VALUES('telegram','alice','111','2026-12-07T04:31:16.130471+00:00');
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
INSERT INTO memory_facts VALUES(1,'default','user','cli:local','I prefer metric units','remember','2026-12-07T04:31:15.145397+00:00','2026-12-07T04:31:15.145397+00:00','cli:local');
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
PRAGMA user_version = 12;
