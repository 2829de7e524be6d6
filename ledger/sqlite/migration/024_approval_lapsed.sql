-- 024: an approval that no longer applies is closed by the system, not
-- left pending (docs/design.md section 11): state 'lapsed' is an
-- approval whose rental was released, left the limit's scope or came
-- back under the bound, whose limit was raised or removed, or whose
-- month is over. decided_at is when it lapsed; decided_by stays NULL
-- (nobody decided it). A lapsed approval of the same key is set back to
-- pending when its rental is over that bound again (OpenApproval).
--
-- SQLite cannot alter a CHECK, so team_approvals is rebuilt with every
-- row, its unique key and its index; nothing references it yet.
CREATE TABLE team_approvals_new (
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
	state       TEXT    NOT NULL CHECK (state IN ('pending', 'approved', 'stopped', 'lapsed')),
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

INSERT INTO team_approvals_new (id, team_id, rental_id, owner, scope, subject, kind, currency, lim, value, state,
		created_at, decided_by, decided_at, reminded_at, period)
	SELECT id, team_id, rental_id, owner, scope, subject, kind, currency, lim, value, state,
		created_at, decided_by, decided_at, reminded_at, period FROM team_approvals;
DROP TABLE team_approvals;
ALTER TABLE team_approvals_new RENAME TO team_approvals;

CREATE INDEX team_approvals_team ON team_approvals (team_id, state);

-- The admins' cards of each approval (each admin's private card and its
-- reminder), so a lapsed approval's cards are edited to say so, their
-- buttons removed. Reopening the approval forgets the old ones.
CREATE TABLE team_approval_cards (
	approval_id INTEGER NOT NULL REFERENCES team_approvals (id) ON DELETE CASCADE,
	user_id     INTEGER NOT NULL,                  -- the admin it went to
	chat_id     INTEGER NOT NULL,
	message_id  INTEGER NOT NULL CHECK (message_id > 0),
	PRIMARY KEY (approval_id, chat_id, message_id)
) STRICT;
