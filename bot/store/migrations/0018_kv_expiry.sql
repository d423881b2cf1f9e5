-- Adapter state that grows with use (threads joined, notices given, posts in progress)
-- carries the time after which housekeeping drops it; NULL: kept until deleted.
ALTER TABLE kv ADD COLUMN expires_at TEXT;
