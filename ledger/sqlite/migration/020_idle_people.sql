-- 020: how long a connected person who does nothing holds an automatic stop or
-- release (docs/design.md section 7): auto_policies.idle_people_ns is the
-- rental's bound in nanoseconds (0 the default, 2 h; -1 none: a connection
-- holds however idle), agent_orders.idle_people_s the bound an automatic
-- order carries and is signed with (0 none).
ALTER TABLE auto_policies ADD COLUMN idle_people_ns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agent_orders ADD COLUMN idle_people_s INTEGER NOT NULL DEFAULT 0;
