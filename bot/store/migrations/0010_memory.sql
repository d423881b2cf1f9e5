-- Durable facts the assistant remembers, per workspace, in two scopes: about a user
-- ("user", owner "<channel>:<user id>", follows them across the workspace's chats) and
-- about a chat ("chat", owner "<channel>:<chat id>", shared by its members).
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
CREATE INDEX memory_facts_owner ON memory_facts (workspace, scope, owner, id);

-- Who wrote each stored user message: history rows carry no sender, and user facts
-- must be credited to the person who said them.
CREATE TABLE memory_speakers (
    chat        TEXT NOT NULL,
    message_id  INTEGER NOT NULL,
    user_id     TEXT NOT NULL,
    PRIMARY KEY (chat, message_id)
);

-- Consolidations that failed: the turns they covered are skipped, never retried.
CREATE TABLE memory_failures (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace   TEXT NOT NULL,
    chat        TEXT NOT NULL,
    from_id     INTEGER NOT NULL,
    through_id  INTEGER NOT NULL,
    error       TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
