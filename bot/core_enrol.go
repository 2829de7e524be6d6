package bot

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// Enrolment issues and revokes a user's enrolment tokens and logs the
// instances they announced (agent/hub.Enrolment implements it). Issue
// returns the token in clear, to be shown once; revoked is the oldest
// token when issuing one more revoked it (ledger.MaxEnrolTokens).
type Enrolment interface {
	Issue(ctx context.Context, userID int64) (token string, revoked *ledger.EnrolToken, err error)
	// IssueBy is Issue on a team's ledger for its member createdBy, the
	// token's maker (0: Issue).
	IssueBy(ctx context.Context, userID, createdBy int64) (token string, revoked *ledger.EnrolToken, err error)
	Tokens(ctx context.Context, userID int64) ([]ledger.EnrolToken, error)
	Revoke(ctx context.Context, userID int64) (int, error)
	Adopt(ctx context.Context, a ledger.Action, instanceID int64, offer *ledger.PriceOffer) (*ledger.Rental, error)
}

// Instances reads the instances a user's enrolment tokens announced
// (ledger/sqlite's DB implements it), so /adopt can say what is wrong
// with an ID and offer the card's price.
type Instances interface {
	Instance(ctx context.Context, userID, id int64) (ledger.Instance, error)
}

// InstanceCards gives the card of an announced instance that waits for
// an answer again (scheduler.Scheduler implements it; the core does not
// import the scheduler). /undo of a Log or a Not mine sends that card
// after its reply: the old card lost its buttons to the answer. ok is
// false when the instance gets no card of its own now (it is not
// pending, or waits on the merged card, which the implementation
// updates).
type InstanceCards interface {
	InstanceCard(ctx context.Context, userID, instanceID int64) (card chat.Outgoing, ok bool, err error)
}

// undoneInstance is what the reply to /undo adds when the undone action
// answered an announced instance (id): that it waits for an answer again
// and how to give one, and the instance's fresh card to send after the
// reply (ok false: none). The /adopt line is there either way: it needs
// no card.
func (r records) undoneInstance(id int64) (line string, card chat.Outgoing, ok bool) {
	sid := strconv.FormatInt(id, 10)
	if r.c.cards != nil {
		var err error
		card, ok, err = r.c.cards.InstanceCard(r.ctx, r.ledgerID, id)
		if err != nil {
			r.c.log.Error("bot: the card of the instance an undo put back", "user", r.u.UserID, "instance", id, "err", err)
		}
		if ok {
			return r.t("undo_instance_card", sid), card, true
		}
	}
	if insts := r.c.instances(); insts != nil {
		in, err := insts.Instance(r.ctx, r.ledgerID, id)
		switch {
		case err != nil:
			r.c.log.Warn("bot: read the instance an undo put back", "user", r.u.UserID, "instance", id, "err", err)
		case in.State == ledger.InstanceIgnored:
			// It was ignored before it was logged, and is again.
			return r.t("undo_instance_ignored", sid), card, false
		case in.State != ledger.InstancePending:
			return "", card, false
		}
	}
	return r.t("undo_instance", sid), card, false
}

// installLine is the command that installs the agent with token.
func (r agents) installLine(tok string) string {
	url := r.c.publicURL
	if url == "" {
		url = "http://SERVER:8477"
	}
	return fmt.Sprintf("curl -fsSL '%s/agent/install.sh?token=%s' | sh", url, tok)
}

// agentEnrol answers /agent with no name: a new enrolment token in its
// install line, where to put it per platform, and the user's valid
// enrolment tokens.
func (r agents) agentEnrol(command.AgentEnrolCmd) error {
	if r.c.enrol == nil {
		return r.answer(r.plain(r.t("agent_off")))
	}
	// The key is recorded first: a redelivered /agent must not issue a
	// second token.
	if err := r.mark(); err != nil {
		return err
	}
	if r.priv.on {
		// Asked in a group: the line holds a secret, so it goes to the
		// private chat, which must be known to be open first.
		if err := r.send(r.plain(r.t("agent_enrol_private_head"))); err != nil || !r.priv.sent {
			return err
		}
	}
	tok, revoked, err := r.c.enrol.IssueBy(r.ctx, r.ledgerID, r.act().By)
	if err != nil {
		return err
	}
	toks, terr := r.c.enrol.Tokens(r.ctx, r.ledgerID)
	if terr != nil {
		r.c.log.Warn("/agent: list enrolment tokens", "err", terr)
	}
	issued := r.issuedTimes(toks, revoked)
	var sb strings.Builder
	sb.WriteString(r.t("agent_enrol", r.installLine(tok)))
	if w := r.unreachableURL(); w != "" {
		sb.WriteString("\n\n" + w)
	}
	sb.WriteString("\n\n" + r.t("agent_enrol_where"))
	if revoked != nil {
		sb.WriteString("\n\n" + r.t("agent_enrol_revoked_oldest", issued(revoked.IssuedAt), ledger.MaxEnrolTokens))
	}
	if terr == nil {
		sb.WriteString("\n\n" + r.enrolTokenList(toks, issued))
	}
	if r.c.downloads != nil {
		if path, err := r.c.downloads.AgentBinary(); err != nil {
			r.c.log.Info("/agent: the agent binary cannot be downloaded", "err", err)
			sb.WriteString("\n\n" + r.t("agent_no_binary", path))
		}
	}
	return r.send(r.plain(sb.String()))
}

