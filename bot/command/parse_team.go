package command

import "github.com/gpuledger/gpuledger/ledger"

// The team commands (core_team.go): a shared ledger in a group chat.
const (
	KindTeam    Kind = "team"    // /team [SUB ...]
	KindUse     Kind = "use"     // /use TEAM | me
	KindProject Kind = "project" // /project [NAME | none]
)

// Team subcommands (TeamCmd.Sub).
const (
	TeamList   = ""       // /team: the teams, or the members of the one in use
	TeamNew    = "new"    // /team new NAME
	TeamInvite = "invite" // /team invite [@user | ID]
	TeamJoin   = "join"   // /team join CODE (also /start join-CODE from the link)
	TeamLeave  = "leave"  // /team leave
	TeamRemove = "remove" // /team remove @user
	TeamRole   = "role"   // /team role @user owner|admin|member
	TeamBind   = "bind"   // /team bind (in the group)
	TeamUnbind = "unbind" // /team unbind
	TeamDM     = "dm"     // /team dm on|off
	TeamLimit  = "limit"  // /team limit @user|project=P|team rate=R gpus=N month=M [CUR]
	TeamOwner  = "owner"  // /team owner RENTAL @user: hand a record over (admins)
)

// TeamCmd is /team and its subcommands.
type TeamCmd struct {
	Sub string
	// Name is the team's name (new), the code (join), or a rental's name
	// (owner).
	Name string
	// Who names a member: "@username" as typed, or a user ID in decimal.
	Who  string
	Role ledger.Role
	On   bool // dm on|off
	// Limit is /team limit's bounds (TeamID unset; Scope and Subject
	// from Who / project= / "team"; a bound of 0 clears it).
	Limit ledger.Limit
	// RateSet, GPUsSet and MonthSet say which bounds of Limit were
	// written: the handler keeps a stored bound that was not, so that
	// setting one bound never clears another.
	RateSet, GPUsSet, MonthSet bool
	// Page is /team's page of members (1-based; 0 the first).
	Page int
}

// Kind returns KindTeam.
func (TeamCmd) Kind() Kind { return KindTeam }

// UseCmd is /use: where the sender's commands go. Team "" shows it; "me"
// is their own ledger.
type UseCmd struct {
	Team string
}

// Kind returns KindUse.
func (UseCmd) Kind() Kind { return KindUse }

// ProjectCmd is /project: the sender's default project in the ledger in
// use. Show with no name; Clear for "none".
type ProjectCmd struct {
	Name  string
	Clear bool
}

// Kind returns KindProject.
func (ProjectCmd) Kind() Kind { return KindProject }
