package ledger

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"
)

// A team is a shared ledger: several people log rentals, volumes and
// charges in one book, each record names its owner (the person it is
// for) and may name a project, and the team's group chat (its room)
// gets its cards.
//
// A team's ledger is an ordinary ledger of the store, kept under a
// ledger ID of its own (TeamLedger) in the users table, so every part
// that keeps or reads a ledger (the cost engine, the scheduler's cards,
// the budgets, the agents, the platform connections, the export) serves
// a team unchanged. The ID is negative and below any Telegram chat ID
// (user IDs are positive, group and supergroup IDs above -2^52), so a
// ledger ID is never mistaken for a chat: the scheduler maps it to the
// team's room (TeamRooms). It stays within 2^53, so JavaScript's
// numbers hold it exactly.
//
// The person acting is Action.By; Action.UserID is the ledger written.

// teamLedgerBase is the largest team ledger ID plus one.
const teamLedgerBase = -(int64(1) << 52)

// MaxTeamID is the largest team ID a ledger ID can hold.
const MaxTeamID = int64(1) << 52

// TeamLedger returns the ledger ID of team teamID (≥ 1).
func TeamLedger(teamID int64) int64 { return teamLedgerBase - teamID }

// TeamOf returns the team whose ledger ledgerID is, or false for a
// person's own ledger.
func TeamOf(ledgerID int64) (teamID int64, ok bool) {
	if ledgerID < teamLedgerBase && ledgerID >= teamLedgerBase-MaxTeamID {
		return teamLedgerBase - ledgerID, true
	}
	return 0, false
}

// IsTeamLedger reports whether ledgerID is a team's ledger.
func IsTeamLedger(ledgerID int64) bool {
	_, ok := TeamOf(ledgerID)
	return ok
}

// Role is a member's place in a team. Its text is stored and shown in
// /team's list and the export, so the values never change.
type Role string

// The roles. An owner is an admin who also decides who is an admin or an
// owner; a team always keeps at least one owner.
const (
	RoleOwner  Role = "owner"
	RoleAdmin  Role = "admin"
	RoleMember Role = "member"
)

// Admin reports whether the role may change other members' records,
// decide approvals, invite, remove members and set limits.
func (r Role) Admin() bool { return r == RoleOwner || r == RoleAdmin }

// Valid reports whether r is one of the roles.
func (r Role) Valid() bool { return r == RoleOwner || r == RoleAdmin || r == RoleMember }

// Bounds of a team.
const (
	// MaxTeamMembers is the most people one team holds; an invite beyond
	// it is refused (ECONFLICT "team_full").
	MaxTeamMembers = 1000
	// MaxTeamNameRunes bounds a team's name.
	MaxTeamNameRunes = 32
	// MaxProjectRunes bounds a project's name.
	MaxProjectRunes = 32
	// MaxTeamsOwned bounds the teams one person may create.
	MaxTeamsOwned = 20
	// MaxOpenInvites bounds a team's unused, unexpired invites.
	MaxOpenInvites = 50
	// InviteTTL is how long an invite code works unless used.
	InviteTTL = 24 * time.Hour
)

// ValidTeamName checks a team's name: 1 to MaxTeamNameRunes letters,
// digits, '-', '_' or '.', starting with a letter or digit, and not "me"
// (which /use keeps for the personal ledger). EINVALID "team_name".
func ValidTeamName(name string) error {
	if !validSlug(name, MaxTeamNameRunes) || strings.EqualFold(name, "me") || strings.EqualFold(name, "personal") {
		return Errorc(EINVALID, "team_name", name, MaxTeamNameRunes)
	}
	return nil
}

// ValidProject checks a project's name, with ValidTeamName's rules ("" is
// no project). EINVALID "project_name".
func ValidProject(name string) error {
	if name == "" {
		return nil
	}
	if !validSlug(name, MaxProjectRunes) {
		return Errorc(EINVALID, "project_name", name, MaxProjectRunes)
	}
	return nil
}

func validSlug(s string, max int) bool {
	if s == "" || utf8.RuneCountInString(s) > max {
		return false
	}
	for i, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c > 127 && (c >= 0x4e00 && c <= 0x9fff): // CJK ideographs: Chinese team and project names
		case i > 0 && (c == '-' || c == '_' || c == '.'):
		default:
			return false
		}
	}
	return true
}

// Team is one team.
type Team struct {
	ID        int64
	Name      string
	CreatedBy int64
	CreatedAt time.Time
	// Room is the group chat bound with /team bind, where the team's
	// cards go; 0 when none is bound (cards then go to its owners'
	// private chats).
	Room      int64
	RoomTitle string
}

