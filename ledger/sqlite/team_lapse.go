package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// This file implements ledger.TeamStore's closing of approvals that no
// longer apply (ledger.ApprovalLapsed) and the admins' cards of each
// approval, kept so that a lapsed approval's cards can be edited.

// LapseApproval moves approval id from pending to lapsed at at, in one
// conditional update (UPDATE … WHERE state = 'pending'), so it is
// race-safe with DecideApproval: of an admin's press and the system's
// lapse at once, the first to commit wins. lapsed is false and ap the
// stored approval, unchanged, when it was not pending (decided, or
// lapsed already: a second lapse is a no-op). decided_at is when it
// lapsed and decided_by stays unset: nobody decided it. Not journaled,
// like OpenApproval and Reminded: it is the system's bookkeeping, not a
// person's action, and /undo has nothing to take back. ENOTFOUND
// "approval_unknown".
func (rs *Rosters) LapseApproval(ctx context.Context, id int64, at time.Time) (ledger.Approval, bool, error) {
	at = sec(at)
	if at.IsZero() {
		at = rs.db.now()
	}
	var (
		out    ledger.Approval
		lapsed bool
	)
	err := rs.db.withWrite(ctx, func(tx *wtx) error {
		res, err := tx.ExecContext(ctx, `UPDATE team_approvals SET state = 'lapsed', decided_at = ? WHERE id = ? AND state = 'pending'`, unix(at), id)
		if err != nil {
			return fmt.Errorf("sqlite: lapse approval %d: %w", id, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("sqlite: lapse approval %d: %w", id, err)
		}
		lapsed = n == 1
		out, err = approvalByID(ctx, tx, id)
		return err
	})
	if err != nil {
		return ledger.Approval{}, false, storeError(err)
	}
	return out, lapsed, nil
}

// PendingApprovalTeams returns the IDs of the teams with a pending
// approval, ascending.
func (rs *Rosters) PendingApprovalTeams(ctx context.Context) ([]int64, error) {
	return queryAll(ctx, rs.db.reader, "teams with pending approvals", func(s scanner) (int64, error) {
		var id int64
		err := s.Scan(&id)
		return id, err
	}, `SELECT DISTINCT team_id FROM team_approvals WHERE state = 'pending' ORDER BY team_id`)
}

// AddApprovalCard records card c of approval id (ENOTFOUND
// "approval_unknown" when there is no such approval; EINVALID for a
// message ID below 1). Recording the same card twice keeps one.
func (rs *Rosters) AddApprovalCard(ctx context.Context, id int64, c ledger.ApprovalCard) error {
	if c.MessageID < 1 {
		return ledger.Errorf(ledger.EINVALID, "an approval card's message ID is positive, not %d", c.MessageID)
	}
	return storeError(rs.db.withWrite(ctx, func(tx *wtx) error {
		if _, err := approvalByID(ctx, tx, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO team_approval_cards (approval_id, user_id, chat_id, message_id) VALUES (?, ?, ?, ?)
			ON CONFLICT DO NOTHING`, id, c.UserID, c.ChatID, c.MessageID)
		if err != nil {
			return fmt.Errorf("sqlite: card of approval %d: %w", id, err)
		}
		return nil
	}))
}

// ApprovalCards returns the cards recorded for approval id, oldest first
// (none for an unknown one).
func (rs *Rosters) ApprovalCards(ctx context.Context, id int64) ([]ledger.ApprovalCard, error) {
	return queryAll(ctx, rs.db.reader, "approval cards", func(s scanner) (ledger.ApprovalCard, error) {
		var c ledger.ApprovalCard
		err := s.Scan(&c.UserID, &c.ChatID, &c.MessageID)
		return c, err
	}, `SELECT user_id, chat_id, message_id FROM team_approval_cards WHERE approval_id = ? ORDER BY rowid`, id)
}
