-- The bot.db that commit fd975ce (schema version 1) left, made by its own code:
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
INSERT INTO sessions VALUES(1,'cli','local','','2026-12-07T04:24:49.972274+00:00','2026-12-07T04:24:55.744845+00:00');
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
INSERT INTO messages VALUES(1,1,'user','hello, my name is Ada',NULL,NULL,NULL,'2026-12-07T04:24:49.973064+00:00');
INSERT INTO messages VALUES(2,1,'assistant',NULL,'[{"id": "call_fake1", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"echo: hello, my name is Ada\"}"}}]',NULL,NULL,'2026-12-07T04:24:55.548200+00:00');
INSERT INTO messages VALUES(3,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake1','final_result','2026-12-07T04:24:55.548200+00:00');
INSERT INTO messages VALUES(4,1,'user','REMIND_ONCE 2030-01-01T09:00:00+00:00|dentist appointment',NULL,NULL,NULL,'2026-12-07T04:24:55.558494+00:00');
INSERT INTO messages VALUES(5,1,'assistant',NULL,'[{"id": "call_fake2", "type": "function", "function": {"name": "create_reminder", "arguments": "{\"content\": \"dentist appointment\", \"time\": \"2030-01-01T09:00:00+00:00\"}"}}]',NULL,NULL,'2026-12-07T04:24:55.567054+00:00');
INSERT INTO messages VALUES(6,1,'tool',replace('[tool output: create_reminder]\nError: tool ''create_reminder'' not found.\n\n[Analyse the error above and try a different approach.]','\n',char(10)),NULL,'call_fake2','create_reminder','2026-12-07T04:24:55.567054+00:00');
INSERT INTO messages VALUES(7,1,'assistant',NULL,'[{"id": "call_fake3", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: create_reminder]\\nError: tool ''create_reminder'' not found.\\n\\n[Analys\"}"}}]',NULL,NULL,'2026-12-07T04:24:55.574554+00:00');
INSERT INTO messages VALUES(8,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake3','final_result','2026-12-07T04:24:55.574554+00:00');
INSERT INTO messages VALUES(9,1,'user','REMIND_CRON 0 9 * * 1|weekly standup',NULL,NULL,NULL,'2026-12-07T04:24:55.576045+00:00');
INSERT INTO messages VALUES(10,1,'assistant',NULL,'[{"id": "call_fake4", "type": "function", "function": {"name": "create_reminder", "arguments": "{\"content\": \"weekly standup\", \"time\": \"in 1 minute\", \"recurrence\": \"0 9 * * 1\"}"}}]',NULL,NULL,'2026-12-07T04:24:55.583195+00:00');
INSERT INTO messages VALUES(11,1,'tool',replace('[tool output: create_reminder]\nError: tool ''create_reminder'' not found.\n\n[Analyse the error above and try a different approach.]','\n',char(10)),NULL,'call_fake4','create_reminder','2026-12-07T04:24:55.583195+00:00');
INSERT INTO messages VALUES(12,1,'assistant',NULL,'[{"id": "call_fake5", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: create_reminder]\\nError: tool ''create_reminder'' not found.\\n\\n[Analys\"}"}}]',NULL,NULL,'2026-12-07T04:24:55.590997+00:00');
INSERT INTO messages VALUES(13,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake5','final_result','2026-12-07T04:24:55.590997+00:00');
INSERT INTO messages VALUES(14,1,'user','REMIND_ONCE in 3 minutes|soon thing',NULL,NULL,NULL,'2026-12-07T04:24:55.592737+00:00');
INSERT INTO messages VALUES(15,1,'assistant',NULL,'[{"id": "call_fake6", "type": "function", "function": {"name": "create_reminder", "arguments": "{\"content\": \"soon thing\", \"time\": \"in 3 minutes\"}"}}]',NULL,NULL,'2026-12-07T04:24:55.601637+00:00');
INSERT INTO messages VALUES(16,1,'tool',replace('[tool output: create_reminder]\nError: tool ''create_reminder'' not found.\n\n[Analyse the error above and try a different approach.]','\n',char(10)),NULL,'call_fake6','create_reminder','2026-12-07T04:24:55.601637+00:00');
INSERT INTO messages VALUES(17,1,'assistant',NULL,'[{"id": "call_fake7", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: create_reminder]\\nError: tool ''create_reminder'' not found.\\n\\n[Analys\"}"}}]',NULL,NULL,'2026-12-07T04:24:55.609170+00:00');
INSERT INTO messages VALUES(18,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake7','final_result','2026-12-07T04:24:55.609170+00:00');
INSERT INTO messages VALUES(19,1,'user','FOLLOWUP 2030-06-01T07:00:00+00:00 check the weather and tell me about an umbrella',NULL,NULL,NULL,'2026-12-07T04:24:55.610724+00:00');
INSERT INTO messages VALUES(20,1,'assistant',NULL,'[{"id": "call_fake8", "type": "function", "function": {"name": "schedule_followup", "arguments": "{\"prompt\": \"check the weather and tell me about an umbrella\", \"time\": \"2030-06-01T07:00:00+00:00\"}"}}]',NULL,NULL,'2026-12-07T04:24:55.620385+00:00');
INSERT INTO messages VALUES(21,1,'tool',replace('[tool output: schedule_followup]\nError: tool ''schedule_followup'' not found.\n\n[Analyse the error above and try a different approach.]','\n',char(10)),NULL,'call_fake8','schedule_followup','2026-12-07T04:24:55.620385+00:00');
INSERT INTO messages VALUES(22,1,'assistant',NULL,'[{"id": "call_fake9", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"done: [tool output: schedule_followup]\\nError: tool ''schedule_followup'' not found.\\n\\n[An\"}"}}]',NULL,NULL,'2026-12-07T04:24:55.642714+00:00');
INSERT INTO messages VALUES(23,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake9','final_result','2026-12-07T04:24:55.642714+00:00');
INSERT INTO messages VALUES(24,1,'user','REMEMBER I prefer metric units',NULL,NULL,NULL,'2026-12-07T04:24:55.644563+00:00');
INSERT INTO messages VALUES(25,1,'assistant',NULL,'[{"id": "call_fake10", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"echo: REMEMBER I prefer metric units\"}"}}]',NULL,NULL,'2026-12-07T04:24:55.660547+00:00');
INSERT INTO messages VALUES(26,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake10','final_result','2026-12-07T04:24:55.660547+00:00');
INSERT INTO messages VALUES(27,1,'user','/timezone Europe/Paris',NULL,NULL,NULL,'2026-12-07T04:24:55.665003+00:00');
INSERT INTO messages VALUES(28,1,'assistant',NULL,'[{"id": "call_fake11", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"echo: /timezone Europe/Paris\"}"}}]',NULL,NULL,'2026-12-07T04:24:55.680506+00:00');
INSERT INTO messages VALUES(29,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake11','final_result','2026-12-07T04:24:55.680506+00:00');
INSERT INTO messages VALUES(30,1,'user','/remind in 2 hours take out the trash',NULL,NULL,NULL,'2026-12-07T04:24:55.686866+00:00');
INSERT INTO messages VALUES(31,1,'assistant',NULL,'[{"id": "call_fake12", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"echo: /remind in 2 hours take out the trash\"}"}}]',NULL,NULL,'2026-12-07T04:24:55.703311+00:00');
INSERT INTO messages VALUES(32,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake12','final_result','2026-12-07T04:24:55.703311+00:00');
INSERT INTO messages VALUES(33,1,'user','/reminders',NULL,NULL,NULL,'2026-12-07T04:24:55.709369+00:00');
INSERT INTO messages VALUES(34,1,'assistant',NULL,'[{"id": "call_fake13", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"echo: /reminders\"}"}}]',NULL,NULL,'2026-12-07T04:24:55.720488+00:00');
INSERT INTO messages VALUES(35,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake13','final_result','2026-12-07T04:24:55.720488+00:00');
INSERT INTO messages VALUES(36,1,'user','what did I say my name was?',NULL,NULL,NULL,'2026-12-07T04:24:55.727669+00:00');
INSERT INTO messages VALUES(37,1,'assistant',NULL,'[{"id": "call_fake14", "type": "function", "function": {"name": "final_result", "arguments": "{\"answer\": \"echo: what did I say my name was?\"}"}}]',NULL,NULL,'2026-12-07T04:24:55.744845+00:00');
INSERT INTO messages VALUES(38,1,'tool',replace('[tool output: final_result]\nAnswer delivered to the user.','\n',char(10)),NULL,'call_fake14','final_result','2026-12-07T04:24:55.744845+00:00');
CREATE INDEX messages_by_session ON messages (session_id, id);
COMMIT;
PRAGMA user_version = 1;
