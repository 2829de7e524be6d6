-- 003: the agent hub and the scheduler: agent tokens (hashed), the latest
-- state of each rental's agent, raw heartbeat summaries (kept about a day)
-- and their hourly roll-up (kept), /autorelease policies, release orders,
-- the log of automatic decisions (/why), notification cards and once-only
-- notices. Everything hangs off a rental and goes with it.

CREATE TABLE agent_tokens (
	id         INTEGER PRIMARY KEY,
	rental_id  INTEGER NOT NULL REFERENCES rentals (id) ON DELETE CASCADE,
	user_id    INTEGER NOT NULL,
	hash       BLOB    NOT NULL UNIQUE,           -- SHA-256 of the token; the token is never stored
	issued_at  INTEGER NOT NULL,
	revoked_at INTEGER                            -- NULL while valid
) STRICT;

CREATE INDEX agent_tokens_rental ON agent_tokens (rental_id) WHERE revoked_at IS NULL;

CREATE TABLE agent_state (
	rental_id   INTEGER PRIMARY KEY REFERENCES rentals (id) ON DELETE CASCADE,
	user_id     INTEGER NOT NULL,
	first_seen  INTEGER NOT NULL,
	last_seen   INTEGER NOT NULL,
	boot_id     TEXT    NOT NULL,
	seq         INTEGER NOT NULL,
	verdict     TEXT    NOT NULL,
	idle_since  INTEGER,                          -- server clock; NULL unless idle
	job         TEXT,                             -- JSON of ledger.JobInfo; NULL without a wrapped job
	gpu_model   TEXT    NOT NULL,
	gpu_count   INTEGER NOT NULL,
	gpu_source  TEXT    NOT NULL,
	can_release INTEGER NOT NULL CHECK (can_release IN (0, 1)),
	reasons     TEXT    NOT NULL
) STRICT;

-- agent_beats keeps one compact row per heartbeat for about a day.
CREATE TABLE agent_beats (
	rental_id  INTEGER NOT NULL REFERENCES rentals (id) ON DELETE CASCADE,
	at         INTEGER NOT NULL,                  -- received, server clock
	verdict    TEXT    NOT NULL,
	busy_s     INTEGER NOT NULL,
	idle_s     INTEGER NOT NULL,
	unknown_s  INTEGER NOT NULL,
	util_mean  INTEGER NOT NULL,                  -- permille; -1 none
	util_max   INTEGER NOT NULL,
	job_alive  INTEGER NOT NULL,
	samples    INTEGER NOT NULL
) STRICT;

CREATE INDEX agent_beats_rental ON agent_beats (rental_id, at);

-- agent_hours rolls beats up per rental and UTC hour, kept for good.
CREATE TABLE agent_hours (
	rental_id INTEGER NOT NULL REFERENCES rentals (id) ON DELETE CASCADE,
	hour      INTEGER NOT NULL,                   -- Unix seconds of the hour's start
	busy_s    INTEGER NOT NULL,
	idle_s    INTEGER NOT NULL,
	unknown_s INTEGER NOT NULL,
	beats     INTEGER NOT NULL,
	util_sum  INTEGER NOT NULL,
	util_n    INTEGER NOT NULL,
	util_max  INTEGER NOT NULL,
	PRIMARY KEY (rental_id, hour)
) STRICT;

CREATE TABLE auto_policies (
	rental_id INTEGER PRIMARY KEY REFERENCES rentals (id) ON DELETE CASCADE,
	action    TEXT    NOT NULL CHECK (action IN ('off', 'notify', 'stop', 'release')),
	after_ns  INTEGER NOT NULL,
	set_at    INTEGER NOT NULL
) STRICT;

CREATE TABLE agent_orders (
	id         TEXT    PRIMARY KEY,
	rental_id  INTEGER NOT NULL REFERENCES rentals (id) ON DELETE CASCADE,
	user_id    INTEGER NOT NULL,
	rental     TEXT    NOT NULL,
	action     TEXT    NOT NULL CHECK (action IN ('stop', 'release')),
	origin     TEXT    NOT NULL,
	issued_at  INTEGER NOT NULL,
	expires_at INTEGER NOT NULL,
	nonce      TEXT    NOT NULL UNIQUE,
	state      TEXT    NOT NULL CHECK (state IN ('pending', 'started', 'done', 'refused', 'failed', 'expired')),
	outcome    TEXT    NOT NULL DEFAULT '',
	message    TEXT    NOT NULL DEFAULT '',
	updated_at INTEGER NOT NULL,
	boot_id    TEXT    NOT NULL DEFAULT ''
) STRICT;

-- At most one order in flight per rental: two presses of Release make one.
CREATE UNIQUE INDEX agent_orders_open ON agent_orders (rental_id) WHERE state IN ('pending', 'started');

CREATE TABLE decisions (
	id        INTEGER PRIMARY KEY,
	user_id   INTEGER NOT NULL,
	rental_id INTEGER NOT NULL REFERENCES rentals (id) ON DELETE CASCADE,
	at        INTEGER NOT NULL,
	kind      TEXT    NOT NULL,
	summary   TEXT    NOT NULL,
	evidence  TEXT    NOT NULL
) STRICT;

CREATE INDEX decisions_rental ON decisions (rental_id, id);

CREATE TABLE cards (
	id           INTEGER PRIMARY KEY,
	user_id      INTEGER NOT NULL,
	rental_id    INTEGER NOT NULL REFERENCES rentals (id) ON DELETE CASCADE,
	kind         TEXT    NOT NULL,
	incident     TEXT    NOT NULL,
	message_id   INTEGER NOT NULL,
	text         TEXT    NOT NULL,
	first_at     INTEGER,
	last_at      INTEGER,
	reminders    INTEGER NOT NULL,
	snooze_until INTEGER,
	kept         INTEGER NOT NULL CHECK (kept IN (0, 1)),
	closed       INTEGER NOT NULL CHECK (closed IN (0, 1)),
	pending      INTEGER NOT NULL CHECK (pending IN (0, 1)),
	UNIQUE (rental_id, kind, incident)
) STRICT;

CREATE INDEX cards_open ON cards (rental_id, kind) WHERE closed = 0;
CREATE INDEX cards_message ON cards (user_id, message_id);

-- notices records once-only messages (a day's summary, a budget level).
CREATE TABLE notices (
	key     TEXT    PRIMARY KEY,
	user_id INTEGER NOT NULL,
	at      INTEGER NOT NULL
) STRICT;
