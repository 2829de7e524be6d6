-- 022: what each rental delivered (docs/design.md section 5, "bench" and
-- "jobs"). Written by the hub from what a rental's agent sent, or by the
-- user naming a span of a rental (/job), never by the money's actions:
-- the rows carry no action_id and go with their rental.
--
-- benches: one row per bench run the agent sent. report_id is the
-- agent's random ID of the run: a retry after a lost answer is the same
-- row (unique per rental). bench is the perf.Bench as JSON text, after
-- the hub's bounds; bounded the JSON array of the figures the hub zeroed.
CREATE TABLE benches (
	id          INTEGER PRIMARY KEY,
	rental_id   INTEGER NOT NULL REFERENCES rentals (id) ON DELETE CASCADE,
	user_id     INTEGER NOT NULL REFERENCES users (id),
	report_id   TEXT    NOT NULL CHECK (length(report_id) BETWEEN 1 AND 64),
	received_at INTEGER NOT NULL,
	bench       TEXT    NOT NULL CHECK (length(CAST(bench AS BLOB)) <= 131072),
	bounded     TEXT    NOT NULL DEFAULT '[]' CHECK (length(CAST(bounded AS BLOB)) <= 4096)
) STRICT;

CREATE UNIQUE INDEX benches_report ON benches (rental_id, report_id);
CREATE INDEX benches_user ON benches (user_id, received_at);

-- job_runs: one run of the user's own work on a rental. source 'agent' a
-- job the agent wrapped (run --label L -- CMD), unique on the rental and
-- its start so a resent heartbeat or a restarted agent stores it once;
-- 'chat' a span the user named afterwards. label '' unlabelled.
CREATE TABLE job_runs (
	id         INTEGER PRIMARY KEY,
	rental_id  INTEGER NOT NULL REFERENCES rentals (id) ON DELETE CASCADE,
	user_id    INTEGER NOT NULL REFERENCES users (id),
	label      TEXT    NOT NULL CHECK (length(label) <= 64),
	command    TEXT    NOT NULL CHECK (length(CAST(command AS BLOB)) <= 1024),
	started_at INTEGER NOT NULL,
	ended_at   INTEGER NOT NULL CHECK (ended_at >= started_at),
	exit_code  INTEGER NOT NULL,
	source     TEXT    NOT NULL CHECK (source IN ('agent', 'chat')),
	created_at INTEGER NOT NULL
) STRICT;

CREATE UNIQUE INDEX job_runs_agent ON job_runs (rental_id, started_at, source) WHERE source = 'agent';
CREATE INDEX job_runs_user ON job_runs (user_id, label, started_at);

-- first_work: when the rental first did sustained GPU work (the setup
-- tax's end), recorded once.
CREATE TABLE first_work (
	rental_id INTEGER PRIMARY KEY REFERENCES rentals (id) ON DELETE CASCADE,
	at        INTEGER NOT NULL
) STRICT;

-- users.bench_off: the user turned receipts off (ledger.Settings.BenchOff).
ALTER TABLE users ADD COLUMN bench_off INTEGER NOT NULL DEFAULT 0 CHECK (bench_off IN (0, 1));
