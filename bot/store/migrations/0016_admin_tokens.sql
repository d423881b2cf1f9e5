-- The admin page's one-time login links and its sessions, shared by the daemon and
-- `bot admin link` / `bot admin logout-all` (a second process on the same database).
-- Only a SHA-256 of each token is kept: a copy of the database opens no session.
-- kind: 'link' (single use: used_at is set when redeemed) or 'session' (expires_at
-- moves forward while it is used: the idle expiry).
CREATE TABLE admin_tokens (
    token_hash  TEXT PRIMARY KEY,
    kind        TEXT NOT NULL,
    admin       TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    expires_at  TEXT NOT NULL,
    used_at     TEXT
);
CREATE INDEX admin_tokens_by_kind ON admin_tokens (kind, expires_at);
