-- 001: the ledger's core tables.
--
-- Times are INTEGER Unix seconds (UTC). Decimals are TEXT in
-- ledger.Decimal.String form. Durations are INTEGER seconds (min_s, step_s)
-- or nanoseconds (*_ns). Booleans are INTEGER 0/1.

CREATE TABLE users (
	id              INTEGER PRIMARY KEY,           -- Telegram user ID (the console's owner has a fixed one)
	lang            TEXT    NOT NULL,              -- "en" or "zh"
	tz              TEXT    NOT NULL,              -- IANA zone name; "" means UTC
	summary_at      INTEGER NOT NULL,              -- minutes after local midnight
	idle_warn_ns    INTEGER NOT NULL,
	silent_ns       INTEGER NOT NULL,
	quiet_from      INTEGER NOT NULL,              -- minutes after midnight; -1 none
	quiet_to        INTEGER NOT NULL,
	long_run_ns     INTEGER NOT NULL,
	budget          TEXT    NOT NULL,              -- decimal; "0" none
	budget_currency TEXT    NOT NULL,
	created_at      INTEGER NOT NULL
) STRICT;

-- actions is the journal: one row per mutating call, written in the same
-- transaction as the change. key makes an action idempotent. Rows an
-- action inserted carry its id in their action_id; what it updated is
-- named by rental_id/volume_id and its previous value kept in prev (JSON).
CREATE TABLE actions (
	id        INTEGER PRIMARY KEY,
	user_id   INTEGER NOT NULL,                    -- no foreign key: MarkHandled may record a stranger's message
	kind      TEXT    NOT NULL,                    -- "rent", "stop", "storage", "undo", "handled", ...
	name      TEXT    NOT NULL DEFAULT '',         -- the rental or volume it touched
	at        INTEGER NOT NULL,
	key       TEXT    UNIQUE,                      -- idempotency key; NULL for none
	undoable  INTEGER NOT NULL CHECK (undoable IN (0, 1)),
	undone_by INTEGER REFERENCES actions (id),     -- the undo action that reversed it
	rental_id INTEGER,                             -- the rental it changed, if any
	volume_id INTEGER,                             -- the volume it changed, if any
	prev      TEXT                                 -- JSON of the values it replaced, for updates
) STRICT;

CREATE INDEX actions_undo ON actions (user_id, id) WHERE undoable = 1 AND undone_by IS NULL;

CREATE TABLE rentals (
	id                   INTEGER PRIMARY KEY,
	user_id              INTEGER NOT NULL REFERENCES users (id),
	action_id            INTEGER NOT NULL REFERENCES actions (id),
	name                 TEXT    NOT NULL,
	platform             TEXT    NOT NULL,
	gpu                  TEXT    NOT NULL,
	gpu_count            INTEGER NOT NULL CHECK (gpu_count >= 1),
	mode                 TEXT    NOT NULL,
	priced               INTEGER NOT NULL CHECK (priced IN (0, 1)),
	price                TEXT    NOT NULL,         -- the rate at start
	price_unit           TEXT    NOT NULL,
	currency             TEXT    NOT NULL,
	min_s                INTEGER NOT NULL,
	step_s               INTEGER NOT NULL,
	floor                TEXT    NOT NULL,
	lease_ns             INTEGER NOT NULL,
	traffic_priced       INTEGER NOT NULL DEFAULT 0 CHECK (traffic_priced IN (0, 1)),
	traffic_price_per_gb TEXT    NOT NULL DEFAULT '0',
	traffic_free_gb      TEXT    NOT NULL DEFAULT '0',
	traffic_direction    TEXT    NOT NULL DEFAULT '',
	released             INTEGER NOT NULL DEFAULT 0 CHECK (released IN (0, 1)), -- has a release event
	created_at           INTEGER NOT NULL
) STRICT;

-- A name may be reused only once the rental holding it is released.
CREATE UNIQUE INDEX rentals_live_name ON rentals (user_id, name) WHERE released = 0;
CREATE INDEX rentals_user ON rentals (user_id, name);
CREATE INDEX rentals_action ON rentals (action_id);

CREATE TABLE rental_events (
	id         INTEGER PRIMARY KEY,
	rental_id  INTEGER NOT NULL REFERENCES rentals (id) ON DELETE CASCADE,
	action_id  INTEGER NOT NULL REFERENCES actions (id),
	kind       TEXT    NOT NULL CHECK (kind IN ('start', 'stop', 'resume', 'price', 'release')),
	at         INTEGER NOT NULL,
	price      TEXT,                               -- for kind = 'price'
	price_unit TEXT
) STRICT;

CREATE INDEX rental_events_rental ON rental_events (rental_id, id);
CREATE INDEX rental_events_action ON rental_events (action_id);

CREATE TABLE traffic_usage (
	id        INTEGER PRIMARY KEY,
	rental_id INTEGER NOT NULL REFERENCES rentals (id) ON DELETE CASCADE,
	action_id INTEGER NOT NULL REFERENCES actions (id),
	at        INTEGER NOT NULL,
	bytes     INTEGER NOT NULL CHECK (bytes >= 0),
	direction TEXT    NOT NULL CHECK (direction IN ('in', 'out'))
) STRICT;

CREATE INDEX traffic_usage_rental ON traffic_usage (rental_id, at, id);
CREATE INDEX traffic_usage_action ON traffic_usage (action_id);

CREATE TABLE volumes (
	id         INTEGER PRIMARY KEY,
	user_id    INTEGER NOT NULL REFERENCES users (id),
	action_id  INTEGER NOT NULL REFERENCES actions (id),
	name       TEXT    NOT NULL,
	rental_id  INTEGER REFERENCES rentals (id),
	platform   TEXT    NOT NULL,
	currency   TEXT    NOT NULL,
	priced     INTEGER NOT NULL CHECK (priced IN (0, 1)),
	price      TEXT    NOT NULL,
	price_unit TEXT    NOT NULL,
	free_gb    TEXT    NOT NULL,
	deleted    INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0, 1)), -- has a delete event
	created_at INTEGER NOT NULL
) STRICT;

