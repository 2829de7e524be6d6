-- 005: the chat transport's inbox: updates fetched from Telegram and kept
-- until they are handled and answered, so the offset confirmed to
-- Telegram can move past them at once (see bot/telegram).

CREATE TABLE inbox (
	update_id INTEGER PRIMARY KEY,        -- Telegram's update_id
	user_id   INTEGER NOT NULL,
	chat_id   INTEGER NOT NULL,
	sent_at   INTEGER NOT NULL,           -- the message's date (Unix seconds); 0 if it has none
	payload   TEXT    NOT NULL,           -- the update, as the transport encoded it
	handled   INTEGER NOT NULL DEFAULT 0 CHECK (handled IN (0, 1)),
	reply     TEXT    NOT NULL DEFAULT '' -- set with handled: the answer still to send
) STRICT;

CREATE INDEX inbox_user ON inbox (handled, user_id, update_id);
