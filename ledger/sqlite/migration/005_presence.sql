-- 005: people connected to a rental's host. agent_state.sessions holds the
-- last heartbeat's sessions (JSON of []ledger.Session; NULL for none);
-- auto_policies.wait_for is who holds an automatic action ('' every kind,
-- 'none' nobody, else kinds joined by commas); agent_orders.wait_for is the
-- policy's, signed into an automatic order so the agent refuses it while
-- someone is connected ('' on orders the user asked for).

ALTER TABLE agent_state ADD COLUMN sessions TEXT;
ALTER TABLE auto_policies ADD COLUMN wait_for TEXT NOT NULL DEFAULT '';
ALTER TABLE agent_orders ADD COLUMN wait_for TEXT NOT NULL DEFAULT '';
