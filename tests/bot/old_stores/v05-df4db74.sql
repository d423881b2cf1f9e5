-- The bot.db that commit df4db74 (schema version 5) left, made by its own code:
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
INSERT INTO sessions VALUES(1,'cli','local','','2026-12-07T04:25:09.837944+00:00','2026-12-07T04:25:13.755437+00:00');
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
INSERT INTO messages VALUES(1,1,'user','hello, my name is Ada',NULL,NULL,NULL,'2026-12-07T04:25:09.838825+00:00','1cd77c2b0d80');
INSERT INTO messages VALUES(2,1,'assistant',NULL,'[{"id": "call_fake1", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"echo: hello, my name is Ada\"}"}}]',NULL,NULL,'2026-12-07T04:25:13.449550+00:00',NULL);
INSERT INTO messages VALUES(3,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake1','final_result','2026-12-07T04:25:13.449550+00:00',NULL);
INSERT INTO messages VALUES(4,1,'user','REMIND_ONCE 2030-01-01T09:00:00+00:00|dentist appointment',NULL,NULL,NULL,'2026-12-07T04:25:13.456931+00:00','dc00a2918c17');
INSERT INTO messages VALUES(5,1,'assistant',NULL,'[{"id": "call_fake2", "type": "function", "function": {"name": "create_reminder", "arguments": "{\"content\": \"dentist appointment\", \"time\": \"2030-01-01T09:00:00+00:00\"}"}}]',NULL,NULL,'2026-12-07T04:25:13.470986+00:00',NULL);
INSERT INTO messages VALUES(6,1,'tool',replace('[tool output: create_reminder]\nCreated #1 reminder at Tue 2030-01-01 09:00 UTC: dentist appointment','\n',char(10)),NULL,'call_fake2','create_reminder','2026-12-07T04:25:13.470986+00:00',NULL);
INSERT INTO messages VALUES(7,1,'assistant',NULL,'[{"id": "call_fake3", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: create_reminder]\\nCreated #1 reminder at Tue 2030-01-01 09:00 UTC: \"}"}}]',NULL,NULL,'2026-12-07T04:25:13.480125+00:00',NULL);
INSERT INTO messages VALUES(8,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake3','final_result','2026-12-07T04:25:13.480125+00:00',NULL);
INSERT INTO messages VALUES(9,1,'user','REMIND_CRON 0 9 * * 1|weekly standup',NULL,NULL,NULL,'2026-12-07T04:25:13.484848+00:00','f9d26bfd31ca');
INSERT INTO messages VALUES(10,1,'assistant',NULL,'[{"id": "call_fake4", "type": "function", "function": {"name": "create_reminder", "arguments": "{\"content\": \"weekly standup\", \"time\": \"in 1 minute\", \"recurrence\": \"0 9 * * 1\"}"}}]',NULL,NULL,'2026-12-07T04:25:13.638360+00:00',NULL);
INSERT INTO messages VALUES(11,1,'tool',replace('[tool output: create_reminder]\nCreated #2 reminder at Tue 2026-12-08 09:00 UTC, repeats ''0 9 * * 1'': weekly standup','\n',char(10)),NULL,'call_fake4','create_reminder','2026-12-07T04:25:13.638360+00:00',NULL);
INSERT INTO messages VALUES(12,1,'assistant',NULL,'[{"id": "call_fake5", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: create_reminder]\\nCreated #2 reminder at Tue 2026-12-08 09:00 UTC, \"}"}}]',NULL,NULL,'2026-12-07T04:25:13.647202+00:00',NULL);
INSERT INTO messages VALUES(13,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake5','final_result','2026-12-07T04:25:13.647202+00:00',NULL);
INSERT INTO messages VALUES(14,1,'user','REMIND_ONCE in 3 minutes|soon thing',NULL,NULL,NULL,'2026-12-07T04:25:13.652155+00:00','a243a4ca683f');
INSERT INTO messages VALUES(15,1,'assistant',NULL,'[{"id": "call_fake6", "type": "function", "function": {"name": "create_reminder", "arguments": "{\"content\": \"soon thing\", \"time\": \"in 3 minutes\"}"}}]',NULL,NULL,'2026-12-07T04:25:13.671858+00:00',NULL);
INSERT INTO messages VALUES(16,1,'tool',replace('[tool output: create_reminder]\nCreated #3 reminder at Mon 2026-12-07 04:28 UTC: soon thing','\n',char(10)),NULL,'call_fake6','create_reminder','2026-12-07T04:25:13.671858+00:00',NULL);
INSERT INTO messages VALUES(17,1,'assistant',NULL,'[{"id": "call_fake7", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: create_reminder]\\nCreated #3 reminder at Mon 2026-12-07 04:28 UTC: \"}"}}]',NULL,NULL,'2026-12-07T04:25:13.680192+00:00',NULL);
INSERT INTO messages VALUES(18,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake7','final_result','2026-12-07T04:25:13.680192+00:00',NULL);
INSERT INTO messages VALUES(19,1,'user','FOLLOWUP 2030-06-01T07:00:00+00:00 check the weather and tell me about an umbrella',NULL,NULL,NULL,'2026-12-07T04:25:13.686571+00:00','77907e1b46ed');
INSERT INTO messages VALUES(20,1,'assistant',NULL,'[{"id": "call_fake8", "type": "function", "function": {"name": "schedule_followup", "arguments": "{\"prompt\": \"check the weather and tell me about an umbrella\", \"time\": \"2030-06-01T07:00:00+00:00\"}"}}]',NULL,NULL,'2026-12-07T04:25:13.698529+00:00',NULL);
INSERT INTO messages VALUES(21,1,'tool',replace('[tool output: schedule_followup]\nCreated #4 follow-up at Sat 2030-06-01 07:00 UTC: check the weather and tell me about an umbrella','\n',char(10)),NULL,'call_fake8','schedule_followup','2026-12-07T04:25:13.698529+00:00',NULL);
INSERT INTO messages VALUES(22,1,'assistant',NULL,'[{"id": "call_fake9", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: schedule_followup]\\nCreated #4 follow-up at Sat 2030-06-01 07:00 UT\"}"}}]',NULL,NULL,'2026-12-07T04:25:13.708269+00:00',NULL);
INSERT INTO messages VALUES(23,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake9','final_result','2026-12-07T04:25:13.708269+00:00',NULL);
INSERT INTO messages VALUES(24,1,'user','REMEMBER I prefer metric units',NULL,NULL,NULL,'2026-12-07T04:25:13.714030+00:00','835d6b851256');
INSERT INTO messages VALUES(25,1,'assistant',NULL,'[{"id": "call_fake10", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"echo: REMEMBER I prefer metric units\"}"}}]',NULL,NULL,'2026-12-07T04:25:13.724656+00:00',NULL);
INSERT INTO messages VALUES(26,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake10','final_result','2026-12-07T04:25:13.724656+00:00',NULL);
INSERT INTO messages VALUES(27,1,'user','what did I say my name was?',NULL,NULL,NULL,'2026-12-07T04:25:13.747147+00:00','5d87d5852aac');
INSERT INTO messages VALUES(28,1,'assistant',NULL,'[{"id": "call_fake11", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"echo: what did I say my name was?\"}"}}]',NULL,NULL,'2026-12-07T04:25:13.755437+00:00',NULL);
INSERT INTO messages VALUES(29,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake11','final_result','2026-12-07T04:25:13.755437+00:00',NULL);
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
INSERT INTO inbox VALUES(1,'cli','local','','1cd77c2b0d80','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "hello, my name is Ada", "kind": "user", "message_id": "1cd77c2b0d80", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:25:09.836046+00:00"}','done','2026-12-07T04:25:09.836046+00:00','2026-12-07T04:25:13.455170+00:00');
INSERT INTO inbox VALUES(2,'cli','local','','dc00a2918c17','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMIND_ONCE 2030-01-01T09:00:00+00:00|dentist appointment", "kind": "user", "message_id": "dc00a2918c17", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:25:13.455775+00:00"}','done','2026-12-07T04:25:13.455775+00:00','2026-12-07T04:25:13.482241+00:00');
INSERT INTO inbox VALUES(3,'cli','local','','f9d26bfd31ca','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMIND_CRON 0 9 * * 1|weekly standup", "kind": "user", "message_id": "f9d26bfd31ca", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:25:13.482419+00:00"}','done','2026-12-07T04:25:13.482419+00:00','2026-12-07T04:25:13.649125+00:00');
INSERT INTO inbox VALUES(4,'cli','local','','a243a4ca683f','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMIND_ONCE in 3 minutes|soon thing", "kind": "user", "message_id": "a243a4ca683f", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:25:13.649299+00:00"}','done','2026-12-07T04:25:13.649299+00:00','2026-12-07T04:25:13.681911+00:00');
INSERT INTO inbox VALUES(5,'cli','local','','77907e1b46ed','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "FOLLOWUP 2030-06-01T07:00:00+00:00 check the weather and tell me about an umbrella", "kind": "user", "message_id": "77907e1b46ed", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:25:13.682049+00:00"}','done','2026-12-07T04:25:13.682049+00:00','2026-12-07T04:25:13.710053+00:00');
INSERT INTO inbox VALUES(6,'cli','local','','835d6b851256','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMEMBER I prefer metric units", "kind": "user", "message_id": "835d6b851256", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:25:13.710208+00:00"}','done','2026-12-07T04:25:13.710208+00:00','2026-12-07T04:25:13.728063+00:00');
INSERT INTO inbox VALUES(7,'cli','local','','1e07136f6687','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "/timezone Europe/Paris", "kind": "user", "message_id": "1e07136f6687", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:25:13.728225+00:00"}','done','2026-12-07T04:25:13.728225+00:00','2026-12-07T04:25:13.729691+00:00');
INSERT INTO inbox VALUES(8,'cli','local','','35312be32733','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "/remind in 2 hours take out the trash", "kind": "user", "message_id": "35312be32733", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:25:13.729963+00:00"}','done','2026-12-07T04:25:13.729963+00:00','2026-12-07T04:25:13.744559+00:00');
INSERT INTO inbox VALUES(9,'cli','local','','2c95922a9d71','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "/reminders", "kind": "user", "message_id": "2c95922a9d71", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:25:13.744936+00:00"}','done','2026-12-07T04:25:13.744936+00:00','2026-12-07T04:25:13.746010+00:00');
INSERT INTO inbox VALUES(10,'cli','local','','5d87d5852aac','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "what did I say my name was?", "kind": "user", "message_id": "5d87d5852aac", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:25:13.746230+00:00"}','done','2026-12-07T04:25:13.746230+00:00','2026-12-07T04:25:13.757060+00:00');
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
INSERT INTO outbox VALUES(1,'msg:858250c3835a','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "echo: hello, my name is Ada", "kind": "reply", "reply_to": "1cd77c2b0d80", "final": true, "attachments": [], "extras": {}, "message_id": "858250c3835a", "idempotency_key": null}','sent',1,'2026-12-07T04:25:13.454682+00:00',NULL,'2026-12-07T04:25:13.454682+00:00','2026-12-07T04:25:13.455881+00:00');
INSERT INTO outbox VALUES(2,'msg:7b8d324b5cce','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: create_reminder]\nCreated #1 reminder at Tue 2030-01-01 09:00 UTC: ", "kind": "reply", "reply_to": "dc00a2918c17", "final": true, "attachments": [], "extras": {}, "message_id": "7b8d324b5cce", "idempotency_key": null}','sent',1,'2026-12-07T04:25:13.481782+00:00',NULL,'2026-12-07T04:25:13.481782+00:00','2026-12-07T04:25:13.482506+00:00');
INSERT INTO outbox VALUES(3,'msg:5d429e69d725','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: create_reminder]\nCreated #2 reminder at Tue 2026-12-08 09:00 UTC, ", "kind": "reply", "reply_to": "f9d26bfd31ca", "final": true, "attachments": [], "extras": {}, "message_id": "5d429e69d725", "idempotency_key": null}','sent',1,'2026-12-07T04:25:13.648596+00:00',NULL,'2026-12-07T04:25:13.648596+00:00','2026-12-07T04:25:13.649391+00:00');
INSERT INTO outbox VALUES(4,'msg:e258b5a5d985','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: create_reminder]\nCreated #3 reminder at Mon 2026-12-07 04:28 UTC: ", "kind": "reply", "reply_to": "a243a4ca683f", "final": true, "attachments": [], "extras": {}, "message_id": "e258b5a5d985", "idempotency_key": null}','sent',1,'2026-12-07T04:25:13.681548+00:00',NULL,'2026-12-07T04:25:13.681548+00:00','2026-12-07T04:25:13.682137+00:00');
INSERT INTO outbox VALUES(5,'msg:5e169d9736e2','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: schedule_followup]\nCreated #4 follow-up at Sat 2030-06-01 07:00 UT", "kind": "reply", "reply_to": "77907e1b46ed", "final": true, "attachments": [], "extras": {}, "message_id": "5e169d9736e2", "idempotency_key": null}','sent',1,'2026-12-07T04:25:13.709668+00:00',NULL,'2026-12-07T04:25:13.709668+00:00','2026-12-07T04:25:13.710293+00:00');
INSERT INTO outbox VALUES(6,'msg:fb7b3a4275b3','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "echo: REMEMBER I prefer metric units", "kind": "reply", "reply_to": "835d6b851256", "final": true, "attachments": [], "extras": {}, "message_id": "fb7b3a4275b3", "idempotency_key": null}','sent',1,'2026-12-07T04:25:13.727716+00:00',NULL,'2026-12-07T04:25:13.727716+00:00','2026-12-07T04:25:13.728311+00:00');
INSERT INTO outbox VALUES(7,'msg:980636f52a38','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "Time zone set to Europe/Paris; it is now Mon 2026-12-07 05:25 Europe/Paris.", "kind": "reply", "reply_to": "1e07136f6687", "final": true, "attachments": [], "extras": {}, "message_id": "980636f52a38", "idempotency_key": null}','sent',1,'2026-12-07T04:25:13.729349+00:00',NULL,'2026-12-07T04:25:13.729349+00:00','2026-12-07T04:25:13.730044+00:00');
INSERT INTO outbox VALUES(8,'msg:8179aa9f9a28','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "OK, #5 reminder at Mon 2026-12-07 07:25 Europe/Paris: take out the trash", "kind": "reply", "reply_to": "35312be32733", "final": true, "attachments": [], "extras": {}, "message_id": "8179aa9f9a28", "idempotency_key": null}','sent',1,'2026-12-07T04:25:13.744272+00:00',NULL,'2026-12-07T04:25:13.744272+00:00','2026-12-07T04:25:13.745022+00:00');
INSERT INTO outbox VALUES(9,'msg:bd3e44ac2bac','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "Your reminders:\n#3 reminder at Mon 2026-12-07 04:28 UTC: soon thing\n#5 reminder at Mon 2026-12-07 07:25 Europe/Paris: take out the trash\n#2 reminder at Tue 2026-12-08 09:00 UTC, repeats ''0 9 * * 1'': weekly standup\n#1 reminder at Tue 2030-01-01 09:00 UTC: dentist appointment\n#4 follow-up at Sat 2030-06-01 07:00 UTC: check the weather and tell me about an umbrella", "kind": "reply", "reply_to": "2c95922a9d71", "final": true, "attachments": [], "extras": {}, "message_id": "bd3e44ac2bac", "idempotency_key": null}','sent',1,'2026-12-07T04:25:13.745767+00:00',NULL,'2026-12-07T04:25:13.745767+00:00','2026-12-07T04:25:13.746297+00:00');
INSERT INTO outbox VALUES(10,'msg:7f64049268f6','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "echo: what did I say my name was?", "kind": "reply", "reply_to": "5d87d5852aac", "final": true, "attachments": [], "extras": {}, "message_id": "7f64049268f6", "idempotency_key": null}','sent',1,'2026-12-07T04:25:13.756711+00:00',NULL,'2026-12-07T04:25:13.756711+00:00','2026-12-07T04:25:13.757351+00:00');
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
        attempts     INTEGER NOT NULL DEFAULT 0,
        source       TEXT
    );
INSERT INTO reminders VALUES(1,'cli','local','','local','dentist appointment','reminder','2030-01-01T09:00:00+00:00',NULL,'UTC','active','2026-12-07T04:25:13.470406+00:00',NULL,0,'cli:local:dc00a2918c17#reminder1');
INSERT INTO reminders VALUES(2,'cli','local','','local','weekly standup','reminder','2026-12-08T09:00:00+00:00','0 9 * * 1','UTC','active','2026-12-07T04:25:13.637636+00:00',NULL,0,'cli:local:f9d26bfd31ca#reminder1');
INSERT INTO reminders VALUES(3,'cli','local','','local','soon thing','reminder','2026-12-07T04:28:13.669804+00:00',NULL,'UTC','active','2026-12-07T04:25:13.671106+00:00',NULL,0,'cli:local:a243a4ca683f#reminder1');
INSERT INTO reminders VALUES(4,'cli','local','','local','check the weather and tell me about an umbrella','followup','2030-06-01T07:00:00+00:00',NULL,'UTC','active','2026-12-07T04:25:13.697837+00:00',NULL,0,'cli:local:77907e1b46ed#reminder1');
INSERT INTO reminders VALUES(5,'cli','local','','local','take out the trash','reminder','2026-12-07T06:25:13.743198+00:00',NULL,'Europe/Paris','active','2026-12-07T04:25:13.743888+00:00',NULL,0,'cli:local:35312be32733#command');
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
CREATE UNIQUE INDEX reminders_by_source ON reminders (source);
CREATE INDEX reminders_active ON reminders (status, next_fire_at);
CREATE INDEX reminders_by_user ON reminders (channel, user_id, status);
CREATE INDEX messages_by_source ON messages (session_id, source_id);
COMMIT;
PRAGMA user_version = 5;
