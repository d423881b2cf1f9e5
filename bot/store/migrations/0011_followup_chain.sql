-- How many follow-up turns led to a reminder: 0 for one a person's message set, n + 1
-- for one set during a follow-up turn of depth n. A follow-up that re-arms itself is a
-- chain of paid model turns; its depth is what lets the service stop it. Rows stored
-- before this column existed were set by people: 0.
ALTER TABLE reminders ADD COLUMN chain_depth INTEGER NOT NULL DEFAULT 0;
