-- 010: changes of a volume's price terms part-way through its life (a
-- platform changed its storage price, the volume moved to another tier).
-- The terms in volumes apply from creation until the first change, so the
-- volumes written before keep their bill without any row here.

CREATE TABLE volume_prices (
	id            INTEGER PRIMARY KEY,
	volume_id     INTEGER NOT NULL REFERENCES volumes (id) ON DELETE CASCADE,
	action_id     INTEGER NOT NULL REFERENCES actions (id),
	at            INTEGER NOT NULL,                -- Unix seconds, from then on
	price         TEXT    NOT NULL,                -- decimal per GB per price_unit
	price_unit    TEXT    NOT NULL,
	stopped_price TEXT                             -- NULL: price in every state
) STRICT;

CREATE INDEX volume_prices_volume ON volume_prices (volume_id, at, id);
CREATE INDEX volume_prices_action ON volume_prices (action_id);
