package bot

import (
	"context"
	"slices"
	"strings"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// revokedText says, in lang, which rentals' agent tokens were revoked
// with who's removal (how "removed") or leaving ("left"), and how to get
// a new install line: /agent NAME, which in a group sends the line
// privately. It names no token and no line, so it may go to the room.
func revokedText(lang string, rm ledger.Removal, who, how string) chat.RawHTML {
	switch len(rm.Revoked) {
	case 0:
		return ""
	case 1:
		return chat.RawHTML(teamTexts.Render(lang, "team_token_revoked_"+how, rm.Revoked[0].Rental, who))
	}
	return chat.RawHTML(teamTexts.Render(lang, "team_tokens_revoked_"+how, strings.Join(rm.RevokedNames(), ", "), who))
}

// tokenRevoker revokes a rental's agent tokens and drops what the hub
// cached of them (agent/hub.Tokens does).
type tokenRevoker interface {
	Revoke(ctx context.Context, rentalID int64) error
}

// forgetRevoked tells the agent hub that the store revoked the agent
// tokens of rm.Revoked with a removal. The hub trusts a token it looked
// up for a while (hub.Config.TokenTTL); without this a removed member's
// copy of a token would still report and receive orders until then. A
// failure is logged only: the tokens are revoked in the store, and the
// hub reads them again when its cache expires.
func (r teams) forgetRevoked(rm ledger.Removal) {
	if len(rm.Revoked) == 0 {
		return
	}
	tr, ok := r.c.agents.(tokenRevoker)
	if !ok {
		if tr, ok = r.c.watcher.(tokenRevoker); !ok {
			return
		}
	}
	for _, t := range rm.Revoked {
		if err := tr.Revoke(r.ctx, t.RentalID); err != nil {
			r.c.log.Warn("bot: tell the hub of an agent token revoked with a team removal", "rental", t.RentalID, "err", err)
		}
	}
}

// tellIssuedOwners tells the owner of each rental whose agent token the
// removed member (who) had issued, and which stays theirs in team, that the token
// was revoked and how to get a new install line: privately, never naming
// the token. The sender of the command read it in the reply.
func (r teams) tellIssuedOwners(rm ledger.Removal, team, who, how string) {
	byOwner := map[int64][]string{}
	var owners []int64
	for _, t := range rm.Revoked {
		if !t.Issued || t.Owner == 0 || t.Owner == r.u.UserID {
			continue
		}
		if _, ok := byOwner[t.Owner]; !ok {
			owners = append(owners, t.Owner)
		}
		byOwner[t.Owner] = append(byOwner[t.Owner], t.Rental)
	}
	slices.Sort(owners)
	for _, o := range owners {
		lang := r.userLang(o)
		r.tellPrivately(o, lang, "team_issued_token_revoked_"+how, strings.Join(byOwner[o], ", "), who, team)
	}
}