// Ledger is the team's ledger ID.
func (t Team) Ledger() int64 { return TeamLedger(t.ID) }

// Member is a person in a team.
type Member struct {
	TeamID   int64
	UserID   int64
	Username string // the Telegram username last seen, without '@'; for display only
	Role     Role
	JoinedAt time.Time
	// Outsider: admitted by an invite though not in the server's allow
	// list (GPULEDGER_TEAM_OUTSIDERS): they reach this team only, never a
	// personal ledger or the operator's commands.
	Outsider bool
	// DM: the member also gets the cards of their own rentals in their
	// private chat (/team dm on).
	DM bool
}

// Name is how the member is named in the team's room: "@username", or
// the user ID when Telegram gave no username.
func (m Member) Name() string {
	if m.Username != "" {
		return "@" + m.Username
	}
	return "id" + itoa(m.UserID)
}

// Membership is one team a person belongs to, with their place in it.
type Membership struct {
	Team   Team
	Member Member
	// InvitedBy is the admin whose invite admitted Member, as they are at
	// the join: set by TeamStore.Join only (zero elsewhere), so that the
	// team's admins are told who let the person in. Join admits no one
	// through the code of someone no longer an admin ("invite_revoked"),
	// so the maker is always a current admin then.
	InvitedBy Member
}

// Invite is a one-time join code of a team. Only its hash is kept; the
// code is shown once to the admin who made it.
type Invite struct {
	ID        int64
	TeamID    int64
	CreatedBy int64
	// ForUser or ForUsername, when set, is the only person the code
	// admits: a code forwarded to anyone else is refused and stays
	// unused. An invite with neither admits the first person who uses it.
	ForUser     int64
	ForUsername string
	Expires     time.Time
	UsedBy      int64 // 0 while unused
	UsedAt      time.Time
}

// LimitScope says what a limit bounds.
type LimitScope string

// The scopes of a limit.
const (
	ScopeTeam    LimitScope = "team"    // the whole team
	ScopeMember  LimitScope = "member"  // one member's rentals (Subject: the user ID, decimal)
	ScopeProject LimitScope = "project" // one project's records (Subject: its name)
)

// Limit is a budget of a team, one of its members or one of its projects,
// in one currency. Each bound is 0 for none. A rental or an adoption that
// goes over one is kept (the money is being spent) and sent to the admins
// for approval; nothing is stopped without an admin's press.
type Limit struct {
	TeamID   int64
	Scope    LimitScope
	Subject  string
	Currency Currency
	// RatePerHour bounds the summed hourly rate of the scope's running
	// rentals in Currency.
	RatePerHour Decimal
	// GPUs bounds the GPUs of the scope's running rentals at once.
	GPUs int
	// Month bounds the scope's spend in Currency in the calendar month (in
	// the team ledger's zone).
	Month Decimal
}

// LimitKind names the bound an approval is about. Stored; never changes.
type LimitKind string

// The bounds.
const (
	LimitRate  LimitKind = "rate"
	LimitGPUs  LimitKind = "gpus"
	LimitMonth LimitKind = "month"
)

// ApprovalState is where an approval stands. Stored; never changes.
type ApprovalState string

// The states of an approval. Pending moves once, to Approved or Stopped,
// by the first admin to press; a second press is told who decided. Or
// the system closes it as Lapsed when it no longer applies (its rental
// was released, left the limit's scope or came back under the bound, the
// limit was raised or removed, its month is over): a press on it then
// does nothing, and it is set back to Pending only when its rental is
// over that bound again (OpenApproval), since that is a new question.
const (
	ApprovalPending  ApprovalState = "pending"
	ApprovalApproved ApprovalState = "approved"
	ApprovalStopped  ApprovalState = "stopped"
	ApprovalLapsed   ApprovalState = "lapsed"
)

// ApprovalCard is one card of an approval sent to an admin in private
// (or its reminder), kept so that the card can be edited when the
// approval lapses.
type ApprovalCard struct {
	UserID, ChatID, MessageID int64
}

// Approval is a rental over a limit, waiting for an admin.
type Approval struct {
	ID       int64
	TeamID   int64
	RentalID int64
	Owner    int64 // the rental's owner when it was opened
	Scope    LimitScope
	Subject  string
	Kind     LimitKind
	// Period is the calendar month a month bound's approval is about
	// ("2026-12", in the team ledger's zone), so an approval of November
	// leaves December to be asked again; "" for the rate and GPU bounds,
	// which are asked once per rental.
	Period   string
	Currency Currency
	// Limit is the bound and Value what the scope reached with the rental
	// (a rate, a GPU count or a month's spend, as decimal text).
	Limit, Value Decimal
	State        ApprovalState
	CreatedAt    time.Time
	DecidedBy    int64
	DecidedAt    time.Time
	RemindedAt   time.Time // the one reminder to the admins; zero until sent
}

