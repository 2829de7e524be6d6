-- 013: enrolment. One user's enrolment tokens (hashed; an agent holding
-- one can only announce the instance it runs on), the instances announced
-- with them and what the user answered, and what each rental's agent last
-- said of its host's boot and shutdown (to log stops and resumes).

CREATE TABLE enrol_tokens (
	id         INTEGER PRIMARY KEY,
	user_id    INTEGER NOT NULL,
	hash       BLOB    NOT NULL UNIQUE,           -- SHA-256 of the token; the token is never stored
	issued_at  INTEGER NOT NULL,
	revoked_at INTEGER,                           -- NULL while valid
	last_used  INTEGER,
	instances  INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE INDEX enrol_tokens_user ON enrol_tokens (user_id) WHERE revoked_at IS NULL;

CREATE TABLE instances (
	id          INTEGER PRIMARY KEY,
	user_id     INTEGER NOT NULL,
	token_id    INTEGER NOT NULL REFERENCES enrol_tokens (id),
	key         TEXT    NOT NULL,                 -- wire.InstanceFacts.Key
	platform    TEXT    NOT NULL,                 -- profile key or ''
	platform_id TEXT    NOT NULL,
	source      TEXT    NOT NULL,
	hostname    TEXT    NOT NULL,
	gpu_model   TEXT    NOT NULL,
	gpu_count   INTEGER NOT NULL,
	boot_at     INTEGER NOT NULL,                 -- claimed, clamped
	first_seen  INTEGER NOT NULL,
	last_seen   INTEGER NOT NULL,
	state       TEXT    NOT NULL CHECK (state IN ('pending', 'ignored', 'bound')),
	rental_id   INTEGER REFERENCES rentals (id) ON DELETE SET NULL,
	carded      INTEGER NOT NULL DEFAULT 0 CHECK (carded IN (0, 1)),
	message_id  INTEGER NOT NULL DEFAULT 0,
	UNIQUE (user_id, key)
) STRICT;

CREATE INDEX instances_pending ON instances (user_id, id) WHERE state = 'pending';
CREATE INDEX instances_rental ON instances (rental_id) WHERE rental_id IS NOT NULL;

ALTER TABLE agent_state ADD COLUMN instance_key  TEXT    NOT NULL DEFAULT '';
ALTER TABLE agent_state ADD COLUMN host_boot     INTEGER;  -- the host's claimed boot; NULL unknown
ALTER TABLE agent_state ADD COLUMN shutdown_at   INTEGER;  -- the agent's last shutdown report; NULL none since
ALTER TABLE agent_state ADD COLUMN shutdown_host INTEGER NOT NULL DEFAULT 0;
