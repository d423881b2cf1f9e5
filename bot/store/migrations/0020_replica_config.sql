-- What each replica must share with the others (bot/cluster/agreement.py: its chat
-- partitions, its channels, its model), published with its heartbeat; '' from a
-- replica of an earlier release.
ALTER TABLE cluster_replicas ADD COLUMN config TEXT NOT NULL DEFAULT '';
