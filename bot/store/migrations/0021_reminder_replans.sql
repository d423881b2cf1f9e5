-- Recurring reminders whose stored next run an earlier release worked out by older
-- schedule rules (cron weekdays counted from Monday; a day of the month AND a weekday):
-- bot/reminders/replan.py works each out again once, at the next start, then empties
-- this table. A new database starts with none, so a start normally reads one empty table.
CREATE TABLE reminder_replans (
    reminder_id INTEGER NOT NULL,
    PRIMARY KEY (reminder_id)
);
INSERT INTO reminder_replans (reminder_id)
    SELECT id FROM reminders WHERE status = 'active' AND recurrence IS NOT NULL;
