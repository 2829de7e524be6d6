// Package dashboard serves the Mini App: a dashboard of one user's ledger
// that opens inside Telegram (from the bot's menu button and the "Open
// dashboard" buttons) or in any browser from a one-time link (/dashboard).
//
// It lives at GPULEDGER_PUBLIC_URL + "/app/" on the agent hub's listener.
// The pages are static files embedded in the binary (static/: HTML, one
// script, one style sheet and the vendored uPlot chart library), served
// under a strict Content-Security-Policy with no inline script; the data
// comes from the JSON endpoints below, read only, for the signed-in user
// alone.
//
// # Signing in
//
//   - Inside Telegram the page reads Telegram's initData from its URL
//     fragment (tgWebAppData) and exchanges it once, at POST PathSession,
//     for a short-lived session token that it sends as
//     "Authorization: Bearer TOKEN". The server checks initData's HMAC as
//     Telegram's Web Apps documentation specifies (key HMAC-SHA256 of the
//     bot token under "WebAppData", constant-time comparison), its
//     auth_date against a configurable age, and that the same initData was
//     not exchanged before. A bearer token rather than a cookie, because
//     Telegram Web shows a Mini App in a cross-site iframe, where a
//     SameSite=Strict cookie is not sent.
//   - Outside Telegram, /dashboard gives a one-time link, PathLogin with
//     ?code=CODE, that expires in minutes. Opening it consumes the code,
//     sets a session cookie (HttpOnly, SameSite=Strict, Path=/app/, Secure
//     when the public URL is https) and redirects to /app/.
//
// Either way only an allowed user gets a session, and every answer is cut
// from that user's own book: no user ID or token is ever read from a URL.
package dashboard

import "time"

// Paths the dashboard serves, relative to the hub's root.
const (
	PathApp     = "/app/"            // the page (index.html) and /app/static/...
	PathLogin   = "/app/login"       // GET ?code=CODE: a one-time link
	PathSession = "/app/api/session" // POST initData (text/plain, ≤ 8 KiB): a session token
	PathMe      = "/app/api/me"      // GET: who is signed in, their language, zone and months
	PathMonth   = "/app/api/month"   // GET ?month=YYYY-MM (default: this month)
	PathRental  = "/app/api/rental"  // GET ?id=N: one rental's page, with its receipt
	PathCompare = "/app/api/compare" // GET [?label=L]: the user's own price/performance table
	PathTeams   = "/app/api/teams"   // GET: the user's teams (TeamsAnswer)
	PathTeam    = "/app/api/team"    // GET ?team=ID[&month=YYYY-MM]: a team's month, members only (TeamPage)
	PathExport  = "/app/api/export.csv"
	// PathExport: GET ?month=YYYY-MM: the CSV export's columns, with each
	// line's charges inside that month (text/csv, as an attachment).
)

// CookieName is the session cookie set by a one-time link.
const CookieName = "gpuledger_session"

// Money in every answer is a decimal string with the currency's minor
// digits ("12.34"), exact, as in the export. A figure that cannot be
// computed because a line has no price is null, with an "unpriced" count
// beside it; it is never shown as 0.

// SessionAnswer answers POST PathSession.
type SessionAnswer struct {
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
}

// ErrorAnswer is every refusal's body (with a 4xx status): Code is stable
// for the page's logic ("auth_missing", "auth_invalid", "auth_stale",
// "auth_replayed", "not_allowed", "not_personal", "link_expired",
// "bad_request", "not_found", "too_large"); Message says in the user's language (English
// when unknown) what was wrong and what to do.
type ErrorAnswer struct {
	Code    string `json:"error"`
	Message string `json:"message"`
}

// Me answers PathMe.
type Me struct {
	Name   string   `json:"name"`   // Telegram first name or username, for the header; may be ""
	Lang   string   `json:"lang"`   // "en" or "zh": the user's /lang
	TZ     string   `json:"tz"`     // IANA zone all days are cut in
	Month  string   `json:"month"`  // this month, YYYY-MM, in TZ
	Months []string `json:"months"` // months with any spend, newest first (at most 36)
	// Personal is false for a person admitted to a team only (they have
	// no ledger of their own here: Months is empty and the personal
	// pages answer 403 "not_personal"); Teams are the user's teams, each
	// with a view at PathTeam.
	Personal bool      `json:"personal"`
	Teams    []TeamRef `json:"teams"`
}

