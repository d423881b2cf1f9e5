"""Memory: facts about users and chats, kept per workspace, folded in the background."""
