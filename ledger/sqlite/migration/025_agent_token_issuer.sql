-- 025: who issued an agent token (docs/design.md section 11). On a team's
-- ledger an admin may issue the token of a teammate's rental (/agent
-- NAME); the install line went to the admin, who may keep a copy. When
-- that admin leaves or is removed, the tokens they issued for rentals
-- still in the team are revoked with the removal. 0: issued before this
-- column, on a personal ledger by its user, or by the system (an
-- enrolled instance's adoption).
ALTER TABLE agent_tokens ADD COLUMN issued_by INTEGER NOT NULL DEFAULT 0;
