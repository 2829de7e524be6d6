-- 011: the decision log (/why) keeps each decision's summary and evidence
-- by message key with typed arguments (ledger.Message as JSON), so that
-- /why renders them in the reader's language and zone. summary and
-- evidence keep the English text; a row without a key (written before
-- this migration) is shown by that text, unchanged.

ALTER TABLE decisions ADD COLUMN summary_key   TEXT NOT NULL DEFAULT '';
ALTER TABLE decisions ADD COLUMN summary_args  TEXT NOT NULL DEFAULT '';  -- ledger.Message JSON, '' with no key
ALTER TABLE decisions ADD COLUMN evidence_key  TEXT NOT NULL DEFAULT '';
ALTER TABLE decisions ADD COLUMN evidence_args TEXT NOT NULL DEFAULT '';
