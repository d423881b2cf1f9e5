-- Which delivery run holds an outbox row it is sending (status 'sending'). A send
-- claims its row first, so a row found by two paths (start-up resume, a reminder's
-- catch-up fire, a retry) reaches the channel once; a claim left by a run that died
-- is taken over by the next one.
ALTER TABLE outbox ADD COLUMN claimed_by TEXT;
