-- 015: platform sync. A rental synced from (or bound to) a platform's
-- listed instance keeps the platform's own ID; platform_instances keeps
-- what each user's connector last listed and what the sync applied from
-- it; balances tells a balance the platform's API gave from a typed one.
--
-- A platform instance ID is 1 to 128 bytes of printable text
-- (ledger.CheckPlatformID checks it first; the CHECKs here refuse the
-- worst even from a bug: over-long, NUL and ASCII control characters).

ALTER TABLE rentals ADD COLUMN platform_id TEXT CHECK (platform_id IS NULL OR (
	length(CAST(platform_id AS BLOB)) BETWEEN 1 AND 128 AND instr(CAST(platform_id AS BLOB), x'00') = 0 AND
	platform_id NOT GLOB '*[' || char(1) || '-' || char(31) || char(127) || ']*'));

-- Lookup by (user, platform, platform_id), released rentals included
-- (RentalByPlatformID); at most one live rental per listed instance, so
-- an instance is never logged twice.
CREATE INDEX rentals_platform_id ON rentals (user_id, platform, platform_id) WHERE platform_id IS NOT NULL;
CREATE UNIQUE INDEX rentals_live_platform_id ON rentals (user_id, platform, platform_id)
	WHERE platform_id IS NOT NULL AND released = 0;

-- platform_instances: one row per user, platform and platform ID. Not
-- journaled (it is the sync's bookkeeping); the rentals it creates are.
-- status is 'bound' exactly when rental_id is set.
CREATE TABLE platform_instances (
	id          INTEGER PRIMARY KEY,
	user_id     INTEGER NOT NULL REFERENCES users (id),
	platform    TEXT    NOT NULL CHECK (length(platform) BETWEEN 1 AND 32),
	platform_id TEXT    NOT NULL CHECK (length(CAST(platform_id AS BLOB)) BETWEEN 1 AND 128 AND
		instr(CAST(platform_id AS BLOB), x'00') = 0 AND platform_id NOT GLOB '*[' || char(1) || '-' || char(31) || char(127) || ']*'),
	status      TEXT    NOT NULL CHECK (status IN ('asked', 'bound', 'declined')),
	rental_id   INTEGER REFERENCES rentals (id) ON DELETE SET NULL,
	name        TEXT    NOT NULL DEFAULT '' CHECK (length(CAST(name AS BLOB)) <= 256),
	gpu         TEXT    NOT NULL DEFAULT '' CHECK (length(CAST(gpu AS BLOB)) <= 64),
	gpu_count   INTEGER NOT NULL DEFAULT 0 CHECK (gpu_count BETWEEN 0 AND 64),
	price       TEXT,                             -- decimal per hour for the whole instance; NULL: not listed
	currency    TEXT    NOT NULL DEFAULT '' CHECK (length(currency) <= 3),
	state       TEXT    NOT NULL DEFAULT '' CHECK (state IN ('', 'running', 'stopped', 'terminated', 'unknown')),
	state_at    INTEGER,                          -- NULL with no state applied
	price_told  TEXT,                             -- decimal; NULL: no price told
	first_seen  INTEGER NOT NULL,
	last_seen   INTEGER NOT NULL,
	message_id  INTEGER NOT NULL DEFAULT 0 CHECK (message_id >= 0),
	UNIQUE (user_id, platform, platform_id),
	CHECK ((status = 'bound') = (rental_id IS NOT NULL))
) STRICT;

CREATE INDEX platform_instances_rental ON platform_instances (rental_id) WHERE rental_id IS NOT NULL;

-- A deleted rental (an undone sync, rent or adopt) leaves its instance
-- declined, not bound to nothing: nothing is created for it again
-- unasked. This runs before the foreign key's SET NULL, which then finds
-- no row (were it to run first, the status CHECK would refuse the delete).
CREATE TRIGGER rentals_unbind_platform BEFORE DELETE ON rentals BEGIN
	UPDATE platform_instances SET status = 'declined', rental_id = NULL WHERE rental_id = OLD.id;
END;

-- balances: action_id becomes NULL for a balance the platform's API gave
-- (source 'api'): it is not a user's action, so it has no journal row
-- and /undo never deletes it (Undo deletes by action_id). A typed
-- balance keeps its action. SQLite cannot drop NOT NULL in place, so the
-- table is rebuilt; nothing references it.
CREATE TABLE balances_new (
	id        INTEGER PRIMARY KEY,
	user_id   INTEGER NOT NULL REFERENCES users (id),
	action_id INTEGER REFERENCES actions (id),    -- NULL exactly for source 'api'
	platform  TEXT    NOT NULL,
	amount    TEXT    NOT NULL,
	currency  TEXT    NOT NULL,
	at        INTEGER NOT NULL,
	source    TEXT    NOT NULL DEFAULT 'typed' CHECK (source IN ('typed', 'api')),
	CHECK ((source = 'api') = (action_id IS NULL))
) STRICT;

INSERT INTO balances_new (id, user_id, action_id, platform, amount, currency, at)
	SELECT id, user_id, action_id, platform, amount, currency, at FROM balances;
DROP TABLE balances;
ALTER TABLE balances_new RENAME TO balances;

CREATE INDEX balances_user ON balances (user_id, at);
CREATE INDEX balances_action ON balances (action_id);
