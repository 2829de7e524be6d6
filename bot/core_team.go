package bot

import (
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// resolveLedger sets the ledger this update reads and writes (r.ledgerID,
// r.team): in a team's room, that team's when the sender is a member;
// else the one the sender chose with /use, when they still belong to it;
// else their own. A person admitted to a team from outside the allow list
// has no ledger of their own: their commands go to a team of theirs.
func (r *req) resolveLedger() error {
	r.ledgerID, r.team = r.u.UserID, nil
	ts := r.c.teams
	if ts == nil {
		return nil
	}
	if r.u.ChatType == chat.ChatGroup || r.u.ChatType == chat.ChatSupergroup {
		t, err := ts.TeamByRoom(r.ctx, r.u.ChatID)
		switch {
		case err == nil:
			m, err := ts.Member(r.ctx, t.ID, r.u.UserID)
			if err == nil {
				r.ledgerID, r.team = t.Ledger(), &ledger.Membership{Team: t, Member: m}
				return nil
			}
			if ledger.ErrorCode(err) != ledger.ENOTFOUND {
				return err
			}
		case ledger.ErrorCode(err) != ledger.ENOTFOUND:
			return err
		}
	}
	id, err := ts.Use(r.ctx, r.u.UserID)
	if err != nil {
		return err
	}
	teamID, ok := ledger.TeamOf(id)
	if !ok {
		return nil
	}
	t, err := ts.Team(r.ctx, teamID)
	if err != nil {
		return err
	}
	m, err := ts.Member(r.ctx, teamID, r.u.UserID)
	if ledger.ErrorCode(err) == ledger.ENOTFOUND {
		return nil // left or removed since /use: back to their own
	}
	if err != nil {
		return err
	}
	r.ledgerID, r.team = t.Ledger(), &ledger.Membership{Team: t, Member: m}
	return nil
}

// teamRoles returns the sender's team ledgers with their role in each,
// for a press of a team card's button (chat.ButtonPress.Teams).
func (r *req) teamRoles() (map[int64]string, error) {
	if r.c.teams == nil {
		return nil, nil
	}
	ms, err := r.c.teams.TeamsOf(r.ctx, r.u.UserID)
	if err != nil || len(ms) == 0 {
		return nil, err
	}
	out := make(map[int64]string, len(ms))
	for _, m := range ms {
		out[m.Team.Ledger()] = string(m.Member.Role)
	}
	return out, nil
}