// Amounts is one row's money by category.
type Amounts struct {
	Compute  *string `json:"compute"`
	Storage  *string `json:"storage"`
	Traffic  *string `json:"traffic"`
	Other    *string `json:"other"`
	Total    *string `json:"total"`
	Idle     *string `json:"idle"`     // compute accrued while the GPUs were idle (part of Compute); see RentalRow.HasAgent
	Unpriced int     `json:"unpriced"` // lines left out for having no price
}

// DaySpend is one local day of a month in one currency.
type DaySpend struct {
	Day string `json:"day"` // YYYY-MM-DD in the user's zone
	Amounts
}

// CurrencyMonth is a month's spend in one currency (there are no exchange
// rates in the ledger, so currencies are never added together).
type CurrencyMonth struct {
	Currency string     `json:"currency"`
	Days     []DaySpend `json:"days"` // every day of the month up to today (all days of a past month)
	Totals   Amounts    `json:"totals"`
	// Budget is the user's monthly budget in this currency, null if none;
	// BudgetPercent is ⌊100 × spent / budget⌋. Only the current month has
	// one: the store keeps the budget in force now, not the ones before
	// it, so a past month measured against today's budget would be a
	// figure nobody set. BudgetNow is, for a past month only, today's
	// budget in this currency (null if none), for the page to say that
	// the month's own budget is not known rather than "no budget".
	Budget        *string `json:"budget"`
	BudgetPercent *int    `json:"budget_percent"`
	BudgetNow     *string `json:"budget_now,omitempty"`
	// Projection is the month's total at its end if what runs now keeps
	// running (running rentals' compute, live volumes' storage), the
	// engine's own figure for the month's end; BurnPerHour is the current
	// rate. Both are null for a past month: nothing is projected there.
	Projection  *string `json:"projection"`
	BurnPerHour *string `json:"burn_per_hour"`
	// NoAgent counts the month's rentals in this currency that no agent
	// watched (RentalRow.HasAgent false): their idle time is unknown, so
	// Totals.Idle is the idle cost of the others alone.
	NoAgent int `json:"no_agent"`
}

// PlatformMonth is a month's spend on one platform in one currency.
type PlatformMonth struct {
	Platform     string `json:"platform"`
	PlatformName string `json:"platform_name"` // as the chat names it in the user's language
	Currency     string `json:"currency"`
	Amounts
}

// RentalRow is one rental's spend in the month (RentalPage: in its life).
type RentalRow struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	// Ref is the rental's address (ledger.RentalRef) when another rental
	// has its name, so that the pages tell them apart; absent otherwise.
	Ref      string `json:"ref,omitempty"`
	Platform string `json:"platform"`
	// PlatformName is the platform as the chat names it in the user's
	// language ("AutoDL"; 恒源云 in Chinese); Platform is the key.
	PlatformName string `json:"platform_name"`
	PlatformID   string `json:"platform_id,omitempty"`
	GPU          string `json:"gpu"`
	GPUCount     int    `json:"gpu_count"`
	State        string `json:"state"` // running, stopped, released: at StateAt
	// StateAt is when State holds: the month's end for a past month (a
	// rental running then is "running at month end"), else now.
	StateAt time.Time `json:"state_at"`
	// StateNow is the state now, given only when it differs from State
	// (a past month's rental released since).
	StateNow string `json:"state_now,omitempty"`
	// HasAgent: an agent was given a token for the rental or reported for
	// it. Without one its idle time is unknown and Idle is null.
	HasAgent       bool   `json:"has_agent"`
	Currency       string `json:"currency"`
	RunningSeconds int64  `json:"running_seconds"`
	IdleSeconds    int64  `json:"idle_seconds"`
	Amounts
}

