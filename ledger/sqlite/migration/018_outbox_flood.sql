-- 018: what the user must be told survives a crash, and a flood of new
-- instances is one card.
--
-- outbox: a message about a change, written in the transaction of the
-- change it reports and deleted once it is sent: a crash between the
-- commit and the send leaves the row, and it is sent after the restart
-- (at least once; at most one duplicate, when the crash falls between
-- the send and the delete). topic names the sender that drains it
-- ('sync:runpod'), so each is drained under its own lock.
CREATE TABLE outbox (
	id         INTEGER PRIMARY KEY,
	user_id    INTEGER NOT NULL REFERENCES users (id),
	topic      TEXT    NOT NULL CHECK (length(topic) BETWEEN 1 AND 64),
	text       TEXT    NOT NULL CHECK (length(CAST(text AS BLOB)) BETWEEN 1 AND 8192),
	silent     INTEGER NOT NULL DEFAULT 0 CHECK (silent IN (0, 1)),
	created_at INTEGER NOT NULL
) STRICT;

CREATE INDEX outbox_topic ON outbox (user_id, topic, id);

-- sync_floods: a connector whose platform listed more new instances than
-- the sync logs by itself (connsync.MaxNewPerRound, MaxNewPerDay): one
-- card per connector, edited in place, and the user's answer to it.
-- state: 'open' (no rental from the listing until answered), 'logall'
-- (log up to count of them), 'ignore' (decline those listed). The row
-- is written before its card is sent (message_id 0 until then), so a
-- crash between the two sends the card after the restart.
CREATE TABLE sync_floods (
	user_id    INTEGER NOT NULL REFERENCES users (id),
	platform   TEXT    NOT NULL CHECK (length(platform) BETWEEN 1 AND 32),
	state      TEXT    NOT NULL CHECK (state IN ('open', 'logall', 'ignore')),
	count      INTEGER NOT NULL CHECK (count >= 0),
	logged     INTEGER NOT NULL DEFAULT 0 CHECK (logged >= 0),
	message_id INTEGER NOT NULL DEFAULT 0 CHECK (message_id >= 0),
	text       TEXT    NOT NULL DEFAULT '',
	since      INTEGER NOT NULL,
	PRIMARY KEY (user_id, platform)
) STRICT;
