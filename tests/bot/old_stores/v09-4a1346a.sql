-- The bot.db that commit 4a1346a (schema version 9) left, made by its own code:
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
INSERT INTO sessions VALUES(1,'cli','local','','2026-12-07T04:30:10.367980+00:00','2026-12-07T04:30:18.407273+00:00');
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
INSERT INTO messages VALUES(1,1,'user','hello, my name is Ada',NULL,NULL,NULL,'2026-12-07T04:30:10.368556+00:00','84dfdf6a3f17');
INSERT INTO messages VALUES(2,1,'assistant',NULL,'[{"id": "call_fake1", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"echo: hello, my name is Ada\"}"}}]',NULL,NULL,'2026-12-07T04:30:17.752651+00:00',NULL);
INSERT INTO messages VALUES(3,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake1','final_result','2026-12-07T04:30:17.752651+00:00',NULL);
INSERT INTO messages VALUES(4,1,'user','REMIND_ONCE 2030-01-01T09:00:00+00:00|dentist appointment',NULL,NULL,NULL,'2026-12-07T04:30:17.770218+00:00','93ba921c141d');
INSERT INTO messages VALUES(5,1,'assistant',NULL,'[{"id": "call_fake2", "type": "function", "function": {"name": "create_reminder", "arguments": "{\"content\": \"dentist appointment\", \"time\": \"2030-01-01T09:00:00+00:00\"}"}}]',NULL,NULL,'2026-12-07T04:30:17.798383+00:00',NULL);
INSERT INTO messages VALUES(6,1,'tool',replace('[tool output: create_reminder]\nCreated #1 reminder at Tue 2030-01-01 09:00 UTC: dentist appointment','\n',char(10)),NULL,'call_fake2','create_reminder','2026-12-07T04:30:17.798383+00:00',NULL);
INSERT INTO messages VALUES(7,1,'assistant',NULL,'[{"id": "call_fake3", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: create_reminder]\\nCreated #1 reminder at Tue 2030-01-01 09:00 UTC: \"}"}}]',NULL,NULL,'2026-12-07T04:30:17.815218+00:00',NULL);
INSERT INTO messages VALUES(8,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake3','final_result','2026-12-07T04:30:17.815218+00:00',NULL);
INSERT INTO messages VALUES(9,1,'user','REMIND_CRON 0 9 * * 1|weekly standup',NULL,NULL,NULL,'2026-12-07T04:30:17.823343+00:00','551cac969a54');
INSERT INTO messages VALUES(10,1,'assistant',NULL,'[{"id": "call_fake4", "type": "function", "function": {"name": "create_reminder", "arguments": "{\"content\": \"weekly standup\", \"time\": \"in 1 minute\", \"recurrence\": \"0 9 * * 1\"}"}}]',NULL,NULL,'2026-12-07T04:30:18.182549+00:00',NULL);
INSERT INTO messages VALUES(11,1,'tool',replace('[tool output: create_reminder]\nCreated #2 reminder at Tue 2026-12-08 09:00 UTC, repeats ''0 9 * * 1'': weekly standup','\n',char(10)),NULL,'call_fake4','create_reminder','2026-12-07T04:30:18.182549+00:00',NULL);
INSERT INTO messages VALUES(12,1,'assistant',NULL,'[{"id": "call_fake5", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: create_reminder]\\nCreated #2 reminder at Tue 2026-12-08 09:00 UTC, \"}"}}]',NULL,NULL,'2026-12-07T04:30:18.201617+00:00',NULL);
INSERT INTO messages VALUES(13,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake5','final_result','2026-12-07T04:30:18.201617+00:00',NULL);
INSERT INTO messages VALUES(14,1,'user','REMIND_ONCE in 3 minutes|soon thing',NULL,NULL,NULL,'2026-12-07T04:30:18.214067+00:00','858b0b08d37a');
INSERT INTO messages VALUES(15,1,'assistant',NULL,'[{"id": "call_fake6", "type": "function", "function": {"name": "create_reminder", "arguments": "{\"content\": \"soon thing\", \"time\": \"in 3 minutes\"}"}}]',NULL,NULL,'2026-12-07T04:30:18.243242+00:00',NULL);
INSERT INTO messages VALUES(16,1,'tool',replace('[tool output: create_reminder]\nCreated #3 reminder at Mon 2026-12-07 04:33 UTC: soon thing','\n',char(10)),NULL,'call_fake6','create_reminder','2026-12-07T04:30:18.243242+00:00',NULL);
INSERT INTO messages VALUES(17,1,'assistant',NULL,'[{"id": "call_fake7", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: create_reminder]\\nCreated #3 reminder at Mon 2026-12-07 04:33 UTC: \"}"}}]',NULL,NULL,'2026-12-07T04:30:18.255952+00:00',NULL);
INSERT INTO messages VALUES(18,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake7','final_result','2026-12-07T04:30:18.255952+00:00',NULL);
INSERT INTO messages VALUES(19,1,'user','FOLLOWUP 2030-06-01T07:00:00+00:00 check the weather and tell me about an umbrella',NULL,NULL,NULL,'2026-12-07T04:30:18.279467+00:00','6d0df5799f6e');
INSERT INTO messages VALUES(20,1,'assistant',NULL,'[{"id": "call_fake8", "type": "function", "function": {"name": "schedule_followup", "arguments": "{\"prompt\": \"check the weather and tell me about an umbrella\", \"time\": \"2030-06-01T07:00:00+00:00\"}"}}]',NULL,NULL,'2026-12-07T04:30:18.322529+00:00',NULL);
INSERT INTO messages VALUES(21,1,'tool',replace('[tool output: schedule_followup]\nCreated #4 follow-up at Sat 2030-06-01 07:00 UTC: check the weather and tell me about an umbrella','\n',char(10)),NULL,'call_fake8','schedule_followup','2026-12-07T04:30:18.322529+00:00',NULL);
INSERT INTO messages VALUES(22,1,'assistant',NULL,'[{"id": "call_fake9", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: schedule_followup]\\nCreated #4 follow-up at Sat 2030-06-01 07:00 UT\"}"}}]',NULL,NULL,'2026-12-07T04:30:18.330465+00:00',NULL);
INSERT INTO messages VALUES(23,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake9','final_result','2026-12-07T04:30:18.330465+00:00',NULL);
INSERT INTO messages VALUES(24,1,'user','REMEMBER I prefer metric units',NULL,NULL,NULL,'2026-12-07T04:30:18.337314+00:00','2463fb892b06');
INSERT INTO messages VALUES(25,1,'assistant',NULL,'[{"id": "call_fake10", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"echo: REMEMBER I prefer metric units\"}"}}]',NULL,NULL,'2026-12-07T04:30:18.345379+00:00',NULL);
INSERT INTO messages VALUES(26,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake10','final_result','2026-12-07T04:30:18.345379+00:00',NULL);
INSERT INTO messages VALUES(27,1,'user','what did I say my name was?',NULL,NULL,NULL,'2026-12-07T04:30:18.393833+00:00','e296c81004bf');
INSERT INTO messages VALUES(28,1,'assistant',NULL,'[{"id": "call_fake11", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"echo: what did I say my name was?\"}"}}]',NULL,NULL,'2026-12-07T04:30:18.407273+00:00',NULL);
INSERT INTO messages VALUES(29,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake11','final_result','2026-12-07T04:30:18.407273+00:00',NULL);
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
INSERT INTO inbox VALUES(1,'cli','local','','84dfdf6a3f17','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "hello, my name is Ada", "kind": "user", "message_id": "84dfdf6a3f17", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:10.365660+00:00", "direct": true}','done','2026-12-07T04:30:10.365660+00:00','2026-12-07T04:30:17.764213+00:00');
INSERT INTO inbox VALUES(2,'cli','local','','93ba921c141d','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMIND_ONCE 2030-01-01T09:00:00+00:00|dentist appointment", "kind": "user", "message_id": "93ba921c141d", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:17.765086+00:00", "direct": true}','done','2026-12-07T04:30:17.765086+00:00','2026-12-07T04:30:17.821879+00:00');
INSERT INTO inbox VALUES(3,'cli','local','','551cac969a54','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMIND_CRON 0 9 * * 1|weekly standup", "kind": "user", "message_id": "551cac969a54", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:17.822357+00:00", "direct": true}','done','2026-12-07T04:30:17.822357+00:00','2026-12-07T04:30:18.206741+00:00');
INSERT INTO inbox VALUES(4,'cli','local','','858b0b08d37a','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMIND_ONCE in 3 minutes|soon thing", "kind": "user", "message_id": "858b0b08d37a", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:18.207362+00:00", "direct": true}','done','2026-12-07T04:30:18.207362+00:00','2026-12-07T04:30:18.274080+00:00');
INSERT INTO inbox VALUES(5,'cli','local','','6d0df5799f6e','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "FOLLOWUP 2030-06-01T07:00:00+00:00 check the weather and tell me about an umbrella", "kind": "user", "message_id": "6d0df5799f6e", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:18.277281+00:00", "direct": true}','done','2026-12-07T04:30:18.277281+00:00','2026-12-07T04:30:18.332476+00:00');
INSERT INTO inbox VALUES(6,'cli','local','','2463fb892b06','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "REMEMBER I prefer metric units", "kind": "user", "message_id": "2463fb892b06", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:18.332828+00:00", "direct": true}','done','2026-12-07T04:30:18.332828+00:00','2026-12-07T04:30:18.347553+00:00');
INSERT INTO inbox VALUES(7,'cli','local','','df2cb16517f8','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "/timezone Europe/Paris", "kind": "user", "message_id": "df2cb16517f8", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:18.349384+00:00", "direct": true}','done','2026-12-07T04:30:18.349384+00:00','2026-12-07T04:30:18.353278+00:00');
INSERT INTO inbox VALUES(8,'cli','local','','ca315ca01862','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "/remind in 2 hours take out the trash", "kind": "user", "message_id": "ca315ca01862", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:18.353644+00:00", "direct": true}','done','2026-12-07T04:30:18.353644+00:00','2026-12-07T04:30:18.386167+00:00');
INSERT INTO inbox VALUES(9,'cli','local','','6113b0a61ae1','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "/reminders", "kind": "user", "message_id": "6113b0a61ae1", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:18.386579+00:00", "direct": true}','done','2026-12-07T04:30:18.386579+00:00','2026-12-07T04:30:18.388182+00:00');
INSERT INTO inbox VALUES(10,'cli','local','','e296c81004bf','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "user_id": "local", "text": "what did I say my name was?", "kind": "user", "message_id": "e296c81004bf", "user_name": "you", "attachments": [], "extras": {}, "received_at": "2026-12-07T04:30:18.388387+00:00", "direct": true}','done','2026-12-07T04:30:18.388387+00:00','2026-12-07T04:30:18.414919+00:00');
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
INSERT INTO outbox VALUES(1,'msg:45a7913c490a','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "echo: hello, my name is Ada", "kind": "reply", "reply_to": "84dfdf6a3f17", "final": true, "attachments": [], "extras": {}, "message_id": "45a7913c490a", "idempotency_key": null}','sent',1,'2026-12-07T04:30:17.761864+00:00',NULL,'2026-12-07T04:30:17.761864+00:00','2026-12-07T04:30:17.765249+00:00');
INSERT INTO outbox VALUES(2,'msg:27d3bb9b68a8','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: create_reminder]\nCreated #1 reminder at Tue 2030-01-01 09:00 UTC: ", "kind": "reply", "reply_to": "93ba921c141d", "final": true, "attachments": [], "extras": {}, "message_id": "27d3bb9b68a8", "idempotency_key": null}','sent',1,'2026-12-07T04:30:17.821503+00:00',NULL,'2026-12-07T04:30:17.821503+00:00','2026-12-07T04:30:17.822481+00:00');
INSERT INTO outbox VALUES(3,'msg:c23d868bf9bb','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: create_reminder]\nCreated #2 reminder at Tue 2026-12-08 09:00 UTC, ", "kind": "reply", "reply_to": "551cac969a54", "final": true, "attachments": [], "extras": {}, "message_id": "c23d868bf9bb", "idempotency_key": null}','sent',1,'2026-12-07T04:30:18.206310+00:00',NULL,'2026-12-07T04:30:18.206310+00:00','2026-12-07T04:30:18.207515+00:00');
INSERT INTO outbox VALUES(4,'msg:93b21aa899f5','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: create_reminder]\nCreated #3 reminder at Mon 2026-12-07 04:33 UTC: ", "kind": "reply", "reply_to": "858b0b08d37a", "final": true, "attachments": [], "extras": {}, "message_id": "93b21aa899f5", "idempotency_key": null}','sent',1,'2026-12-07T04:30:18.273524+00:00',NULL,'2026-12-07T04:30:18.273524+00:00','2026-12-07T04:30:18.277447+00:00');
INSERT INTO outbox VALUES(5,'msg:2c015d462830','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "done: [tool output: schedule_followup]\nCreated #4 follow-up at Sat 2030-06-01 07:00 UT", "kind": "reply", "reply_to": "6d0df5799f6e", "final": true, "attachments": [], "extras": {}, "message_id": "2c015d462830", "idempotency_key": null}','sent',1,'2026-12-07T04:30:18.331992+00:00',NULL,'2026-12-07T04:30:18.331992+00:00','2026-12-07T04:30:18.332975+00:00');
INSERT INTO outbox VALUES(6,'msg:35a3e8c9b1a0','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "echo: REMEMBER I prefer metric units", "kind": "reply", "reply_to": "2463fb892b06", "final": true, "attachments": [], "extras": {}, "message_id": "35a3e8c9b1a0", "idempotency_key": null}','sent',1,'2026-12-07T04:30:18.346596+00:00',NULL,'2026-12-07T04:30:18.346596+00:00','2026-12-07T04:30:18.349509+00:00');
INSERT INTO outbox VALUES(7,'msg:268a73a87186','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "Time zone set to Europe/Paris; it is now Mon 2026-12-07 05:30 Europe/Paris.", "kind": "reply", "reply_to": "df2cb16517f8", "final": true, "attachments": [], "extras": {}, "message_id": "268a73a87186", "idempotency_key": null}','sent',1,'2026-12-07T04:30:18.352837+00:00',NULL,'2026-12-07T04:30:18.352837+00:00','2026-12-07T04:30:18.353745+00:00');
INSERT INTO outbox VALUES(8,'msg:eae98b63db36','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "OK, #5 reminder at Mon 2026-12-07 07:30 Europe/Paris: take out the trash", "kind": "reply", "reply_to": "ca315ca01862", "final": true, "attachments": [], "extras": {}, "message_id": "eae98b63db36", "idempotency_key": null}','sent',1,'2026-12-07T04:30:18.385811+00:00',NULL,'2026-12-07T04:30:18.385811+00:00','2026-12-07T04:30:18.386740+00:00');
INSERT INTO outbox VALUES(9,'msg:dba06a43319d','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "Your reminders:\n#3 reminder at Mon 2026-12-07 04:33 UTC: soon thing\n#5 reminder at Mon 2026-12-07 07:30 Europe/Paris: take out the trash\n#2 reminder at Tue 2026-12-08 09:00 UTC, repeats ''0 9 * * 1'': weekly standup\n#1 reminder at Tue 2030-01-01 09:00 UTC: dentist appointment\n#4 follow-up at Sat 2030-06-01 07:00 UTC: check the weather and tell me about an umbrella", "kind": "reply", "reply_to": "6113b0a61ae1", "final": true, "attachments": [], "extras": {}, "message_id": "dba06a43319d", "idempotency_key": null}','sent',1,'2026-12-07T04:30:18.387785+00:00',NULL,'2026-12-07T04:30:18.387785+00:00','2026-12-07T04:30:18.388463+00:00');
INSERT INTO outbox VALUES(10,'msg:ddb7c240c960','cli','{"key": {"channel": "cli", "chat_id": "local", "thread_id": null}, "text": "echo: what did I say my name was?", "kind": "reply", "reply_to": "e296c81004bf", "final": true, "attachments": [], "extras": {}, "message_id": "ddb7c240c960", "idempotency_key": null}','sent',1,'2026-12-07T04:30:18.414560+00:00',NULL,'2026-12-07T04:30:18.414560+00:00','2026-12-07T04:30:18.415473+00:00');
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
INSERT INTO reminders VALUES(1,'cli','local','','local','dentist appointment','reminder','2030-01-01T09:00:00+00:00',NULL,'UTC','active','2026-12-07T04:30:17.797696+00:00',NULL,0,'cli:local:93ba921c141d#reminder1');
INSERT INTO reminders VALUES(2,'cli','local','','local','weekly standup','reminder','2026-12-08T09:00:00+00:00','0 9 * * 1','UTC','active','2026-12-07T04:30:18.182018+00:00',NULL,0,'cli:local:551cac969a54#reminder1');
INSERT INTO reminders VALUES(3,'cli','local','','local','soon thing','reminder','2026-12-07T04:33:18.240992+00:00',NULL,'UTC','active','2026-12-07T04:30:18.242489+00:00',NULL,0,'cli:local:858b0b08d37a#reminder1');
INSERT INTO reminders VALUES(4,'cli','local','','local','check the weather and tell me about an umbrella','followup','2030-06-01T07:00:00+00:00',NULL,'UTC','active','2026-12-07T04:30:18.321638+00:00',NULL,0,'cli:local:6d0df5799f6e#reminder1');
INSERT INTO reminders VALUES(5,'cli','local','','local','take out the trash','reminder','2026-12-07T06:30:18.380114+00:00',NULL,'Europe/Paris','active','2026-12-07T04:30:18.385264+00:00',NULL,0,'cli:local:ca315ca01862#command');
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
INSERT INTO pairing_requests VALUES('ABCD2345','telegram','111','user111','111','','2026-12-07T04:30:21.221203+00:00','2036-12-04T04:30:21.221203+00:00');
CREATE TABLE approved_users (
    channel     TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    user_name   TEXT NOT NULL DEFAULT '',
    approved_by TEXT NOT NULL,
    approved_at TEXT NOT NULL,
    PRIMARY KEY (channel, user_id)
);
INSERT INTO approved_users VALUES('telegram','222','user222','telegram:999','2026-12-07T04:30:21.221203+00:00');
CREATE TABLE allow_names (
    channel     TEXT NOT NULL,
    name        TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    bound_at    TEXT NOT NULL,
    PRIMARY KEY (channel, name)
);
INSERT INTO allow_names VALUES('telegram','alice','111','2026-12-07T04:30:21.221203+00:00');
CREATE INDEX messages_by_session ON messages (session_id, id);
CREATE INDEX inbox_pending ON inbox (status, id);
CREATE INDEX outbox_due ON outbox (status, next_attempt_at);
CREATE UNIQUE INDEX reminders_by_source ON reminders (source);
CREATE INDEX reminders_active ON reminders (status, next_fire_at);
CREATE INDEX reminders_by_user ON reminders (channel, user_id, status);
CREATE INDEX messages_by_source ON messages (session_id, source_id);
CREATE INDEX pairing_requests_by_channel ON pairing_requests (channel, expires_at);
COMMIT;
PRAGMA user_version = 9;
