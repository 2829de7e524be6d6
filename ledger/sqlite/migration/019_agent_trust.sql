-- 019: an agent token alone never moves anything through a platform's
-- API. What the platform lists for an instance now includes its public
-- address, compared with where the rental's agent reports from; and each
-- rental keeps its standing answer about an agent whose reports
-- contradicted the platform's list, so the mismatch is asked once (also
-- across restarts) and automation stays off until the user decides.
--
-- platform_instances.address: the public IP the platform lists ('' none).
ALTER TABLE platform_instances ADD COLUMN address TEXT NOT NULL DEFAULT '' CHECK (length(address) <= 64);

-- agent_trust: one row per rental. state: 'asked' (one card sent,
-- automation off), 'off' (the user kept it off), 'trusted' (the user
-- trusted the disagreement said/listed), 'reset' (a new token was issued
-- at at: reports are checked afresh). said and listed are JSON objects of
-- the facts that disagreed (ledger.HostFacts).
CREATE TABLE agent_trust (
	rental_id  INTEGER PRIMARY KEY REFERENCES rentals (id) ON DELETE CASCADE,
	user_id    INTEGER NOT NULL REFERENCES users (id),
	state      TEXT    NOT NULL CHECK (state IN ('asked', 'off', 'trusted', 'reset')),
	said       TEXT    NOT NULL CHECK (length(CAST(said AS BLOB)) <= 1024),
	listed     TEXT    NOT NULL CHECK (length(CAST(listed AS BLOB)) <= 1024),
	message_id INTEGER NOT NULL DEFAULT 0 CHECK (message_id >= 0),
	at         INTEGER NOT NULL
) STRICT;
