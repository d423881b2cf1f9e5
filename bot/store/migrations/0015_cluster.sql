-- Replicas of one bot sharing a PostgreSQL database (bot/cluster): who is alive, and the
-- leases (chat partitions "chats:N", a platform's poller "telegram:poll") with their
-- fencing tokens. Times are the database server's clock in milliseconds since the epoch:
-- replicas never compare their own clocks. A single process on SQLite leaves both empty.
CREATE TABLE cluster_replicas (
    replica TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    seen_ms BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL,
    web TEXT NOT NULL DEFAULT ''
);

-- token grows by one at every acquisition; owner is NULL once released.
CREATE TABLE cluster_leases (
    name TEXT PRIMARY KEY,
    owner TEXT,
    token BIGINT NOT NULL,
    expires_ms BIGINT NOT NULL
);

CREATE INDEX cluster_leases_owner ON cluster_leases (owner);