// enrolTokenList lists the valid enrolment tokens, newest last: when each
// was issued (issued formats it) and last used, and how many instances
// it announced.
func (r agents) enrolTokenList(toks []ledger.EnrolToken, issued func(time.Time) string) string {
	var sb strings.Builder
	sb.WriteString(r.t("agent_enrol_tokens", len(toks), ledger.MaxEnrolTokens))
	for i, t := range toks {
		used := r.t("never")
		if !t.LastUsed.IsZero() {
			used = r.when(t.LastUsed.Truncate(time.Minute))
		}
		sb.WriteString("\n" + r.t("agent_enrol_token_line", i+1, issued(t.IssuedAt), used, t.Instances))
	}
	return sb.String()
}

// issuedTimes returns how /agent shows the issue times of toks and of
// revoked (nil: none): to the minute with the day when not today, as the
// bot's other replies show times, but to the second where two of them
// share a minute. Tokens are never shown again: they are told apart by
// their issue time alone.
func (r agents) issuedTimes(toks []ledger.EnrolToken, revoked *ledger.EnrolToken) func(time.Time) string {
	perMinute := map[time.Time]int{}
	for _, t := range toks {
		perMinute[t.IssuedAt.Truncate(time.Minute)]++
	}
	if revoked != nil {
		perMinute[revoked.IssuedAt.Truncate(time.Minute)]++
	}
	return func(t time.Time) string {
		if perMinute[t.Truncate(time.Minute)] > 1 {
			return r.when(t.Truncate(time.Second))
		}
		return r.when(t.Truncate(time.Minute))
	}
}

// agentRevoke answers /agent revoke: every enrolment token of the user is
// revoked (their per-rental agent tokens are not touched).
func (r agents) agentRevoke(command.AgentRevokeCmd) error {
	if r.c.enrol == nil {
		return r.answer(r.plain(r.t("agent_off")))
	}
	if err := r.adminOnly(); err != nil {
		return err // on a team it revokes every member's enrolment tokens
	}
	if err := r.mark(); err != nil {
		return err
	}
	n, err := r.c.enrol.Revoke(r.ctx, r.ledgerID)
	if err != nil {
		return err
	}
	if n == 0 {
		return r.send(r.plain(r.t("agent_revoke_none")))
	}
	return r.send(r.plain(r.t("agent_revoke_done", n)))
}

// instances is the reader of announced instances: Config.Instances, else
// the store when it keeps them.
func (c *Core) instances() Instances {
	if c.insts != nil {
		return c.insts
	}
	if i, ok := c.store.(Instances); ok {
		return i
	}
	return nil
}

// adopt logs an announced instance as a rental, as its card's Log button
// does: at the price given (its currency from a symbol, else the
// instance's platform profile, else the user's usual one) or at the price
// the card offers.
func (r agents) adopt(c command.AdoptCmd) error {
	if r.c.enrol == nil {
		return r.answer(r.plain(r.t("agent_off")))
	}
	var in ledger.Instance
	if insts := r.c.instances(); insts != nil {
		var err error
		in, err = insts.Instance(r.ctx, r.ledgerID, c.ID)
		if ledger.ErrorCode(err) == ledger.ENOTFOUND {
			return ledger.Errorc(ledger.ENOTFOUND, "no_instance", strconv.FormatInt(c.ID, 10))
		}
		if err != nil {
			return err
		}
		if in.State == ledger.InstanceBound {
			name := "?"
			if b, err := r.book(); err == nil {
				for _, x := range b.Rentals {
					if x.ID == in.RentalID {
						name = x.Name
					}
				}
			}
			return ledger.Errorc(ledger.ECONFLICT, "instance_bound", strconv.FormatInt(c.ID, 10), name)
		}
	}
	var offer *ledger.PriceOffer
	if c.Price != nil {
		cur := c.Price.Currency
		if cur == "" {
			if p, ok := ledger.LookupProfile(in.Platform); ok && in.Platform != "" {
				cur = p.Currency
			} else {
				cur = r.defaultCurrency(nil)
			}
		}
		offer = &ledger.PriceOffer{Price: c.Price.Price(), Currency: cur}
	} else if in.ID != 0 {
		b, err := r.book()
		if err != nil {
			return err
		}
		if o, ok := ledger.OfferFor(b, in); ok {
			offer = &o
		}
	}
	x, err := r.c.enrol.Adopt(r.ctx, r.act(), c.ID, offer)
	if err != nil {
		return err
	}
	return r.send(r.plain(r.adoptedText(x) + r.reuseNote(x)))
}

// adoptedText is "✓ Logged as runpod-abc123 from 10:02 at $0.79/h. /undo
// takes it back." (or, unpriced, how to set the price).
func (r agents) adoptedText(x *ledger.Rental) string {
	from := view.FormatTime(x.StartedAt().Truncate(time.Minute), r.loc, r.now, r.lang)
	if !x.Priced {
		return r.t("adopt_done_unpriced", x.Name, from)
	}
	return r.t("adopt_done", x.Name, from, view.FormatPrice(x.Price, x.Currency, r.lang))
}
