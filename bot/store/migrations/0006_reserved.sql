-- Placeholder for a migration another branch adds under this number; drop at merge.
SELECT 1;
