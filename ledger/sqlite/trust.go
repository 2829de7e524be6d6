package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/gpuledger/gpuledger/ledger"
)

// AgentTrust returns the rental's standing answer about its agent; ok
// false when there is none.
func (ags *Agents) AgentTrust(ctx context.Context, rentalID int64) (ledger.AgentTrust, bool, error) {
	t := ledger.AgentTrust{RentalID: rentalID}
	var state, said, listed string
	var msg, at int64
	err := ags.db.reader.QueryRowContext(ctx, `SELECT user_id, state, said, listed, message_id, at FROM agent_trust WHERE rental_id = ?`,
		rentalID).Scan(&t.UserID, &state, &said, &listed, &msg, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return t, false, nil
	}
	if err != nil {
		return t, false, storeError(fmt.Errorf("sqlite: agent trust: %w", err))
	}
	t.State, t.MessageID, t.At = ledger.TrustState(state), int(msg), fromUnix(at)
	if err := json.Unmarshal([]byte(said), &t.Said); err != nil {
		return t, false, fmt.Errorf("sqlite: agent trust: said: %w", err)
	}
	if err := json.Unmarshal([]byte(listed), &t.Listed); err != nil {
		return t, false, fmt.Errorf("sqlite: agent trust: listed: %w", err)
	}
	return t, true, nil
}

// SaveAgentTrust inserts or replaces the rental's row. Errors: EINVALID
// (an unknown state, facts over 1 KiB), ENOTFOUND (the rental is not
// the user's).
func (ags *Agents) SaveAgentTrust(ctx context.Context, t ledger.AgentTrust) error {
	if !t.State.Valid() {
		return ledger.Errorf(ledger.EINVALID, "unknown trust state %q", t.State)
	}
	said, err := json.Marshal(t.Said)
	if err != nil {
		return fmt.Errorf("sqlite: save agent trust: %w", err)
	}
	listed, err := json.Marshal(t.Listed)
	if err != nil {
		return fmt.Errorf("sqlite: save agent trust: %w", err)
	}
	if len(said) > 1024 || len(listed) > 1024 {
		return ledger.Errorf(ledger.EINVALID, "the agent's facts are over 1 KiB")
	}
	return ags.db.withTx(ctx, func(tx *sql.Tx) error {
		var owner int64
		err := tx.QueryRowContext(ctx, `SELECT user_id FROM rentals WHERE id = ?`, t.RentalID).Scan(&owner)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && owner != t.UserID) {
			return ledger.Errorf(ledger.ENOTFOUND, "no rental %d of user %d", t.RentalID, t.UserID)
		}
		if err != nil {
			return fmt.Errorf("sqlite: save agent trust: %w", err)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO agent_trust (rental_id, user_id, state, said, listed, message_id, at)
			VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (rental_id) DO UPDATE SET state = excluded.state, said = excluded.said, listed = excluded.listed,
				message_id = excluded.message_id, at = excluded.at`,
			t.RentalID, t.UserID, string(t.State), string(said), string(listed), max(t.MessageID, 0), unix(sec(t.At)))
		if err != nil {
			return constraintError(err, "save agent trust", "the agent's trust breaks a rule of the store")
		}
		return nil
	})
}
