package connsync

import (
	"context"

	"github.com/gpuledger/gpuledger/ledger"
)

// chatOf is the chat a ledger's notices and questions go to: a person's
// to Config.ChatID (their private chat); a team's (a platform connected in
// the team) to its room when one is bound, else to its first owner's
// private chat, as the scheduler sends the team's cards. A team the store
// cannot read now falls back to Config.ChatID, whose send then fails and
// is retried as any failed send is.
func (s *Syncer) chatOf(ctx context.Context, ledgerID int64) int64 {
	teamID, ok := ledger.TeamOf(ledgerID)
	ts, isTS := s.store.(ledger.TeamStore)
	if !ok || !isTS {
		return s.cfg.ChatID(ledgerID)
	}
	t, err := ts.Team(ctx, teamID)
	if err != nil {
		s.log.Warn("connsync: read the team of a ledger", "team", teamID, "err", err)
		return s.cfg.ChatID(ledgerID)
	}
	if t.Room != 0 {
		return t.Room
	}
	ms, err := ts.Members(ctx, teamID)
	if err != nil {
		s.log.Warn("connsync: read the team's members", "team", teamID, "err", err)
		return s.cfg.ChatID(ledgerID)
	}
	for _, m := range ms {
		if m.Role == ledger.RoleOwner {
			return s.cfg.ChatID(m.UserID)
		}
	}
	return s.cfg.ChatID(ledgerID)
}
