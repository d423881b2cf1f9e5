-- Workspaces: every version of each persona file (who, when, via chat/cli/disk, the
-- full text), refused edit attempts, and the workspace an admin chose for a chat.
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
-- A reminder fires in the workspace it was set in.
ALTER TABLE reminders ADD COLUMN workspace TEXT NOT NULL DEFAULT 'default';
