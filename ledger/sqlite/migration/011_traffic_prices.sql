-- 011: changes of a rental's traffic price per GB part-way through its
-- life. The terms in rentals apply from the start until the first change,
-- so the rentals written before keep their bill without any row here.

CREATE TABLE traffic_prices (
	id           INTEGER PRIMARY KEY,
	rental_id    INTEGER NOT NULL REFERENCES rentals (id) ON DELETE CASCADE,
	action_id    INTEGER NOT NULL REFERENCES actions (id),
	at           INTEGER NOT NULL,                 -- Unix seconds, from then on
	price_per_gb TEXT    NOT NULL                  -- decimal per GiB
) STRICT;

CREATE INDEX traffic_prices_rental ON traffic_prices (rental_id, at, id);
CREATE INDEX traffic_prices_action ON traffic_prices (action_id);
