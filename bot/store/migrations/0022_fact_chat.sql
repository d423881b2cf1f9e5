-- The chat a user fact stays in ("<channel>:<chat id>"; '' for one that follows its user
-- across the workspace's chats). A fold of a group reads every member's lines and cannot
-- tell who said a fact about ann, so what a group taught stays in that group's prompts,
-- never ann's private chat. Older rows keep following their user, as they did.
ALTER TABLE memory_facts ADD COLUMN chat TEXT NOT NULL DEFAULT '';
