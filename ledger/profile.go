package ledger

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// profilesJSON is the table of built-in platform profiles (docs/platforms.md).
// To add a platform, add a row there; nothing else changes.
//
//go:embed profiles.json
var profilesJSON []byte

// TrafficRule says how a platform bills network traffic.
type TrafficRule string

// Traffic rules.
const (
	TrafficUnknown TrafficRule = "unknown" // not known: usage stays UNPRICED until the user sets a price
	TrafficFree    TrafficRule = "free"    // no traffic fees: usage is priced at 0
	TrafficPriced  TrafficRule = "priced"  // per GB; the price varies, so the user gives it
)

// StorageRule is what a platform's storage costs by default.
type StorageRule struct {
	FreeGB             Decimal     // free quota of the instance's data disk
	Price              Decimal     // typical price per GB per Unit; zero when it varies
	Unit               StorageUnit // the unit prices are quoted in
	BilledWhileStopped bool
	// StoppedPrice, when HasStoppedPrice, is the price per GB per Unit
	// while the instance is stopped (RunPod: a volume disk costs twice as
	// much stopped as running).
	StoppedPrice    Decimal
	HasStoppedPrice bool
}

// Profile is a known platform's billing rules and defaults. Profiles are
// values; every field can be overridden per rental.
type Profile struct {
	Key      string   // canonical lower-case name stored in Rental.Platform, e.g. "autodl"
	Name     string   // display name, e.g. "AutoDL"
	NameZH   string   // the name Chinese replies use ("阿里云"); "" where the platform has none of its own
	Aliases  []string // names users type, matched case-insensitively
	Currency Currency
	Mode     Mode
	Min      time.Duration // minimum billed per running segment
	Step     time.Duration // billing increment; 0 means the mode's
	Floor    Decimal       // lifetime minimum compute charge
	TZ       string        // the platform's billing time zone (UTC+8 for Chinese platforms)
	Storage  StorageRule

	Traffic          TrafficRule
	TrafficFreeGB    Decimal   // free allowance per calendar month, GiB
	TrafficDirection Direction // the charged direction

	// ReleaseAfterStopped is how long an instance may stay stopped before
	// the platform releases it and its data (0: never).
	ReleaseAfterStopped time.Duration
	// OverdueRelease is how long after the balance runs out the platform
	// releases the instance (0: unknown).
	OverdueRelease time.Duration
	// Shutdown says what shutting the instance down from inside does to
	// compute billing: ShutdownStops (the platform stops the instance and
	// its compute charge), ShutdownBills (it keeps billing), or
	// ShutdownUnknown. Only where it stops does an agent's shutdown
	// report become a stop in the ledger by itself; elsewhere the user is
	// asked.
	Shutdown ShutdownRule
	Notes    string
}

// ShutdownRule is what a shutdown from inside the instance does to billing.
type ShutdownRule string

// Shutdown rules.
const (
	ShutdownUnknown ShutdownRule = ""
	ShutdownStops   ShutdownRule = "stops"
	ShutdownBills   ShutdownRule = "bills"
)

type profileRow struct {
	Key      string   `json:"key"`
	Name     string   `json:"name"`
	NameZH   string   `json:"name_zh"`
	Aliases  []string `json:"aliases"`
	Currency Currency `json:"currency"`
	Mode     Mode     `json:"mode"`
	Min      string   `json:"min"`
	Step     string   `json:"step"`
	Floor    Decimal  `json:"floor"`
	TZ       string   `json:"tz"`
	Storage  struct {
		FreeGB             Decimal     `json:"free_gb"`
		Price              Decimal     `json:"price"`
		Unit               StorageUnit `json:"unit"`
		BilledWhileStopped bool        `json:"billed_while_stopped"`
		StoppedPrice       *Decimal    `json:"stopped_price"`
	} `json:"storage"`
	Traffic             TrafficRule  `json:"traffic"`
	TrafficFreeGB       Decimal      `json:"traffic_free_gb"`
	TrafficDirection    Direction    `json:"traffic_direction"`
	ReleaseAfterStopped string       `json:"release_after_stopped"`
	OverdueRelease      string       `json:"overdue_release"`
	Shutdown            ShutdownRule `json:"shutdown"`
	Notes               string       `json:"notes"`
}

func parseDur(field, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", field, err)
	}
	return d, nil
}

