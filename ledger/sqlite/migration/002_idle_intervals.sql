-- 002: idle intervals the agent hub records for a rental: [from_at, to_at),
-- to_at NULL while the host is still idle. Written by the hub, not by a
-- user's action, so the rows carry no action_id; they go with their rental.

CREATE TABLE idle_intervals (
	id        INTEGER PRIMARY KEY,
	rental_id INTEGER NOT NULL REFERENCES rentals (id) ON DELETE CASCADE,
	from_at   INTEGER NOT NULL,
	to_at     INTEGER CHECK (to_at IS NULL OR to_at >= from_at)
) STRICT;

CREATE INDEX idle_intervals_rental ON idle_intervals (rental_id, from_at);
