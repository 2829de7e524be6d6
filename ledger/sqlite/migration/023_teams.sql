-- 023: teams (docs/design.md section 11). A team's ledger is a row of
-- users under ledger.TeamLedger(team id), so every ledger table serves a
-- team unchanged; what follows is who is in it, who owns each record and
-- which project it is charged to. Personal ledgers keep every row as it
-- was: owner 0 and project '' are what a personal record has always
-- meant.

CREATE TABLE teams (
	id         INTEGER PRIMARY KEY,
	name       TEXT    NOT NULL CHECK (length(name) BETWEEN 1 AND 128),
	name_key   TEXT    NOT NULL UNIQUE,            -- lower(name): one team per name
	created_by INTEGER NOT NULL,
	created_at INTEGER NOT NULL,
	room       INTEGER UNIQUE,                     -- the bound group chat; NULL none
	room_title TEXT    NOT NULL DEFAULT ''
) STRICT;

-- A removed or departed member keeps their row (removed_at set), so the
-- history still names them; a later join reuses it.
CREATE TABLE team_members (
	team_id    INTEGER NOT NULL REFERENCES teams (id),
	user_id    INTEGER NOT NULL,
	username   TEXT    NOT NULL DEFAULT '',
	role       TEXT    NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
	joined_at  INTEGER NOT NULL,
	outsider   INTEGER NOT NULL DEFAULT 0 CHECK (outsider IN (0, 1)),
	dm         INTEGER NOT NULL DEFAULT 0 CHECK (dm IN (0, 1)),
	removed_at INTEGER,                            -- NULL while a member
	removed_by INTEGER,
	PRIMARY KEY (team_id, user_id)
) STRICT;

CREATE INDEX team_members_user ON team_members (user_id) WHERE removed_at IS NULL;

-- One-time join codes: only the SHA-256 of the code is kept.
CREATE TABLE team_invites (
	id           INTEGER PRIMARY KEY,
	team_id      INTEGER NOT NULL REFERENCES teams (id),
	hash         BLOB    NOT NULL UNIQUE,
	created_by   INTEGER NOT NULL,
	created_at   INTEGER NOT NULL,
	expires_at   INTEGER NOT NULL,
	for_user     INTEGER NOT NULL DEFAULT 0,
	for_username TEXT    NOT NULL DEFAULT '',
	used_by      INTEGER,                          -- NULL while unused
	used_at      INTEGER
) STRICT;

CREATE INDEX team_invites_open ON team_invites (team_id) WHERE used_by IS NULL;

-- Where each person's commands go (/use): a team's ledger ID; no row is
-- their own ledger.
CREATE TABLE team_use (
	user_id   INTEGER PRIMARY KEY,
	ledger_id INTEGER NOT NULL
) STRICT;

-- Each person's default project in a ledger (/project).
CREATE TABLE team_projects (
	user_id   INTEGER NOT NULL,
	ledger_id INTEGER NOT NULL,
	project   TEXT    NOT NULL,
	PRIMARY KEY (user_id, ledger_id)
) STRICT;

CREATE TABLE team_limits (
	team_id  INTEGER NOT NULL REFERENCES teams (id),
	scope    TEXT    NOT NULL CHECK (scope IN ('team', 'member', 'project')),
	subject  TEXT    NOT NULL,
	currency TEXT    NOT NULL,
	rate     TEXT    NOT NULL DEFAULT '0',         -- per hour, decimal; '0' none
	gpus     INTEGER NOT NULL DEFAULT 0,
	month    TEXT    NOT NULL DEFAULT '0',
	set_by   INTEGER NOT NULL,
	set_at   INTEGER NOT NULL,
	PRIMARY KEY (team_id, scope, subject, currency)
) STRICT;

CREATE TABLE team_approvals (
	id          INTEGER PRIMARY KEY,
	team_id     INTEGER NOT NULL REFERENCES teams (id),
	rental_id   INTEGER NOT NULL REFERENCES rentals (id) ON DELETE CASCADE,
	owner       INTEGER NOT NULL,
	scope       TEXT    NOT NULL,
	subject     TEXT    NOT NULL,
	kind        TEXT    NOT NULL CHECK (kind IN ('rate', 'gpus', 'month')),
	currency    TEXT    NOT NULL,
	lim         TEXT    NOT NULL,
	value       TEXT    NOT NULL,
	state       TEXT    NOT NULL CHECK (state IN ('pending', 'approved', 'stopped')),
	created_at  INTEGER NOT NULL,
	decided_by  INTEGER,
	decided_at  INTEGER,
	reminded_at INTEGER,
	-- the calendar month ("2026-12", in the team ledger's zone) a month
	-- bound's approval is about, so each month is asked once; '' for the
	-- rate and GPU bounds, asked once per rental
	period      TEXT    NOT NULL DEFAULT '',
	UNIQUE (rental_id, scope, subject, kind, period)
) STRICT;

CREATE INDEX team_approvals_team ON team_approvals (team_id, state);

ALTER TABLE rentals ADD COLUMN owner INTEGER NOT NULL DEFAULT 0;
ALTER TABLE rentals ADD COLUMN project TEXT NOT NULL DEFAULT '';
ALTER TABLE volumes ADD COLUMN owner INTEGER NOT NULL DEFAULT 0;
ALTER TABLE volumes ADD COLUMN project TEXT NOT NULL DEFAULT '';
ALTER TABLE charges ADD COLUMN owner INTEGER NOT NULL DEFAULT 0;
ALTER TABLE charges ADD COLUMN project TEXT NOT NULL DEFAULT '';
-- who did it, on a team's ledger (ledger.Action.By); 0 the ledger's user or the system
ALTER TABLE actions ADD COLUMN by_id INTEGER NOT NULL DEFAULT 0;
-- who made an enrolment token, so a removed member's are revoked and an
-- instance it announces is theirs when adopted
ALTER TABLE enrol_tokens ADD COLUMN created_by INTEGER NOT NULL DEFAULT 0;
