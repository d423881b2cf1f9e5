-- The bot.db that commit 2e1f57c (schema version 4) left, made by its own code:
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
INSERT INTO sessions VALUES(1,'cli','local','','2026-12-07T04:25:00.368242+00:00','2026-12-07T04:25:06.225471+00:00');
CREATE TABLE messages (
        id           INTEGER PRIMARY KEY,
        session_id   INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        role         TEXT NOT NULL,
        content      TEXT,
        tool_calls   TEXT,
        tool_call_id TEXT,
        name         TEXT,
        created_at   TEXT NOT NULL
    );
INSERT INTO messages VALUES(1,1,'user','hello, my name is Ada',NULL,NULL,NULL,'2026-12-07T04:25:00.445809+00:00');
INSERT INTO messages VALUES(2,1,'assistant',NULL,'[{"id": "call_fake1", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"echo: hello, my name is Ada\"}"}}]',NULL,NULL,'2026-12-07T04:25:05.873756+00:00');
INSERT INTO messages VALUES(3,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake1','final_result','2026-12-07T04:25:05.873756+00:00');
INSERT INTO messages VALUES(4,1,'user','REMIND_ONCE 2030-01-01T09:00:00+00:00|dentist appointment',NULL,NULL,NULL,'2026-12-07T04:25:05.879669+00:00');
INSERT INTO messages VALUES(5,1,'assistant',NULL,'[{"id": "call_fake2", "type": "function", "function": {"name": "create_reminder", "arguments": "{\"content\": \"dentist appointment\", \"time\": \"2030-01-01T09:00:00+00:00\"}"}}]',NULL,NULL,'2026-12-07T04:25:05.894661+00:00');
INSERT INTO messages VALUES(6,1,'tool',replace('[tool output: create_reminder]\nCreated #1 reminder at Tue 2030-01-01 09:00 UTC: dentist appointment','\n',char(10)),NULL,'call_fake2','create_reminder','2026-12-07T04:25:05.894661+00:00');
INSERT INTO messages VALUES(7,1,'assistant',NULL,'[{"id": "call_fake3", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: create_reminder]\\nCreated #1 reminder at Tue 2030-01-01 09:00 UTC: \"}"}}]',NULL,NULL,'2026-12-07T04:25:05.903278+00:00');
INSERT INTO messages VALUES(8,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake3','final_result','2026-12-07T04:25:05.903278+00:00');
INSERT INTO messages VALUES(9,1,'user','REMIND_CRON 0 9 * * 1|weekly standup',NULL,NULL,NULL,'2026-12-07T04:25:05.905979+00:00');
INSERT INTO messages VALUES(10,1,'assistant',NULL,'[{"id": "call_fake4", "type": "function", "function": {"name": "create_reminder", "arguments": "{\"content\": \"weekly standup\", \"time\": \"in 1 minute\", \"recurrence\": \"0 9 * * 1\"}"}}]',NULL,NULL,'2026-12-07T04:25:06.118020+00:00');
INSERT INTO messages VALUES(11,1,'tool',replace('[tool output: create_reminder]\nCreated #2 reminder at Tue 2026-12-08 09:00 UTC, repeats ''0 9 * * 1'': weekly standup','\n',char(10)),NULL,'call_fake4','create_reminder','2026-12-07T04:25:06.118020+00:00');
INSERT INTO messages VALUES(12,1,'assistant',NULL,'[{"id": "call_fake5", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: create_reminder]\\nCreated #2 reminder at Tue 2026-12-08 09:00 UTC, \"}"}}]',NULL,NULL,'2026-12-07T04:25:06.127699+00:00');
INSERT INTO messages VALUES(13,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake5','final_result','2026-12-07T04:25:06.127699+00:00');
INSERT INTO messages VALUES(14,1,'user','REMIND_ONCE in 3 minutes|soon thing',NULL,NULL,NULL,'2026-12-07T04:25:06.130471+00:00');
INSERT INTO messages VALUES(15,1,'assistant',NULL,'[{"id": "call_fake6", "type": "function", "function": {"name": "create_reminder", "arguments": "{\"content\": \"soon thing\", \"time\": \"in 3 minutes\"}"}}]',NULL,NULL,'2026-12-07T04:25:06.142452+00:00');
INSERT INTO messages VALUES(16,1,'tool',replace('[tool output: create_reminder]\nCreated #3 reminder at Mon 2026-12-07 04:28 UTC: soon thing','\n',char(10)),NULL,'call_fake6','create_reminder','2026-12-07T04:25:06.142452+00:00');
INSERT INTO messages VALUES(17,1,'assistant',NULL,'[{"id": "call_fake7", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: create_reminder]\\nCreated #3 reminder at Mon 2026-12-07 04:28 UTC: \"}"}}]',NULL,NULL,'2026-12-07T04:25:06.151058+00:00');
INSERT INTO messages VALUES(18,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake7','final_result','2026-12-07T04:25:06.151058+00:00');
INSERT INTO messages VALUES(19,1,'user','FOLLOWUP 2030-06-01T07:00:00+00:00 check the weather and tell me about an umbrella',NULL,NULL,NULL,'2026-12-07T04:25:06.154594+00:00');
INSERT INTO messages VALUES(20,1,'assistant',NULL,'[{"id": "call_fake8", "type": "function", "function": {"name": "schedule_followup", "arguments": "{\"prompt\": \"check the weather and tell me about an umbrella\", \"time\": \"2030-06-01T07:00:00+00:00\"}"}}]',NULL,NULL,'2026-12-07T04:25:06.170869+00:00');
INSERT INTO messages VALUES(21,1,'tool',replace('[tool output: schedule_followup]\nCreated #4 follow-up at Sat 2030-06-01 07:00 UTC: check the weather and tell me about an umbrella','\n',char(10)),NULL,'call_fake8','schedule_followup','2026-12-07T04:25:06.170869+00:00');
INSERT INTO messages VALUES(22,1,'assistant',NULL,'[{"id": "call_fake9", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: schedule_followup]\\nCreated #4 follow-up at Sat 2030-06-01 07:00 UT\"}"}}]',NULL,NULL,'2026-12-07T04:25:06.178665+00:00');
INSERT INTO messages VALUES(23,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake9','final_result','2026-12-07T04:25:06.178665+00:00');
INSERT INTO messages VALUES(24,1,'user','REMEMBER I prefer metric units',NULL,NULL,NULL,'2026-12-07T04:25:06.181350+00:00');
INSERT INTO messages VALUES(25,1,'assistant',NULL,'[{"id": "call_fake10", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"echo: REMEMBER I prefer metric units\"}"}}]',NULL,NULL,'2026-12-07T04:25:06.190673+00:00');
INSERT INTO messages VALUES(26,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake10','final_result','2026-12-07T04:25:06.190673+00:00');
INSERT INTO messages VALUES(27,1,'user','what did I say my name was?',NULL,NULL,NULL,'2026-12-07T04:25:06.214737+00:00');
INSERT INTO messages VALUES(28,1,'assistant',NULL,'[{"id": "call_fake11", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"echo: what did I say my name was?\"}"}}]',NULL,NULL,'2026-12-07T04:25:06.225471+00:00');
INSERT INTO messages VALUES(29,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake11','final_result','2026-12-07T04:25:06.225471+00:00');
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
INSERT INTO inbox VALUES(1,'cli','local','','c491613485cd','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "hello, my name is Ada", "kind": "user", "message_id": "c491613485cd", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:25:00.355132+00:00"}','done','2026-12-07T04:25:00.355132+00:00','2026-12-07T04:25:05.877806+00:00');
INSERT INTO inbox VALUES(2,'cli','local','','998552556ca7','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMIND_ONCE 2030-01-01T09:00:00+00:00|dentist appointment", "kind": "user", "message_id": "998552556ca7", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:25:05.878604+00:00"}','done','2026-12-07T04:25:05.878604+00:00','2026-12-07T04:25:05.904634+00:00');
INSERT INTO inbox VALUES(3,'cli','local','','9fae6e90146b','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMIND_CRON 0 9 * * 1|weekly standup", "kind": "user", "message_id": "9fae6e90146b", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:25:05.905038+00:00"}','done','2026-12-07T04:25:05.905038+00:00','2026-12-07T04:25:06.129191+00:00');
INSERT INTO inbox VALUES(4,'cli','local','','d952c22f7aad','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMIND_ONCE in 3 minutes|soon thing", "kind": "user", "message_id": "d952c22f7aad", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:25:06.129584+00:00"}','done','2026-12-07T04:25:06.129584+00:00','2026-12-07T04:25:06.152912+00:00');
INSERT INTO inbox VALUES(5,'cli','local','','77e48d5a3b23','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "FOLLOWUP 2030-06-01T07:00:00+00:00 check the weather and tell me about an umbrella", "kind": "user", "message_id": "77e48d5a3b23", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:25:06.153416+00:00"}','done','2026-12-07T04:25:06.153416+00:00','2026-12-07T04:25:06.180043+00:00');
INSERT INTO inbox VALUES(6,'cli','local','','9cfb4feac741','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMEMBER I prefer metric units", "kind": "user", "message_id": "9cfb4feac741", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:25:06.180441+00:00"}','done','2026-12-07T04:25:06.180441+00:00','2026-12-07T04:25:06.192530+00:00');
INSERT INTO inbox VALUES(7,'cli','local','','d5cffc497762','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "/timezone Europe/Paris", "kind": "user", "message_id": "d5cffc497762", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:25:06.193047+00:00"}','done','2026-12-07T04:25:06.193047+00:00','2026-12-07T04:25:06.194308+00:00');
INSERT INTO inbox VALUES(8,'cli','local','','ee2ce377d0f3','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "/remind in 2 hours take out the trash", "kind": "user", "message_id": "ee2ce377d0f3", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:25:06.194585+00:00"}','done','2026-12-07T04:25:06.194585+00:00','2026-12-07T04:25:06.212242+00:00');
INSERT INTO inbox VALUES(9,'cli','local','','1f7a048cece1','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "/reminders", "kind": "user", "message_id": "1f7a048cece1", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:25:06.212569+00:00"}','done','2026-12-07T04:25:06.212569+00:00','2026-12-07T04:25:06.213652+00:00');
INSERT INTO inbox VALUES(10,'cli','local','','b4c8633e4656','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "what did I say my name was?", "kind": "user", "message_id": "b4c8633e4656", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:25:06.213880+00:00"}','done','2026-12-07T04:25:06.213880+00:00','2026-12-07T04:25:06.227567+00:00');
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
INSERT INTO outbox VALUES(1,'msg:938e32367958','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "echo: hello, my name is Ada", "kind": "reply", "reply_to": "c491613485cd", "final": true, "attachments": [], "extras": {}, "message_id": "938e32367958", "idempotency_key": null}','sent',1,'2026-12-07T04:25:05.877404+00:00',NULL,'2026-12-07T04:25:05.877404+00:00','2026-12-07T04:25:05.878288+00:00');
INSERT INTO outbox VALUES(2,'msg:d971c8f0ae00','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: create_reminder]\nCreated #1 reminder at Tue 2030-01-01 09:00 UTC: ", "kind": "reply", "reply_to": "998552556ca7", "final": true, "attachments": [], "extras": {}, "message_id": "d971c8f0ae00", "idempotency_key": null}','sent',1,'2026-12-07T04:25:05.904375+00:00',NULL,'2026-12-07T04:25:05.904375+00:00','2026-12-07T04:25:05.904788+00:00');
INSERT INTO outbox VALUES(3,'msg:0c2ce40fdb02','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: create_reminder]\nCreated #2 reminder at Tue 2026-12-08 09:00 UTC, ", "kind": "reply", "reply_to": "9fae6e90146b", "final": true, "attachments": [], "extras": {}, "message_id": "0c2ce40fdb02", "idempotency_key": null}','sent',1,'2026-12-07T04:25:06.128915+00:00',NULL,'2026-12-07T04:25:06.128915+00:00','2026-12-07T04:25:06.129460+00:00');
INSERT INTO outbox VALUES(4,'msg:f6f8f003cb98','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: create_reminder]\nCreated #3 reminder at Mon 2026-12-07 04:28 UTC: ", "kind": "reply", "reply_to": "d952c22f7aad", "final": true, "attachments": [], "extras": {}, "message_id": "f6f8f003cb98", "idempotency_key": null}','sent',1,'2026-12-07T04:25:06.152539+00:00',NULL,'2026-12-07T04:25:06.152539+00:00','2026-12-07T04:25:06.153262+00:00');
INSERT INTO outbox VALUES(5,'msg:7aee255f4264','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: schedule_followup]\nCreated #4 follow-up at Sat 2030-06-01 07:00 UT", "kind": "reply", "reply_to": "77e48d5a3b23", "final": true, "attachments": [], "extras": {}, "message_id": "7aee255f4264", "idempotency_key": null}','sent',1,'2026-12-07T04:25:06.179787+00:00',NULL,'2026-12-07T04:25:06.179787+00:00','2026-12-07T04:25:06.180312+00:00');
INSERT INTO outbox VALUES(6,'msg:6154da8f55fc','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "echo: REMEMBER I prefer metric units", "kind": "reply", "reply_to": "9cfb4feac741", "final": true, "attachments": [], "extras": {}, "message_id": "6154da8f55fc", "idempotency_key": null}','sent',1,'2026-12-07T04:25:06.192110+00:00',NULL,'2026-12-07T04:25:06.192110+00:00','2026-12-07T04:25:06.192707+00:00');
INSERT INTO outbox VALUES(7,'msg:18a1cf124839','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "Time zone set to Europe/Paris; it is now Mon 2026-12-07 05:25 Europe/Paris.", "kind": "reply", "reply_to": "d5cffc497762", "final": true, "attachments": [], "extras": {}, "message_id": "18a1cf124839", "idempotency_key": null}','sent',1,'2026-12-07T04:25:06.194014+00:00',NULL,'2026-12-07T04:25:06.194014+00:00','2026-12-07T04:25:06.194459+00:00');
INSERT INTO outbox VALUES(8,'msg:b64a8b6b2abe','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "OK, #5 reminder at Mon 2026-12-07 07:25 Europe/Paris: take out the trash", "kind": "reply", "reply_to": "ee2ce377d0f3", "final": true, "attachments": [], "extras": {}, "message_id": "b64a8b6b2abe", "idempotency_key": null}','sent',1,'2026-12-07T04:25:06.211929+00:00',NULL,'2026-12-07T04:25:06.211929+00:00','2026-12-07T04:25:06.212403+00:00');
INSERT INTO outbox VALUES(9,'msg:2142a05c9dc2','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "Your reminders:\n#3 reminder at Mon 2026-12-07 04:28 UTC: soon thing\n#5 reminder at Mon 2026-12-07 07:25 Europe/Paris: take out the trash\n#2 reminder at Tue 2026-12-08 09:00 UTC, repeats ''0 9 * * 1'': weekly standup\n#1 reminder at Tue 2030-01-01 09:00 UTC: dentist appointment\n#4 follow-up at Sat 2030-06-01 07:00 UTC: check the weather and tell me about an umbrella", "kind": "reply", "reply_to": "1f7a048cece1", "final": true, "attachments": [], "extras": {}, "message_id": "2142a05c9dc2", "idempotency_key": null}','sent',1,'2026-12-07T04:25:06.213400+00:00',NULL,'2026-12-07T04:25:06.213400+00:00','2026-12-07T04:25:06.213846+00:00');
INSERT INTO outbox VALUES(10,'msg:65ebc3bf731e','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "echo: what did I say my name was?", "kind": "reply", "reply_to": "b4c8633e4656", "final": true, "attachments": [], "extras": {}, "message_id": "65ebc3bf731e", "idempotency_key": null}','sent',1,'2026-12-07T04:25:06.227245+00:00',NULL,'2026-12-07T04:25:06.227245+00:00','2026-12-07T04:25:06.227719+00:00');
CREATE TABLE kv (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
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
        attempts     INTEGER NOT NULL DEFAULT 0
    );
INSERT INTO reminders VALUES(1,'cli','local','','local','dentist appointment','reminder','2030-01-01T09:00:00+00:00',NULL,'UTC','active','2026-12-07T04:25:05.893709+00:00',NULL,0);
INSERT INTO reminders VALUES(2,'cli','local','','local','weekly standup','reminder','2026-12-08T09:00:00+00:00','0 9 * * 1','UTC','active','2026-12-07T04:25:06.117322+00:00',NULL,0);
INSERT INTO reminders VALUES(3,'cli','local','','local','soon thing','reminder','2026-12-07T04:28:06.140631+00:00',NULL,'UTC','active','2026-12-07T04:25:06.141879+00:00',NULL,0);
INSERT INTO reminders VALUES(4,'cli','local','','local','check the weather and tell me about an umbrella','followup','2030-06-01T07:00:00+00:00',NULL,'UTC','active','2026-12-07T04:25:06.170293+00:00',NULL,0);
INSERT INTO reminders VALUES(5,'cli','local','','local','take out the trash','reminder','2026-12-07T06:25:06.210671+00:00',NULL,'Europe/Paris','active','2026-12-07T04:25:06.211389+00:00',NULL,0);
CREATE TABLE user_settings (
        channel  TEXT NOT NULL,
        user_id  TEXT NOT NULL,
        timezone TEXT,
        PRIMARY KEY (channel, user_id)
    );
INSERT INTO user_settings VALUES('cli','local','Europe/Paris');
CREATE TABLE summaries (
        session_id  INTEGER PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        summary     TEXT NOT NULL,
        through_id  INTEGER NOT NULL,
        updated_at  TEXT NOT NULL
    );
CREATE INDEX messages_by_session ON messages (session_id, id);
CREATE INDEX inbox_pending ON inbox (status, id);
CREATE INDEX outbox_due ON outbox (status, next_attempt_at);
CREATE INDEX reminders_active ON reminders (status, next_fire_at);
CREATE INDEX reminders_by_user ON reminders (channel, user_id, status);
COMMIT;
PRAGMA user_version = 4;
