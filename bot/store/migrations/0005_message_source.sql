-- Which inbound message a stored user message came from, so a turn replayed after
-- a crash resumes instead of storing (and sending) the user's words twice.
ALTER TABLE messages ADD COLUMN source_id TEXT;
CREATE INDEX messages_by_source ON messages (session_id, source_id);
