-- 004: lease ends moved by Extend, and the Release at end choice.

CREATE TABLE lease_ends (
	rental_id      INTEGER PRIMARY KEY REFERENCES rentals (id) ON DELETE CASCADE,
	ends_at        INTEGER NOT NULL,
	release_at_end INTEGER NOT NULL CHECK (release_at_end IN (0, 1))
) STRICT;