// TeamStore keeps the teams, their members, invites, rooms, limits and
// approvals, and each person's choice of ledger and project. Every
// change checks Action.By's role in the team where it matters (EUNAUTHORIZED
// "team_admin_only", "team_owner_only"), so a chat that shows a button or
// a command to the wrong person cannot make it work.
type TeamStore interface {
	// CreateTeam makes a team named name with a.By as its owner, and its
	// ledger (lang and zone copied from the creator's user, which must
	// exist). ECONFLICT "team_name_taken" when a team has that name
	// (case-insensitive); ECONFLICT "teams_owned" past MaxTeamsOwned.
	CreateTeam(ctx context.Context, a Action, name, username string) (Team, error)
	// Team returns a team by ID; TeamByName by its name (case-insensitive);
	// TeamByRoom the team whose room is chatID. ENOTFOUND when none.
	Team(ctx context.Context, teamID int64) (Team, error)
	TeamByName(ctx context.Context, name string) (Team, error)
	TeamByRoom(ctx context.Context, chatID int64) (Team, error)
	// Teams returns every team, in ID order (the rooms' cache).
	Teams(ctx context.Context) ([]Team, error)
	// TeamsOf returns the teams userID is a current member of, in ID order.
	TeamsOf(ctx context.Context, userID int64) ([]Membership, error)
	// Member returns a current member; ENOTFOUND "team_not_member" when
	// userID is not in the team (never was, left or was removed).
	Member(ctx context.Context, teamID, userID int64) (Member, error)
	// Members returns the team's current members: owners, then admins,
	// then members, each in joining order.
	Members(ctx context.Context, teamID int64) ([]Member, error)
	// MemberByUsername finds a current member by username (without '@',
	// case-insensitive). ENOTFOUND "team_not_member".
	MemberByUsername(ctx context.Context, teamID int64, username string) (Member, error)
	// Outsiders returns the user IDs of every current member admitted
	// outside the allow list, for the server's access check.
	Outsiders(ctx context.Context) ([]int64, error)
	// SeenUsername records the username a member was last seen with.
	SeenUsername(ctx context.Context, userID int64, username string) error

	// CreateInvite makes a one-time code for teamID (a.By an admin),
	// valid until a.At+InviteTTL; forUser/forUsername address it (0/""
	// for anyone). It returns the code in clear, once; only its hash is
	// kept. ECONFLICT "team_invites" past MaxOpenInvites.
	CreateInvite(ctx context.Context, a Action, teamID, forUser int64, forUsername string) (code string, inv Invite, err error)
	// Join admits a.By (with username) through code, using the invite up
	// in the same transaction, so a code works once. outsider records
	// that the person is not in the allow list (the caller decided they
	// may join). Refusals, each changing nothing: ENOTFOUND
	// "invite_unknown" (no such code: mistyped, or revoked);
	// EINVALID "invite_expired"; ECONFLICT "invite_used" (used already,
	// by someone else or by a.By); EUNAUTHORIZED "invite_not_for_you"
	// (addressed to someone else: the code stays unused); EUNAUTHORIZED
	// "invite_revoked" (its maker is no longer an admin of the team);
	// ECONFLICT "team_already_member"; ECONFLICT "team_full". The
	// membership's InvitedBy is the invite's maker.
	Join(ctx context.Context, a Action, code, username string, outsider bool) (Membership, error)
	// SetRole sets userID's role. An admin makes a member an admin or an
	// admin a member; only an owner makes or unmakes an owner
	// (EUNAUTHORIZED "team_owner_only"); ECONFLICT "team_last_owner" when
	// it would leave the team without an owner.
	SetRole(ctx context.Context, a Action, teamID, userID int64, role Role) (Member, error)
	// RemoveMember takes userID out of the team (a.By an admin, or
	// userID itself to leave). Their records stay theirs; their running
	// rentals and live volumes pass to handTo (an admin or owner of the
	// team, not userID); enrolment tokens they made for the team are
	// revoked and their unused invites expired (as SetRole does when
	// someone stops being an admin), and the agent tokens of the rentals
	// handed over revoked, all in one transaction. ECONFLICT
	// "team_last_owner" when they are its last owner. It returns the
	// rentals handed over and those whose agent token was revoked.
	RemoveMember(ctx context.Context, a Action, teamID, userID, handTo int64) (Removal, error)
	// FormerMembers returns the team's former members (left or removed:
	// their row keeps removed_at), with the username and role they had
	// last, in the order they left, so splits and exports still name
	// them. A person who rejoined is a current member, not a former one.
	FormerMembers(ctx context.Context, teamID int64) ([]Member, error)
	// ExpireInvite expires the unused invite whose code is code at at
	// (a code seen posted where anyone may read it): the code then
	// answers "invite_expired". ok is false when no unused, unexpired
	// invite has that code; nothing changes then.
	ExpireInvite(ctx context.Context, code string, at time.Time) (teamID int64, ok bool, err error)
	// SetDM turns the member's private copy of their cards on or off.
	SetDM(ctx context.Context, a Action, teamID int64, on bool) (Member, error)

	// BindRoom makes chatID the team's room (a.By an admin). ECONFLICT
	// "room_taken" when the chat is another team's room. Binding a new
	// room replaces the old.
	BindRoom(ctx context.Context, a Action, teamID, chatID int64, title string) (Team, error)
	// UnbindRoom forgets chatID as a room (the bot was removed from it,
	// or an admin said /team unbind); no error when it is no room.
	UnbindRoom(ctx context.Context, chatID int64) (Team, bool, error)
	// MoveRoom follows a group that Telegram migrated to a supergroup
	// (the chat's ID changed from oldChat to newChat). No error when
	// oldChat is no room.
	MoveRoom(ctx context.Context, oldChat, newChat int64) (Team, bool, error)

	// Use returns the ledger userID's commands go to (/use): their own
	// (userID) unless they chose a team they still belong to.
	Use(ctx context.Context, userID int64) (int64, error)
	// SetUse sets it: userID or the ledger of a team they belong to.
	SetUse(ctx context.Context, userID, ledgerID int64) error
	// Project returns userID's default project in ledgerID ("" none).
	Project(ctx context.Context, userID, ledgerID int64) (string, error)
	// SetProject sets it ("" clears it).
	SetProject(ctx context.Context, userID, ledgerID int64, project string) error

	// SetLimit sets (replaces) the limit of (team, scope, subject,
	// currency); a.By an admin. A limit whose bounds are all 0 deletes it.
	SetLimit(ctx context.Context, a Action, l Limit) error
	// Limits returns the team's limits.
	Limits(ctx context.Context, teamID int64) ([]Limit, error)

	// OpenApproval stores an approval for a rental over a limit, once per
	// (rental, scope, subject, kind, period): created is false when it was open
	// or decided already (ap is then the stored one). A lapsed one of the
	// same key is set back to pending (created true, a new CreatedAt, its
	// old cards forgotten): the rental is over that bound again.
	OpenApproval(ctx context.Context, ap Approval) (stored Approval, created bool, err error)
	// Approval returns one approval. ENOTFOUND.
	Approval(ctx context.Context, id int64) (Approval, error)
	// Approvals returns the team's approvals in state (all when "").
	Approvals(ctx context.Context, teamID int64, state ApprovalState) ([]Approval, error)
	// DecideApproval moves a pending approval to state (a.By an admin of
	// its team) in one conditional update: of two admins pressing at
	// once, one wins and the other gets ECONFLICT "approval_decided" with
	// the stored approval's state and who decided it.
	DecideApproval(ctx context.Context, a Action, id int64, state ApprovalState) (Approval, error)
	// Reminded records that the one reminder of a pending approval went.
	Reminded(ctx context.Context, id int64, at time.Time) error
	// LapseApproval closes a pending approval that no longer applies, in
	// one conditional update (the system's write, not journaled, as
	// OpenApproval): lapsed is false, and ap the stored one unchanged,
	// when it was decided or lapsed already, so an admin's press a moment
	// before wins and a second lapse is a no-op.
	LapseApproval(ctx context.Context, id int64, at time.Time) (ap Approval, lapsed bool, err error)
	// PendingApprovalTeams returns the teams with a pending approval, so
	// the scheduler looks at a team even when none of its rentals is live.
	PendingApprovalTeams(ctx context.Context) ([]int64, error)
	// AddApprovalCard records a card of approval id sent to an admin;
	// ApprovalCards returns them, oldest first.
	AddApprovalCard(ctx context.Context, id int64, c ApprovalCard) error
	ApprovalCards(ctx context.Context, id int64) ([]ApprovalCard, error)

	// SetOwner gives a record of a team's ledger to owner (a current
	// member): a.By an admin, or a.By claiming a rental that has no owner
	// yet ("[Mine]" on the question of a synced rental). The live
	// volumes attached to the rental move with it. Journaled.
	SetOwner(ctx context.Context, a Action, rentalID, owner int64) (*Rental, error)
}

func itoa(n int64) string {
	var b [20]byte
	i := len(b)
	neg := n < 0
	u := uint64(n)
	if neg {
		u = uint64(-n)
	}
	for {
		i--
		b[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
