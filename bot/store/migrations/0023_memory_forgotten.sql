-- Facts removed at a person's request (/forget, the admin page, `bot memory forget`),
-- per workspace and owner, the text casefolded. The turns that said one stay in the
-- history until a fold covers them, and a fold asked for personal details not already
-- known would add it back: a fold's add or update of one is skipped, and the fold is
-- told which were forgotten. Kept `retention.records_days`.
CREATE TABLE memory_forgotten (
    workspace     TEXT NOT NULL,
    owner         TEXT NOT NULL,
    fact          TEXT NOT NULL,
    forgotten_at  TEXT NOT NULL,
    PRIMARY KEY (workspace, owner, fact)
);
CREATE INDEX memory_forgotten_at ON memory_forgotten (forgotten_at);
