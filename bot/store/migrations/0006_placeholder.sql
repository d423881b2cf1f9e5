-- Placeholder holding number 0006 for a migration another branch adds; the merge
-- replaces this file with that one (numbers must have no gaps).
SELECT 1;
