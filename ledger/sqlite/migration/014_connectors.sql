-- 014: platform connectors. One row per user and platform: the API key
-- sealed by the server (connector/vault; the plaintext is never stored),
-- its last four characters for the /connect listing, and what the sync
-- loop last learnt with it.

CREATE TABLE connectors (
	user_id       INTEGER NOT NULL REFERENCES users (id),
	platform      TEXT    NOT NULL,
	key_enc       BLOB    NOT NULL CHECK (length(key_enc) BETWEEN 1 AND 4096),
	key_hint      TEXT    NOT NULL DEFAULT '' CHECK (length(key_hint) <= 4),
	added_at      INTEGER NOT NULL,
	checked_at    INTEGER,                        -- the last time the platform accepted the key; NULL never
	rejected_at   INTEGER,                        -- NULL while the key is accepted
	rejected_said INTEGER NOT NULL DEFAULT 0 CHECK (rejected_said IN (0, 1)),
	last_sync_at  INTEGER,                        -- NULL before the first sync round
	last_error    TEXT    NOT NULL DEFAULT '',
	UNIQUE (user_id, platform)
) STRICT;
