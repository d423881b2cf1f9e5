-- The attachments of a user message (bot/media/entries.py): a JSON list of small
-- entries (kind, name, size, type, the kept file's path, notes, text made of it).
-- Never a file's bytes: those stay under data/media/.
ALTER TABLE messages ADD COLUMN media TEXT;
