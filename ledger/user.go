package ledger

import (
	"sort"
	"time"
)

// DefaultIdleWarn is how long a rental's GPUs must be idle before the
// user is warned, unless their settings say otherwise (idle_warn).
const DefaultIdleWarn = 30 * time.Minute

// Settings are a user's preferences. Durations of 0 mean the default.
type Settings struct {
	SummaryAt int           // nightly summary, minutes after local midnight; default 22:00
	IdleWarn  time.Duration // default DefaultIdleWarn
	Silent    time.Duration // default 10m
	QuietFrom int           // quiet hours start, minutes after midnight; -1 none
	QuietTo   int           // quiet hours end, minutes after midnight
	LongRun   time.Duration // reminder for rentals without an agent; default 12h
	// BenchOff: the user turned receipts off: agents are not asked to
	// bench (HeartbeatResponse.BenchWanted stays false) and no receipt
	// card is sent. A bench an agent sends anyway is still stored.
	BenchOff bool
}

// The bounds of the duration settings a user may give in chat
// (/settings idle_warn=, silent=, long_run=); 0 is stored for "the
// default". An idle warning needs at least a minute of samples and is
// useless after a week; a silent agent is worth an alert within a day;
// a reminder about a long run without an agent is meaningless under an
// hour and too late after a month. The parser checks against these.
const (
	MinIdleWarn = time.Minute
	MaxIdleWarn = 7 * 24 * time.Hour
	MinSilent   = time.Minute
	MaxSilent   = 24 * time.Hour
	MinLongRun  = time.Hour
	MaxLongRun  = 30 * 24 * time.Hour
)

// settingBounds names each duration setting with its field and bounds,
// in the order /settings shows them.
func (s *Settings) settingBounds() []struct {
	name   string
	v      *time.Duration
	lo, hi time.Duration
} {
	return []struct {
		name   string
		v      *time.Duration
		lo, hi time.Duration
	}{
		{"idle_warn", &s.IdleWarn, MinIdleWarn, MaxIdleWarn},
		{"silent", &s.Silent, MinSilent, MaxSilent},
		{"long_run", &s.LongRun, MinLongRun, MaxLongRun},
	}
}

// SettingBounds returns the bounds of the duration setting a user may
// give in chat as name= ("idle_warn", "silent" or "long_run"); ok is
// false for any other name.
func SettingBounds(name string) (lo, hi time.Duration, ok bool) {
	for _, b := range new(Settings).settingBounds() {
		if b.name == name {
			return b.lo, b.hi, true
		}
	}
	return 0, 0, false
}

// Validate checks settings from chat: ValidateStored's rules, and each
// duration is 0 (the default) or within its bounds. It returns EINVALID
// with key "setting_range" (the name, the value and both bounds).
func (s Settings) Validate() error {
	if err := s.ValidateStored(); err != nil {
		return err
	}
	for _, b := range s.settingBounds() {
		if *b.v != 0 && *b.v < b.lo {
			return Errorc(EINVALID, "setting_range", b.name, *b.v, b.lo, b.hi)
		}
	}
	return nil
}

// ValidateStored checks settings the store may keep: a summary time and
// quiet hours within the day (-1: none), and each duration 0 (the
// default) up to its bound. A duration may be shorter than chat allows, so
// tests and demos of the reminders need not wait minutes.
func (s Settings) ValidateStored() error {
	if s.SummaryAt < -1 || s.SummaryAt >= 24*60 { // -1: no nightly summary
		return Errorc(EINVALID, "bad_summary")
	}
	if s.QuietFrom < -1 || s.QuietFrom >= 24*60 || s.QuietTo < -1 || s.QuietTo >= 24*60 || (s.QuietFrom == -1) != (s.QuietTo == -1) {
		return Errorc(EINVALID, "bad_quiet")
	}
	for _, b := range s.settingBounds() {
		if *b.v < 0 || *b.v > b.hi {
			return Errorc(EINVALID, "setting_range", b.name, *b.v, b.lo, b.hi)
		}
	}
	return nil
}

// IdleWarnAfter returns the user's idle warning delay: IdleWarn, or
// DefaultIdleWarn when it is unset.
func (s Settings) IdleWarnAfter() time.Duration {
	if s.IdleWarn > 0 {
		return s.IdleWarn
	}
	return DefaultIdleWarn
}

// DefaultSettings returns the settings of a new user.
func DefaultSettings() Settings {
	return Settings{
		SummaryAt: 22 * 60,
		IdleWarn:  DefaultIdleWarn,
		Silent:    10 * time.Minute,
		QuietFrom: -1,
		QuietTo:   -1,
		LongRun:   12 * time.Hour,
	}
}

// User is a person keeping a ledger, identified by their Telegram user ID
// (the terminal console's owner has a fixed ID too).
type User struct {
	ID        int64
	Lang      string // "en" or "zh"
	TZ        string // IANA zone name, e.g. "Asia/Shanghai"
	Settings  Settings
	Budgets   []MonthlyBudget // at most one per currency, sorted by currency
	CreatedAt time.Time
}

// MonthlyBudget is a user's monthly budget in one currency. A user who
// spends in several currencies has one per currency: amounts in different
// currencies are never converted into one another.
type MonthlyBudget struct {
	Currency Currency
	Amount   Decimal // > 0
}

// Budget returns the user's monthly budget in c.
func (u *User) Budget(c Currency) (Decimal, bool) {
	for _, b := range u.Budgets {
		if b.Currency == c {
			return b.Amount, true
		}
	}
	return Decimal{}, false
}

// WithBudget returns u's budgets with c's set to amount, or removed when
// amount is zero, sorted by currency; u.Budgets is not changed.
func (u *User) WithBudget(c Currency, amount Decimal) []MonthlyBudget {
	out := make([]MonthlyBudget, 0, len(u.Budgets)+1)
	for _, b := range u.Budgets {
		if b.Currency != c {
			out = append(out, b)
		}
	}
	if !amount.IsZero() {
		out = append(out, MonthlyBudget{Currency: c, Amount: amount})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Currency < out[j].Currency })
	return out
}

// Location returns the user's time zone, UTC if TZ is empty or unknown.
func (u *User) Location() *time.Location {
	if u.TZ == "" {
		return time.UTC
	}
	loc, err := time.LoadLocation(u.TZ)
	if err != nil {
		return time.UTC
	}
	return loc
}
