-- 010: reserved for the migration another change brings; this file keeps
-- the numbering whole until then and is removed when that one lands (two
-- files numbered 010 make Open fail, so it cannot be forgotten).
SELECT 1;
