-- Streamed previews (bot/streaming): the platform message a turn's answer is being
-- written into, saved before its first edit, so a run that dies mid-stream leaves an
-- id the next run finishes (or deletes) instead of a second answer. ``turn`` is the
-- answered message ("<chat key>:<message id>"); ``final`` is 1 once the final answer,
-- carrying this id, is being queued: a replayed turn then shows no more previews.
CREATE TABLE previews (
    turn        TEXT PRIMARY KEY,
    channel     TEXT NOT NULL,
    chat_id     TEXT NOT NULL,
    message_id  TEXT NOT NULL,
    final       INTEGER NOT NULL DEFAULT 0,
    created_at  TEXT NOT NULL
);
CREATE INDEX previews_by_age ON previews (created_at);
