-- Accounts that get no new pairing code before held_until: denied by an admin (for
-- access.pairing_denied_h), or pushed out of a full channel by a newer request (until
-- their code would have expired). Expired rows are dropped by housekeeping.
CREATE TABLE pairing_holds (
    channel     TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    reason      TEXT NOT NULL,
    held_until  TEXT NOT NULL,
    PRIMARY KEY (channel, user_id)
);
