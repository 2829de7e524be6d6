package sqlite

import "github.com/gpuledger/gpuledger/ledger"

// The store by aggregate. Each type below is one aggregate of the ledger
// over the one *DB (its connections, its prepared statements, its
// journal), and implements exactly the ledger's sets named beside it: the
// sets are the contract, and a consumer names the sets it needs instead
// of restating their methods. DB embeds every aggregate, so one handle
// still serves every caller.

// Accounts are the users and their settings, and the process-wide meta
// values (user.go, meta.go).
type Accounts struct{ db *DB }

// Journal is the action journal: the row every change begins with
// (beginAction), undo, notes, handled keys (action.go).
type Journal struct{ db *DB }

// Rentals are the rentals, their events and traffic (rental.go).
type Rentals struct{ db *DB }

// Volumes are the storage volumes and their prices (volume.go).
type Volumes struct{ db *DB }

// Money is the one-off charges, top-ups and balance readings, and their
// corrections (money.go, record.go).
type Money struct{ db *DB }

// Agents are the agents' tokens, heartbeats, idle intervals, lease ends
// and trust (agent.go, agent_lease.go, trust.go).
type Agents struct{ db *DB }

// Orders are the signed orders to agents, the automatic policies and the
// decision log (order.go).
type Orders struct{ db *DB }

// Enrolments are the enrolment tokens and the instances they announced
// (enrol.go).
type Enrolments struct{ db *DB }

// Connections are the users' platform accounts (connector.go).
type Connections struct{ db *DB }

// Platforms are the instances the platforms list, the sync's rounds and
// floods (platform.go, platform_round.go, flood.go).
type Platforms struct{ db *DB }

// Notices are the cards, the notices sent once, and the outbox
// (notify.go, outbox.go).
type Notices struct{ db *DB }

// Inbox is the transport's inbox of updates (inbox.go).
type Inbox struct{ db *DB }

// Benchmarks are what each rental delivered: its agent's benches, the
// user's job runs on it and its first sustained work (benches.go).
type Benchmarks struct{ db *DB }

// Rosters are the teams, their members, invites, rooms, limits and
// approvals, and each person's ledger in use and default project
// (team.go, team_invite.go, team_room.go, team_limits.go).
type Rosters struct{ db *DB }

// bindAggregates points every aggregate of db at it; Open and
// OpenReadOnly call it once, before db is handed out.
func bindAggregates(db *DB) {
	db.Accounts = Accounts{db}
	db.Journal = Journal{db}
	db.Rentals = Rentals{db}
	db.Volumes = Volumes{db}
	db.Money = Money{db}
	db.Agents = Agents{db}
	db.Orders = Orders{db}
	db.Enrolments = Enrolments{db}
	db.Connections = Connections{db}
	db.Platforms = Platforms{db}
	db.Notices = Notices{db}
	db.Inbox = Inbox{db}
	db.Benchmarks = Benchmarks{db}
	db.Rosters = Rosters{db}
}

var (
	_ ledger.UserStore      = (*Accounts)(nil)
	_ ledger.MetaStore      = (*Accounts)(nil)
	_ ledger.JournalStore   = (*Journal)(nil)
	_ ledger.RentalStore    = (*Rentals)(nil)
	_ ledger.VolumeStore    = (*Volumes)(nil)
	_ ledger.MoneyStore     = (*Money)(nil)
	_ ledger.TokenStore     = (*Agents)(nil)
	_ ledger.BeatStore      = (*Agents)(nil)
	_ ledger.IdleStore      = (*Agents)(nil)
	_ ledger.LeaseStore     = (*Agents)(nil)
	_ ledger.TrustStore     = (*Agents)(nil)
	_ ledger.OrderStore     = (*Orders)(nil)
	_ ledger.PolicyStore    = (*Orders)(nil)
	_ ledger.EnrolStore     = (*Enrolments)(nil)
	_ ledger.ConnectorStore = (*Connections)(nil)
	_ ledger.PlatformStore  = (*Platforms)(nil)
	_ ledger.NotifyStore    = (*Notices)(nil)
	_ ledger.OutboxStore    = (*Notices)(nil)
	_ ledger.InboxStore     = (*Inbox)(nil)
	_ ledger.BenchStore     = (*Benchmarks)(nil)
	_ ledger.TeamStore      = (*Rosters)(nil)
)
