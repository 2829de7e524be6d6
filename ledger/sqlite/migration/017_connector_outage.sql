-- 017: the outage a connector's user was told of ("RunPod has not answered
-- properly since ..., you will be told when it answers again"), so that
-- the promise survives a restart: the next clean round tells it over, and
-- a failing round after the restart does not tell it a second time.
-- outage_kind is the failure kind told ('' none), outage_since when the
-- failures began.
ALTER TABLE connectors ADD COLUMN outage_kind TEXT NOT NULL DEFAULT '' CHECK (length(outage_kind) <= 32);
ALTER TABLE connectors ADD COLUMN outage_since INTEGER;
