package scheduler

import (
	"context"
	"strconv"
	"strings"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// A team's ledger is an ordinary ledger of the store (ledger.TeamLedger):
// the scheduler iterates it like any user's, signs its cards' buttons for
// the ledger's ID (so every current member may press them, and nobody
// else), and sends its notifications to the team's room (chatOf). The
// cards about a rental name its owner, who also gets a private copy when
// they asked for one (/team dm on).

// cardOwnerAsk is the card that asks a team's room whose a rental with
// no owner is ([Mine]): stored like the other cards, so it is asked
// once, across restarts.
const cardOwnerAsk ledger.CardKind = "owner"

// teams returns the team store: Config.Teams, else the Store when it
// keeps teams; nil when there is none (no team ledger can exist then).
func (s *Scheduler) teams() ledger.TeamStore {
	if s.cfg.Teams != nil {
		return s.cfg.Teams
	}
	if ts, ok := s.store.(ledger.TeamStore); ok {
		return ts
	}
	return nil
}

// teamView is what the cards of one team need: the team (its room) and
// its current members, owners first.
type teamView struct {
	team    ledger.Team
	members []ledger.Member
	byID    map[int64]ledger.Member
}

// teamOf reads the team whose ledger ledgerID is; ok is false for a
// person's ledger or when the store cannot say (logged).
func (s *Scheduler) teamOf(ctx context.Context, ledgerID int64) (*teamView, bool) {
	teamID, isTeam := ledger.TeamOf(ledgerID)
	ts := s.teams()
	if !isTeam || ts == nil {
		return nil, false
	}
	t, err := ts.Team(ctx, teamID)
	if err != nil {
		s.log.Error("scheduler: read team", "team", teamID, "err", err)
		return nil, false
	}
	ms, err := ts.Members(ctx, teamID)
	if err != nil {
		s.log.Error("scheduler: read team members", "team", teamID, "err", err)
		return nil, false
	}
	tv := &teamView{team: t, members: ms, byID: make(map[int64]ledger.Member, len(ms))}
	for _, m := range ms {
		tv.byID[m.UserID] = m
	}
	return tv, true
}

// firstOwner is the team's first owner (Members lists owners first), 0
// when it has none.
func (tv *teamView) firstOwner() int64 {
	for _, m := range tv.members {
		if m.Role == ledger.RoleOwner {
			return m.UserID
		}
	}
	return 0
}

// admins are the team's owners and admins.
func (tv *teamView) admins() []ledger.Member {
	var out []ledger.Member
	for _, m := range tv.members {
		if m.Role.Admin() {
			out = append(out, m)
		}
	}
	return out
}

// name is how owner is named on the team's cards: "@alice" (Member.Name),
// "id<N>" for someone no longer in the team, "" for no owner.
func (tv *teamView) name(owner int64) string {
	if owner == 0 {
		return ""
	}
	if m, ok := tv.byID[owner]; ok {
		return m.Name()
	}
	return "id" + strconv.FormatInt(owner, 10)
}

// chatOf is the chat the notifications of ledgerID go to: a person's
// ledger to Config.ChatID (their private chat); a team's to its room when
// one is bound, else to its first owner's private chat.
func (s *Scheduler) chatOf(ctx context.Context, ledgerID int64) int64 {
	tv, ok := s.teamOf(ctx, ledgerID)
	if !ok {
		return s.cfg.ChatID(ledgerID)
	}
	if tv.team.Room != 0 {
		return tv.team.Room
	}
	if o := tv.firstOwner(); o != 0 {
		return s.cfg.ChatID(o)
	}
	return s.cfg.ChatID(ledgerID)
}

// ownerText begins a team card's text with its rental's owner
// ("@alice, box3 idle 40 min …"; "unclaimed, …" when nobody owns it yet),
// once: a card edited from its own text keeps one prefix. A person's
// card, or a card about no rental, is returned as it is. It also returns
// the owner's private chat for the card's copy (0: none asked for).
func (s *Scheduler) ownerText(ctx context.Context, u *ledger.User, rentalID int64, msg string) (string, int64) {
	if !ledger.IsTeamLedger(u.ID) || rentalID == 0 {
		return msg, 0
	}
	r, err := s.store.RentalByID(ctx, rentalID)
	if err != nil || r.UserID != u.ID {
		return msg, 0
	}
	tv, ok := s.teamOf(ctx, u.ID)
	if !ok {
		return msg, 0
	}
	lg := lang(u)
	who := tv.name(r.Owner)
	if who == "" {
		who = text(lg, "team_unclaimed")
	}
	prefix := tr(lg, "team_owner_prefix", who)
	if !strings.HasPrefix(msg, prefix) {
		// A card edited from its own text after the rental changed hands
		// ([Mine], /team owner) drops the former owner's name first.
		if i := strings.Index(msg, "<b>"+chat.Escape(r.Name)+"</b>"); i > 0 && !strings.Contains(msg[:i], "\n") &&
			(strings.HasSuffix(msg[:i], ", ") || strings.HasSuffix(msg[:i], "，")) {
			msg = msg[i:]
		}
		msg = prefix + msg
	}
	var dm int64
	if m, ok := tv.byID[r.Owner]; ok && m.DM {
		if c := s.cfg.ChatID(r.Owner); c != tv.team.Room || tv.team.Room == 0 {
			dm = c
		}
	}
	return msg, dm
}

// sendCopy sends the owner's private copy of a team card (the same text
// and buttons, never edited later). A failure is logged: the card itself
// went to the room.
func (s *Scheduler) sendCopy(ctx context.Context, chatID int64, m chat.Outgoing) {
	if chatID == 0 || chatID == m.ChatID {
		return
	}
	m.ChatID, m.EditMessageID, m.Refresh = chatID, 0, false
	if _, err := s.send(ctx, m); err != nil {
		s.log.Warn("scheduler: team card's private copy", "chat", chatID, "err", err)
	}
}

// pressLang is the presser's language: their own user's, else the one
// the dispatcher read, else English.
func (s *Scheduler) pressLang(ctx context.Context, p chat.ButtonPress) string {
	if u, err := s.store.User(ctx, p.Update.UserID); err == nil {
		return lang(&u)
	}
	if p.Lang != "" {
		return chat.NormLang(p.Lang)
	}
	return chat.LangEN
}

// mayChange checks, before a press changes a rental of a team's ledger
// (release, stop, terminate, extend, mark released, a trust answer), that
// the presser owns it or is an admin of the team. It returns the refusal
// toast ("" when allowed); a rental not of the ledger is left to the
// handler's own ENOTFOUND.
func (s *Scheduler) mayChange(ctx context.Context, p chat.ButtonPress, rentalID int64, lg string) string {
	if p.Role == "" {
		return ""
	}
	r, err := s.store.RentalByID(ctx, rentalID)
	if err != nil || r.UserID != p.ActsOn() || p.MayChange(r.Owner) {
		return ""
	}
	who := "id" + strconv.FormatInt(r.Owner, 10)
	if tv, ok := s.teamOf(ctx, r.UserID); ok {
		who = tv.name(r.Owner)
	}
	if r.Owner == 0 {
		return text(lg, "t_team_not_yours_admin", r.Name)
	}
	return text(lg, "t_team_not_yours", who, r.Name)
}

// teamTag is the "👥 NAME · " a reply on a team's ledger begins with,
// "" on a person's own.
func (s *Scheduler) teamTag(ctx context.Context, ledgerID int64) string {
	tv, ok := s.teamOf(ctx, ledgerID)
	if !ok {
		return ""
	}
	return "👥 " + tv.team.Name + " · "
}