// parseProfiles decodes the profile table and checks it.
func parseProfiles(data []byte) ([]Profile, map[string]int, error) {
	var doc struct {
		Profiles []profileRow `json:"profiles"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, nil, fmt.Errorf("ledger: profiles: %w", err)
	}
	out := make([]Profile, 0, len(doc.Profiles))
	index := make(map[string]int)
	for _, row := range doc.Profiles {
		p := Profile{
			Key: row.Key, Name: row.Name, NameZH: row.NameZH, Aliases: row.Aliases, Currency: row.Currency, Mode: row.Mode,
			Floor: row.Floor, TZ: row.TZ, Traffic: row.Traffic, TrafficFreeGB: row.TrafficFreeGB,
			TrafficDirection: row.TrafficDirection, Shutdown: row.Shutdown, Notes: row.Notes,
			Storage: StorageRule{FreeGB: row.Storage.FreeGB, Price: row.Storage.Price, Unit: row.Storage.Unit,
				BilledWhileStopped: row.Storage.BilledWhileStopped},
		}
		if sp := row.Storage.StoppedPrice; sp != nil {
			p.Storage.StoppedPrice, p.Storage.HasStoppedPrice = *sp, true
		}
		var err error
		for _, f := range []struct {
			name string
			s    string
			d    *time.Duration
		}{{"min", row.Min, &p.Min}, {"step", row.Step, &p.Step},
			{"release_after_stopped", row.ReleaseAfterStopped, &p.ReleaseAfterStopped},
			{"overdue_release", row.OverdueRelease, &p.OverdueRelease}} {
			if *f.d, err = parseDur(f.name, f.s); err != nil {
				return nil, nil, fmt.Errorf("ledger: profile %s: %w", row.Key, err)
			}
		}
		switch {
		case p.Key == "" || p.Key != strings.ToLower(p.Key):
			return nil, nil, fmt.Errorf("ledger: profile %q: key must be lower case", p.Key)
		case !p.Mode.Valid():
			return nil, nil, fmt.Errorf("ledger: profile %s: bad mode %q", p.Key, p.Mode)
		case p.Currency == "":
			return nil, nil, fmt.Errorf("ledger: profile %s: no currency", p.Key)
		case p.Storage.Unit != "" && p.Storage.Unit.Seconds() == 0:
			return nil, nil, fmt.Errorf("ledger: profile %s: bad storage unit %q", p.Key, p.Storage.Unit)
		case (!p.Storage.Price.IsZero() || p.Storage.HasStoppedPrice) && p.Storage.Unit == "":
			return nil, nil, fmt.Errorf("ledger: profile %s: a storage price needs a unit", p.Key)
		case p.Storage.Price.Sign() < 0 || p.Storage.StoppedPrice.Sign() < 0:
			return nil, nil, fmt.Errorf("ledger: profile %s: negative storage price", p.Key)
		case p.Storage.HasStoppedPrice && p.Storage.Price.IsZero():
			return nil, nil, fmt.Errorf("ledger: profile %s: a stopped storage price needs a running one", p.Key)
		}
		switch p.Shutdown {
		case ShutdownUnknown, ShutdownStops, ShutdownBills:
		default:
			return nil, nil, fmt.Errorf("ledger: profile %s: bad shutdown rule %q (stops, bills or absent)", p.Key, p.Shutdown)
		}
		switch p.Traffic {
		case TrafficUnknown, TrafficFree, TrafficPriced:
		default:
			return nil, nil, fmt.Errorf("ledger: profile %s: bad traffic rule %q", p.Key, p.Traffic)
		}
		if p.TZ != "" {
			if _, err := time.LoadLocation(p.TZ); err != nil {
				return nil, nil, fmt.Errorf("ledger: profile %s: %w", p.Key, err)
			}
		}
		for _, name := range append([]string{p.Key}, p.Aliases...) {
			k := normName(name)
			if j, dup := index[k]; dup && j != len(out) {
				return nil, nil, fmt.Errorf("ledger: profile %s: alias %q already names %s", p.Key, name, out[j].Key)
			}
			index[k] = len(out)
		}
		out = append(out, p)
	}
	return out, index, nil
}

var loadProfiles = sync.OnceValues(func() ([]Profile, map[string]int) {
	ps, idx, err := parseProfiles(profilesJSON)
	if err != nil {
		// The table is compiled in and checked by TestProfiles_Table, so
		// this is a build defect, not bad input.
		panic(err)
	}
	return ps, idx
})

// normName folds a platform name for lookup: lower case, no spaces,
// dashes or underscores ("Vast.ai", "vast ai" and "VAST-AI" agree).
func normName(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '-', '_', '\t':
			return -1
		}
		return r
	}, s)
}

// LookupProfile returns the built-in profile named by a key or an alias,
// in any case ("AutoDL", "恒源云", "vast.ai"). An unknown platform is not an
// error for the ledger: its rentals use only the user's own values, and the
// caller must supply at least the currency.
func LookupProfile(name string) (Profile, bool) {
	ps, idx := loadProfiles()
	i, ok := idx[normName(name)]
	if !ok {
		return Profile{}, false
	}
	p := ps[i]
	p.Aliases = append([]string(nil), p.Aliases...)
	return p, true
}

// CanonicalPlatform returns the key of the built-in profile that a
// platform name stands for ("auto-dl", "AutoDL.com" and "autodl" are all
// "autodl"), so that every record of a platform is stored under one name
// and draws on one balance. The profile table is the only list of
// platform names; ok is false for a platform the ledger does not know.
func CanonicalPlatform(name string) (key string, ok bool) {
	ps, idx := loadProfiles()
	i, ok := idx[normName(name)]
	if !ok {
		return "", false
	}
	return ps[i].Key, true
}

// PlatformName is one name of a known platform as the profile table
// writes it, with the profile's key.
type PlatformName struct {
	Name string // lower case, as a user may type it: "vast.ai", "阿里云"
	Key  string
}

// PlatformNames returns every key and alias of the built-in profiles, for
// finding a platform named inside free text, where the folding of
// CanonicalPlatform cannot be applied to a word not yet cut out.
func PlatformNames() []PlatformName {
	var out []PlatformName
	for _, p := range Profiles() {
		out = append(out, PlatformName{Name: strings.ToLower(p.Key), Key: p.Key})
		for _, a := range p.Aliases {
			out = append(out, PlatformName{Name: strings.ToLower(a), Key: p.Key})
		}
	}
	return out
}

// Profiles returns all built-in profiles sorted by key.
func Profiles() []Profile {
	ps, _ := loadProfiles()
	out := make([]Profile, len(ps))
	copy(out, ps)
	for i := range out {
		out[i].Aliases = append([]string(nil), out[i].Aliases...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Apply fills the fields of r the user left unset with the profile's
// defaults: Platform (the canonical key), Mode, Currency, Min, Step,
// Floor and, when r has no traffic terms, the traffic rule (free platforms
// get a zero price; others the allowance and direction, still unpriced).
// Set fields are kept, so every value is overridable; a caller who wants
// "no minimum" on a platform that has one sets Min after Apply.
func (p Profile) Apply(r *Rental) {
	r.Platform = p.Key
	if r.Mode == "" {
		r.Mode = p.Mode
	}
	if r.Currency == "" {
		r.Currency = p.Currency
	}
	if r.Min == 0 {
		r.Min = p.Min
	}
	if r.Step == 0 {
		r.Step = p.Step
	}
	if r.Floor.IsZero() {
		r.Floor = p.Floor
	}
	if r.Traffic == (TrafficTerms{}) {
		switch p.Traffic {
		case TrafficFree:
			r.Traffic = TrafficTerms{Priced: true, Direction: Both}
		case TrafficPriced:
			r.Traffic = TrafficTerms{FreeGB: p.TrafficFreeGB, Direction: p.TrafficDirection}
		}
	}
}

// ApplyVolume fills a volume's unset Platform, Currency, free quota and
// price unit from the profile and, when the user gave no price and the
// platform has a typical one (AutoDL's ¥0.0066/GB/day), that price with
// its per-state rates. It reports whether the price came from the
// profile, so the reply can say so. A user's price applies in every
// state; a platform whose price varies (Vast.ai's hosts set their own)
// leaves the volume UNPRICED until the user gives one.
func (p Profile) ApplyVolume(v *Volume) (priceFromProfile bool) {
	v.Platform = p.Key
	if v.Currency == "" {
		v.Currency = p.Currency
	}
	if v.FreeGB.IsZero() {
		v.FreeGB = p.Storage.FreeGB
	}
	if !v.Priced && !p.Storage.Price.IsZero() && v.Currency == p.Currency {
		v.Priced, v.Price, v.PriceUnit = true, p.Storage.Price, p.Storage.Unit
		v.HasStoppedPrice, v.StoppedPrice = p.Storage.HasStoppedPrice, p.Storage.StoppedPrice
		priceFromProfile = true
	}
	if v.PriceUnit == "" {
		v.PriceUnit = p.Storage.Unit
	}
	return priceFromProfile
}

// TrafficDefaults fills the terms of a user's traffic price on this
// platform: the profile's monthly free allowance unless the user wrote
// free= (freeGiven, so "free=0" means none), and the profile's charged
// direction unless the user named one (Out when the profile has none).
func (p Profile) TrafficDefaults(t TrafficTerms, freeGiven bool) TrafficTerms {
	if !freeGiven {
		t.FreeGB = p.TrafficFreeGB
	}
	if t.Direction == "" {
		t.Direction = p.TrafficDirection
	}
	if t.Direction == "" {
		t.Direction = Out
	}
	return t
}

// DataDeadline returns when the platform will release r and its data if
// it stays stopped: its last stop plus ReleaseAfterStopped (AutoDL 15
// days, 恒源云 10 days). ok is false when r is not stopped as of now or
// the platform has no such rule.
func (p Profile) DataDeadline(r *Rental, now time.Time) (deadline time.Time, ok bool) {
	if p.ReleaseAfterStopped <= 0 || r.stateAt(now) != Stopped {
		return time.Time{}, false
	}
	var stoppedAt time.Time
	for _, e := range r.Events {
		if e.At.After(now) {
			break
		}
		if e.Kind == EventStop {
			stoppedAt = e.At
		}
	}
	return stoppedAt.Add(p.ReleaseAfterStopped), true
}