CREATE UNIQUE INDEX volumes_live_name ON volumes (user_id, name) WHERE deleted = 0;
CREATE INDEX volumes_user ON volumes (user_id, name);
CREATE INDEX volumes_rental ON volumes (rental_id);
CREATE INDEX volumes_action ON volumes (action_id);

CREATE TABLE volume_events (
	id        INTEGER PRIMARY KEY,
	volume_id INTEGER NOT NULL REFERENCES volumes (id) ON DELETE CASCADE,
	action_id INTEGER NOT NULL REFERENCES actions (id),
	kind      TEXT    NOT NULL CHECK (kind IN ('create', 'resize', 'delete')),
	at        INTEGER NOT NULL,
	size_gb   TEXT                                 -- for create and resize
) STRICT;

CREATE INDEX volume_events_volume ON volume_events (volume_id, id);
CREATE INDEX volume_events_action ON volume_events (action_id);

CREATE TABLE charges (
	id        INTEGER PRIMARY KEY,
	user_id   INTEGER NOT NULL REFERENCES users (id),
	action_id INTEGER NOT NULL REFERENCES actions (id),
	rental_id INTEGER REFERENCES rentals (id),
	platform  TEXT    NOT NULL,
	amount    TEXT    NOT NULL,
	currency  TEXT    NOT NULL,
	note      TEXT    NOT NULL,
	at        INTEGER NOT NULL
) STRICT;

CREATE INDEX charges_user ON charges (user_id, at);
CREATE INDEX charges_rental ON charges (rental_id);
CREATE INDEX charges_action ON charges (action_id);

CREATE TABLE topups (
	id        INTEGER PRIMARY KEY,
	user_id   INTEGER NOT NULL REFERENCES users (id),
	action_id INTEGER NOT NULL REFERENCES actions (id),
	platform  TEXT    NOT NULL,
	amount    TEXT    NOT NULL,
	currency  TEXT    NOT NULL,
	at        INTEGER NOT NULL
) STRICT;

CREATE INDEX topups_user ON topups (user_id, at);
CREATE INDEX topups_action ON topups (action_id);

CREATE TABLE balances (
	id        INTEGER PRIMARY KEY,
	user_id   INTEGER NOT NULL REFERENCES users (id),
	action_id INTEGER NOT NULL REFERENCES actions (id),
	platform  TEXT    NOT NULL,
	amount    TEXT    NOT NULL,
	currency  TEXT    NOT NULL,
	at        INTEGER NOT NULL
) STRICT;

CREATE INDEX balances_user ON balances (user_id, at);
CREATE INDEX balances_action ON balances (action_id);

-- meta keeps small process-wide values (the transport's update offset,
-- the owner claim code).
CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
) STRICT;
