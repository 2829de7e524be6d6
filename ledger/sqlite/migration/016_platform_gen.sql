-- 016: a generation per user and platform that every insert, update or
-- delete of one of the user's platform_instances rows of that platform
-- moves (triggers), so the sync can keep the rows in memory between
-- rounds and know with one small read that nothing changed them behind
-- it: an /undo (the rentals_unbind_platform trigger), a button press, a
-- second process. Not journaled: it is a version number, not a fact.
CREATE TABLE platform_gen (
	user_id  INTEGER NOT NULL,
	platform TEXT    NOT NULL,
	gen      INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (user_id, platform)
) STRICT;

CREATE TRIGGER platform_instances_gen_insert AFTER INSERT ON platform_instances BEGIN
	INSERT INTO platform_gen (user_id, platform, gen) VALUES (NEW.user_id, NEW.platform, 1)
		ON CONFLICT (user_id, platform) DO UPDATE SET gen = gen + 1;
END;

CREATE TRIGGER platform_instances_gen_update AFTER UPDATE ON platform_instances BEGIN
	INSERT INTO platform_gen (user_id, platform, gen) VALUES (NEW.user_id, NEW.platform, 1)
		ON CONFLICT (user_id, platform) DO UPDATE SET gen = gen + 1;
	INSERT INTO platform_gen (user_id, platform, gen) VALUES (OLD.user_id, OLD.platform, 1)
		ON CONFLICT (user_id, platform) DO UPDATE SET gen = gen + 1;
END;

CREATE TRIGGER platform_instances_gen_delete AFTER DELETE ON platform_instances BEGIN
	INSERT INTO platform_gen (user_id, platform, gen) VALUES (OLD.user_id, OLD.platform, 1)
		ON CONFLICT (user_id, platform) DO UPDATE SET gen = gen + 1;
END;

-- Rows that exist already start at generation 1.
INSERT INTO platform_gen (user_id, platform, gen) SELECT DISTINCT user_id, platform, 1 FROM platform_instances;
