-- Who said each remembered fact ("<channel>:<user id>"; '' when unknown, as for chat
-- facts a fold found in the conversation): the prompt quotes every fact with its author,
-- so one member's fact never reads as the system's words. A user fact the remember tool
-- stored was said by that user, so older rows of that kind get their owner as author.
ALTER TABLE memory_facts ADD COLUMN author TEXT NOT NULL DEFAULT '';
UPDATE memory_facts SET author = owner WHERE scope = 'user' AND source = 'remember';
