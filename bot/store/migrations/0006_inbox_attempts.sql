-- How many times a turn started for an inbound message. A message whose turn kills
-- the process is replayed at every start; after a few unfinished attempts it is
-- marked 'failed' so its chat can move on.
ALTER TABLE inbox ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
