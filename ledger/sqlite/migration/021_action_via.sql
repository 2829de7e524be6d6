-- 021: how each journaled action came to be (docs/design.md section 3,
-- /undo): 'command' a message the user typed, 'button' a button the user
-- pressed, '' anything else (the platform sync, an agent, the scheduler,
-- and every action recorded before this column). /undo reverses a change
-- at once only when it came from the user's last accepted command; for
-- the others it asks first.
ALTER TABLE actions ADD COLUMN via TEXT NOT NULL DEFAULT '' CHECK (via IN ('', 'command', 'button'));
