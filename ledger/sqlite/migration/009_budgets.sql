-- 009: monthly budgets, one per user and currency. A user spending in
-- yuan and dollars keeps a budget in each; amounts in different currencies
-- are never added up. The single budget in users moves here.

CREATE TABLE budgets (
	user_id  INTEGER NOT NULL REFERENCES users (id),
	currency TEXT    NOT NULL,                    -- ISO 4217 code
	amount   TEXT    NOT NULL,                    -- decimal, > 0
	PRIMARY KEY (user_id, currency)
) STRICT;

INSERT INTO budgets (user_id, currency, amount)
	SELECT id, budget_currency, budget FROM users WHERE budget <> '0' AND budget_currency <> '';

ALTER TABLE users DROP COLUMN budget;
ALTER TABLE users DROP COLUMN budget_currency;