// Balance is a platform's prepaid balance at AsOf and how long it lasts.
//
// Balance is a reading only when Computed is false. Otherwise the ledger
// worked it out: the reading (Reading, at ReadingAt) plus the TopUps
// top-ups since, minus everything the platform charged since; without a
// reading (Source "topups"), the top-ups since the first one minus the
// charges since.
type Balance struct {
	Platform     string    `json:"platform"`
	PlatformName string    `json:"platform_name"` // as the chat names it in the user's language
	Currency     string    `json:"currency"`
	Balance      string    `json:"balance"`
	AsOf         time.Time `json:"as_of"` // the instant Balance is for: now, or a past month's end
	// Source is where the figure starts from: "api" (read from the
	// platform), "typed" (a /balance reading) or "topups" (no reading).
	Source    string    `json:"source"`
	Reading   *string   `json:"reading"`    // the reading's amount; null for "topups"
	ReadingAt time.Time `json:"reading_at"` // when it was read or typed (the first top-up for "topups")
	TopUps    int       `json:"top_ups"`    // top-ups after the reading, added in
	Computed  bool      `json:"computed"`   // Balance is not the reading itself
	// BurnPerHour and RunsOutAt are now's, for the current month only
	// (null for a past month); RunsOutAt is null when nothing burns.
	BurnPerHour *string    `json:"burn_per_hour"`
	RunsOutAt   *time.Time `json:"runs_out_at"`
	Unpriced    int        `json:"unpriced"`
}

// MonthPage answers PathMonth.
type MonthPage struct {
	Month      string          `json:"month"`   // YYYY-MM
	From       time.Time       `json:"from"`    // local midnight of the 1st
	To         time.Time       `json:"to"`      // the next month's start
	AsOf       time.Time       `json:"as_of"`   // now, or To for a past month: every figure is as of it
	Current    bool            `json:"current"` // this month (AsOf is now)
	Currencies []CurrencyMonth `json:"currencies"`
	Platforms  []PlatformMonth `json:"platforms"` // by platform then currency
	Rentals    []RentalRow     `json:"rentals"`   // the month's rentals, most expensive first
	Balances   []Balance       `json:"balances"`  // as of AsOf
	// ExportURL is the month's CSV: PathExport + "?month=YYYY-MM", after
	// the public URL's path when it has one (a proxy's prefix).
	ExportURL string `json:"export_url"`
}

// Segment is one stretch of a rental's timeline.
type Segment struct {
	From  time.Time `json:"from"`
	To    time.Time `json:"to"`
	State string    `json:"state"` // see the Seg* constants
}

// Timeline segment states. Busy, idle and unknown come from the agent's
// heartbeats (their hourly roll-ups); silent is running time in which an
// agent that reported before sent nothing; running is running time of a
// rental that never had an agent.
const (
	SegStopped = "stopped"
	SegBusy    = "busy"
	SegIdle    = "idle"
	SegUnknown = "unknown"
	SegSilent  = "silent"
	SegRunning = "running"
)

// DayActivity is one local day of a rental's life, in seconds per state.
type DayActivity struct {
	Day      string `json:"day"`
	BusyS    int64  `json:"busy_s"`
	IdleS    int64  `json:"idle_s"`
	UnknownS int64  `json:"unknown_s"`
	SilentS  int64  `json:"silent_s"`
	RunningS int64  `json:"running_s"`
	StoppedS int64  `json:"stopped_s"`
}

// RentalPage answers PathRental.
type RentalPage struct {
	Rental     RentalRow     `json:"rental"` // Amounts: its whole life up to AsOf
	AsOf       time.Time     `json:"as_of"`  // now
	Mode       string        `json:"mode"`
	ModeName   string        `json:"mode_name"`  // the mode as the chat names it in the user's language
	Price      *string       `json:"price"`      // the price in force now (the last one once released), null if none
	PriceUnit  *string       `json:"price_unit"` // as in the export
	PriceText  *string       `json:"price_text"` // price and unit as the chat writes them ("¥1.88/h", "¥1.88/小时")
	StartedAt  time.Time     `json:"started_at"`
	ReleasedAt *time.Time    `json:"released_at"`
	HasAgent   bool          `json:"has_agent"`
	Timeline   []Segment     `json:"timeline"` // oldest first, adjacent, merged; at most MaxSegments
	Days       []DayActivity `json:"days"`     // oldest first; at most the last 400 days
	// Receipt is what the rental delivered by its agent's first bench
	// (Receipt); null when it has none, and NoReceipt then says why and
	// how to get one.
	Receipt   *Receipt `json:"receipt"`
	NoReceipt string   `json:"no_receipt,omitempty"`
}

// MaxSegments bounds a timeline: beyond it, stretches are merged into
// whole days (each day takes its longest state).
const MaxSegments = 2000
