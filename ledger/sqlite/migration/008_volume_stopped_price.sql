-- 008: a volume's price while its rental is stopped or released, as a
-- decimal string per GB per price_unit; NULL: the same price in every
-- state (all volumes written before).

ALTER TABLE volumes ADD COLUMN stopped_price TEXT;
