-- 005: last_at is where the idle evidence of an interval ends: the server
-- time of the last idle sample heard. The hub moves it forward at every
-- flush while the interval is open; at a restart the open interval (its
-- from_at and last_at) is what the agent's idle state is rebuilt from, so
-- the state and the intervals always agree. NULL on rows written before.

ALTER TABLE idle_intervals ADD COLUMN last_at INTEGER;
