package ledger

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/gpuledger/gpuledger/perf"
)

// Unpriced is how exports show a line that has no price: never as 0.
const Unpriced = "UNPRICED"

// The export (DESIGN.md section 5) is the statement from the beginning to
// as_of with every line's charge, the totals per currency and the
// balances. Money is a decimal string in the currency's minor unit, times
// are RFC 3339 in the user's zone with its offset, and a missing time or
// runway is null. Rentals come in order of start then name, volumes of
// creation then name, totals by currency and balances by platform, so the
// same ledger always exports the same bytes.
//
// Beyond section 5's example, a rental synced from (or bound to) a
// platform's listed instance has "platform_id", the platform's own ID of
// it (left out for a rental known only from the chat); a totals entry has "unpriced": N when N
// lines of that currency were left out for having no price, and a
// rental's price and price_unit are null when it has no price. A rental
// charge part is "UNPRICED" when a line in it has no price, and so is its
// total then.
//
// Every input of the billing rules is in the export too, as the user
// typed it, so that each line can be recomputed from the export alone
// (section 5 lists the fields): the user's time_zone, a rental's events
// (start with its price, stops, resumes, price changes, release), its
// min_seconds, step_seconds and floor, its traffic terms, price changes
// and usage, its idle periods; a volume's platform and events (creation,
// resizes, deletion); and the one-off charges with their notes, the
// top-ups and the balance readings. Each list holds what lies at or
// before as_of (traffic usage and one-offs: before it, as they accrue),
// in time order; the month CSV lists the one-offs, top-ups and readings
// of its window only.
//
// What a rental delivered is in the JSON too, additively (absent for a
// rental without it, so such a rental reads as before; the CSV gains
// nothing): "bench", its first bench received at or before as_of, the
// perf.Bench as stored with when and as which report it came, what the
// hub bounded, and "claimed_by": "agent"; "jobs", its runs started at or
// before as_of. No figure of either enters a charge.
//
// A team's ledger (IsTeamLedger) exports additively too: a top-level
// "team" (its id, name and members, each with id, username, role and
// whether they left or were removed), and on each rental, volume and
// one-off "owner" (the member's user ID, absent when 0: a synced rental
// nobody claimed) and "project" (absent when none). A personal ledger's
// records have neither, so its export is byte for byte what it was.

type exportDoc struct {
	AsOf     string                      `json:"as_of"`
	Rentals  []exportRental              `json:"rentals"`
	Volumes  []exportVolume              `json:"volumes"`
	Totals   map[Currency]exportTotals   `json:"totals"`
	Balances map[string]exportBalanceRow `json:"balances"`
	// TimeZone is the user's IANA zone: the times above carry its offset,
	// and traffic allowances are per calendar month in it.
	TimeZone string          `json:"time_zone"`
	OneOffs  []exportOneOff  `json:"one_offs"`
	TopUps   []exportMoneyAt `json:"top_ups"`
	Readings []exportReading `json:"balance_readings"`
	// Team is the team of a team ledger's export; nil for a personal one.
	Team *exportTeam `json:"team,omitempty"`
}

// exportTeam is a team ledger's team: its members now (owners, admins,
// members, in joining order), then those who left or were removed and
// still own a record or were named by the caller.
type exportTeam struct {
	ID      int64          `json:"id"`
	Name    string         `json:"name"`
	Members []exportMember `json:"members"`
}

type exportMember struct {
	ID       int64  `json:"id"`
	Username string `json:"username"`
	Role     Role   `json:"role"`
	Removed  bool   `json:"removed"`
}

// ExportTeam is what a team ledger's export says of its team, which the
// book does not hold: the caller reads it from the TeamStore.
type ExportTeam struct {
	Team Team
	// Members are the current members (TeamStore.Members).
	Members []Member
	// Former are members who left or were removed, when the caller
	// knows them. An owner of a record who is in neither list is listed
	// as removed, with no username and the role member.
	Former []Member
}

// ExportOption adds to an export what the book alone does not hold.
type ExportOption func(*exportConfig)

type exportConfig struct {
	team *ExportTeam
}

// WithTeam names the team of a team ledger's export (its "team" object
// and the CSV's owner names). Without it a team ledger's export still
// has "team", with its id only and no members. It is ignored for a
// personal ledger.
func WithTeam(t ExportTeam) ExportOption {
	return func(c *exportConfig) { c.team = &t }
}

func exportOptions(opts []ExportOption) exportConfig {
	var c exportConfig
	for _, o := range opts {
		o(&c)
	}
	return c
}

// buildExportTeam returns the "team" object of b's export, or nil when b
// is a personal ledger.
func buildExportTeam(b *Book, t *ExportTeam) *exportTeam {
	id, ok := TeamOf(b.User.ID)
	if !ok {
		return nil
	}
	et := &exportTeam{ID: id, Members: []exportMember{}}
	if t == nil {
		return et
	}
	et.Name = t.Team.Name
	seen := map[int64]bool{}
	for _, m := range t.Members {
		if !seen[m.UserID] {
			seen[m.UserID] = true
			et.Members = append(et.Members, exportMember{ID: m.UserID, Username: m.Username, Role: m.Role})
		}
	}
	var former []exportMember
	for _, m := range t.Former {
		if !seen[m.UserID] {
			seen[m.UserID] = true
			former = append(former, exportMember{ID: m.UserID, Username: m.Username, Role: m.Role, Removed: true})
		}
	}
	owner := func(id int64) {
		if id != 0 && !seen[id] {
			seen[id] = true
			former = append(former, exportMember{ID: id, Role: RoleMember, Removed: true})
		}
	}
	for _, r := range b.Rentals {
		owner(r.Owner)
	}
	for _, v := range b.Volumes {
		owner(v.Owner)
	}
	for i := range b.Charges {
		owner(b.Charges[i].Owner)
	}
	slices.SortStableFunc(former, func(x, y exportMember) int { return cmp.Compare(x.ID, y.ID) })
	et.Members = append(et.Members, former...)
	return et
}

// exportEvent is one event of a rental (kind start, stop, resume, price,
// release) or of a volume (create, resize, delete). Price and PriceUnit
// are a priced rental's start and price events' rate; SizeGB is a
// volume's size from a create or resize.
type exportEvent struct {
	Kind      string  `json:"kind"`
	At        string  `json:"at"`
	Price     *string `json:"price,omitempty"`
	PriceUnit *string `json:"price_unit,omitempty"`
	SizeGB    *string `json:"size_gb,omitempty"`
}

// exportTraffic is a rental's traffic terms, their later price changes
// and its usage.
type exportTraffic struct {
	Priced       bool                 `json:"priced"`
	PricePerGB   *string              `json:"price_per_gb"`
	FreeGB       string               `json:"free_gb"`
	Direction    Direction            `json:"direction"`
	PriceChanges []exportTrafficPrice `json:"price_changes"`
	Usage        []exportTrafficUse   `json:"usage"`
}

type exportTrafficPrice struct {
	At         string `json:"at"`
	PricePerGB string `json:"price_per_gb"`
}

type exportTrafficUse struct {
	At        string    `json:"at"`
	Bytes     int64     `json:"bytes"`
	Direction Direction `json:"direction"`
	// RecordRef is the record's number in the chat (#N, Record.Ref), for
	// /fix #N and /delete #N; null for usage an agent reported.
	RecordRef *int64 `json:"record_ref"`
}

// exportIdle is an idle period the agent saw; To is null while it lasts.
type exportIdle struct {
	From string  `json:"from"`
	To   *string `json:"to"`
}

// exportOneOff is a one-off charge: Amount as typed, Charge as billed
// (rounded half-up to the currency's minor unit).
type exportOneOff struct {
	At       string   `json:"at"`
	Platform string   `json:"platform"`
	Rental   *string  `json:"rental"`
	Amount   string   `json:"amount"`
	Currency Currency `json:"currency"`
	Charge   string   `json:"charge"`
	Note     string   `json:"note"`

	// RentalRef is the rental's address (RentalRef), set with Rental.
	RentalRef *string `json:"rental_ref"`
	// RecordRef is the charge's number in the chat (#N, Record.Ref), for
	// /fix #N and /delete #N; null for none.
	RecordRef *int64 `json:"record_ref"`

	// Owner and Project as a rental's.
	Owner   int64  `json:"owner,omitempty"`
	Project string `json:"project,omitempty"`
}

// exportMoneyAt is a top-up: an amount as typed, added to a platform's
// balance at At.
type exportMoneyAt struct {
	At       string   `json:"at"`
	Platform string   `json:"platform"`
	Amount   string   `json:"amount"`
	Currency Currency `json:"currency"`
	// RecordRef is the record's number in the chat (#N, Record.Ref), for
	// /fix #N and /delete #N; null for none (a balance the API gave).
	RecordRef *int64 `json:"record_ref"`
}

// exportReading is a balance a platform showed at At: typed with
// /balance (source "typed") or read from the platform's API ("api").
type exportReading struct {
	exportMoneyAt
	Source string `json:"source"`
}

type exportRental struct {
	Name string `json:"name"`
	// Ref is the rental's address (RentalRef, "yolo@2026-11-02"): unlike
	// the name, which a later rental may reuse, it tells every rental apart.
	Ref string `json:"ref"`
	// Owner and Project are a team ledger's (Rental.Owner, .Project),
	// absent when 0 or "".
	Owner          int64         `json:"owner,omitempty"`
	Project        string        `json:"project,omitempty"`
	Platform       string        `json:"platform"`
	PlatformID     string        `json:"platform_id,omitempty"` // the platform's instance ID of a synced rental
	GPU            string        `json:"gpu"`
	GPUCount       int           `json:"gpu_count"`
	Mode           Mode          `json:"mode"`
	Price          *string       `json:"price"`
	PriceUnit      *string       `json:"price_unit"`
	Currency       Currency      `json:"currency"`
	State          State         `json:"state"`
	StartedAt      string        `json:"started_at"`
	ReleasedAt     *string       `json:"released_at"`
	RunningSeconds int64         `json:"running_seconds"`
	BilledSeconds  int64         `json:"billed_seconds"`
	IdleSeconds    int64         `json:"idle_seconds"`
	Charges        exportCharges `json:"charges"`
	// MinSeconds and StepSeconds are the minimum and the increment a
	// running segment is billed in (the mode's increment unless step=
	// was given: 60 per-minute, 3600 per-hour, 1 per-second); always-on
	// rentals ignore them. Floor is the lifetime minimum compute charge,
	// null for none.
	MinSeconds  int64          `json:"min_seconds"`
	StepSeconds int64          `json:"step_seconds"`
	Floor       *string        `json:"floor"`
	Events      []exportEvent  `json:"events"`
	Traffic     *exportTraffic `json:"traffic,omitempty"`
	Idle        []exportIdle   `json:"idle_periods,omitempty"`
	// Bench is the rental's first bench received at or before as_of,
	// Jobs its job runs started at or before it; both absent when none.
	Bench *exportBench `json:"bench,omitempty"`
	Jobs  []exportJob  `json:"jobs,omitempty"`
}

// exportBench is a rental's bench: the perf.Bench as its agent sent it
// and the hub stored it (its own JSON names, its times as the agent
// stamped them), with when the server received it, the agent's ID of
// the run, the figures the hub did not believe and kept as not measured,
// and who claims it: always the agent, never the ledger.
type exportBench struct {
	perf.Bench
	ReportID   string   `json:"report_id"`
	ReceivedAt string   `json:"received_at"`
	Bounded    []string `json:"bounded"`
	ClaimedBy  string   `json:"claimed_by"`
}

// exportJob is one run of the user's own work on a rental: its label
// ("" unlabelled), its span, its exit code (null for a span named in
// chat) and where it came from ("agent" or "chat").
type exportJob struct {
	Label     string    `json:"label"`
	StartedAt string    `json:"started_at"`
	EndedAt   string    `json:"ended_at"`
	ExitCode  *int      `json:"exit_code"`
	Source    JobSource `json:"source"`
}

type exportCharges struct {
	Compute string `json:"compute"`
	Storage string `json:"storage"`
	Traffic string `json:"traffic"`
	Other   string `json:"other"`
	Total   string `json:"total"`
}

type exportVolume struct {
	Name string `json:"name"`
	// Owner and Project as a rental's.
	Owner   int64   `json:"owner,omitempty"`
	Project string  `json:"project,omitempty"`
	Rental  *string `json:"rental"`
	// RentalRef is the attached rental's address, set with Rental when
	// the rental is in the book.
	RentalRef *string     `json:"rental_ref"`
	SizeGB    string      `json:"size_gb"`
	FreeGB    string      `json:"free_gb"`
	Price     *string     `json:"price"`
	PriceUnit StorageUnit `json:"price_unit"`
	// StoppedPrice is the price while the attached rental is stopped or
	// released, only for volumes that have one.
	StoppedPrice *string  `json:"stopped_price,omitempty"`
	Currency     Currency `json:"currency"`
	CreatedAt    string   `json:"created_at"`
	DeletedAt    *string  `json:"deleted_at"`
	Charge       string   `json:"charge"`
	// PriceChanges are the later changes of the price terms up to as_of,
	// in order, only for volumes that have any: Price, PriceUnit and
	// StoppedPrice above stay the terms from creation.
	PriceChanges []exportVolumePrice `json:"price_changes,omitempty"`
	Platform     string              `json:"platform"`
	// Events are the creation with its size, the resizes and the
	// deletion up to as_of.
	Events []exportEvent `json:"events"`
}

// exportVolumePrice is a volume's price terms from At on.
type exportVolumePrice struct {
	At           string      `json:"at"`
	Price        string      `json:"price"`
	PriceUnit    StorageUnit `json:"price_unit"`
	StoppedPrice *string     `json:"stopped_price,omitempty"`
}

type exportTotals struct {
	Compute  string `json:"compute"`
	Storage  string `json:"storage"`
	Traffic  string `json:"traffic"`
	Other    string `json:"other"`
	Total    string `json:"total"`
	Unpriced int    `json:"unpriced,omitempty"`
}

type exportBalanceRow struct {
	Currency  Currency `json:"currency"`
	Balance   string   `json:"balance"`
	RunsOutAt *string  `json:"runs_out_at"`
}

func ptr(s string) *string { return &s }

// recordRef is a record's number for the export, nil for 0 (none).
func recordRef(ref int64) *int64 {
	if ref == 0 {
		return nil
	}
	return &ref
}

func priced(ok bool, m Money) string {
	if !ok {
		return Unpriced
	}
	return m.String()
}

// buildExport computes the export document for b as of asOf.
func buildExport(b *Book, asOf time.Time, cfg exportConfig) exportDoc {
	return buildExportOf(b, StatementAsOf(b, asOf), asOf, cfg)
}

// buildExportOf computes the export document of the statement st (from
// the beginning or of a window ending at asOf), with balances as of asOf.
func buildExportOf(b *Book, st *Statement, asOf time.Time, cfg exportConfig) exportDoc {
	loc := b.User.Location()
	ts := func(t time.Time) string { return t.In(loc).Format(time.RFC3339) }
	doc := exportDoc{
		AsOf:     ts(asOf),
		Rentals:  []exportRental{},
		Volumes:  []exportVolume{},
		Totals:   map[Currency]exportTotals{},
		Balances: map[string]exportBalanceRow{},
		TimeZone: loc.String(),
		OneOffs:  []exportOneOff{},
		TopUps:   []exportMoneyAt{},
		Readings: []exportReading{},
		Team:     buildExportTeam(b, cfg.team),
	}
	// Events up to asOf are listed (the history a window's figures need
	// starts before it); top-ups and readings up to asOf, or those in the
	// window [From, asOf) of a statement that has one.
	upTo := func(t time.Time) bool { return !t.After(asOf) }
	listed := func(t time.Time) bool {
		if st.From.IsZero() {
			return upTo(t)
		}
		return !t.Before(st.From) && t.Before(asOf)
	}
	names, refs := map[int64]string{}, map[int64]string{}
	byName := map[string][]*Rental{}
	for _, r := range b.Rentals {
		byName[r.Name] = append(byName[r.Name], r)
	}
	for _, r := range b.Rentals {
		names[r.ID] = r.Name
		// RefOf reads only the rentals of r's name: given those alone, a
		// ledger of 10,000 rentals stays linear (BenchmarkExport).
		refs[r.ID] = RefOf(byName[r.Name], r, loc)
	}
	benches, jobs := exportDelivered(b, upTo, ts)
	for _, rc := range st.Rentals {
		r := rc.Rental
		er := exportRental{
			Name: r.Name, Ref: refs[r.ID], Owner: r.Owner, Project: r.Project, Platform: r.Platform, PlatformID: r.PlatformID, GPU: r.GPU, GPUCount: r.GPUCount, Mode: r.Mode,
			Currency: r.Currency, State: rc.State, StartedAt: ts(r.StartedAt()),
			RunningSeconds: rc.RunningSeconds, BilledSeconds: rc.BilledSeconds, IdleSeconds: rc.IdleSeconds,
			Charges: exportCharges{
				Compute: priced(rc.ComputePriced, rc.Compute),
				Storage: priced(rc.StoragePriced, rc.Storage),
				Traffic: priced(rc.TrafficPriced, rc.Traffic),
				Other:   rc.Other.String(),
				Total:   priced(rc.Priced(), rc.Total),
			},
		}
		if r.Priced {
			er.Price, er.PriceUnit = ptr(rc.Rate.Amount.String()), ptr(string(rc.Rate.Unit))
		}
		if at, ok := r.ReleasedAt(); ok && !at.After(asOf) {
			er.ReleasedAt = ptr(ts(at))
		}
		if r.Mode != AlwaysOn {
			er.MinSeconds, er.StepSeconds = int64(r.Min/time.Second), effectiveStep(r)
		}
		if r.Floor.Sign() > 0 {
			er.Floor = ptr(r.Floor.String())
		}
		er.Events = exportRentalEvents(r, upTo, ts)
		er.Traffic = exportRentalTraffic(r, asOf, ts)
		for _, iv := range r.Idle {
			if !iv.From.Before(asOf) {
				break
			}
			ei := exportIdle{From: ts(iv.From)}
			if !iv.To.IsZero() && upTo(iv.To) {
				ei.To = ptr(ts(iv.To))
			}
			er.Idle = append(er.Idle, ei)
		}
		er.Bench, er.Jobs = benches[r.ID], jobs[r.ID]
		doc.Rentals = append(doc.Rentals, er)
	}
	for _, vc := range st.Volumes {
		v := vc.Volume
		ev := exportVolume{
			Name: v.Name, Owner: v.Owner, Project: v.Project, SizeGB: vc.SizeGB.String(), FreeGB: v.FreeGB.String(), PriceUnit: v.PriceUnit,
			Currency: v.Currency, CreatedAt: ts(v.Events[0].At), Charge: priced(vc.Priced, vc.Charge),
			Platform: v.Platform, Events: []exportEvent{},
		}
		for _, e := range v.Events {
			if !upTo(e.At) {
				break
			}
			ee := exportEvent{Kind: string(e.Kind), At: ts(e.At)}
			if e.Kind != VolumeDelete {
				ee.SizeGB = ptr(e.SizeGB.String())
			}
			ev.Events = append(ev.Events, ee)
		}
		if v.Priced {
			ev.Price = ptr(v.Price.String())
			if v.HasStoppedPrice {
				ev.StoppedPrice = ptr(v.StoppedPrice.String())
			}
		}
		if n := v.RentalName; n != "" {
			ev.Rental = ptr(n)
		} else if n, ok := names[v.RentalID]; ok && v.RentalID != 0 {
			ev.Rental = ptr(n)
		}
		if ref, ok := refs[v.RentalID]; ok && v.RentalID != 0 && ev.Rental != nil {
			ev.RentalRef = ptr(ref)
		}
		if at, ok := v.Deleted(); ok && !at.After(asOf) {
			ev.DeletedAt = ptr(ts(at))
		}
		for _, p := range v.Prices {
			if p.At.After(asOf) {
				break
			}
			ep := exportVolumePrice{At: ts(p.At), Price: p.Price.String(), PriceUnit: p.PriceUnit}
			if p.HasStoppedPrice {
				ep.StoppedPrice = ptr(p.StoppedPrice.String())
			}
			ev.PriceChanges = append(ev.PriceChanges, ep)
		}
		doc.Volumes = append(doc.Volumes, ev)
	}
	for _, oc := range st.Others {
		c := oc.Charge
		eo := exportOneOff{At: ts(c.At), Platform: oc.Platform, Amount: c.Amount.String(), Currency: c.Currency,
			Charge: oc.Amount.String(), Note: c.Note, RecordRef: recordRef(c.Ref), Owner: c.Owner, Project: c.Project}
		if n, ok := names[c.RentalID]; ok && c.RentalID != 0 {
			eo.Rental, eo.RentalRef = ptr(n), ptr(refs[c.RentalID])
		}
		doc.OneOffs = append(doc.OneOffs, eo)
	}
	for _, t := range sortedByTime(b.TopUps, func(t TopUp) (time.Time, int64) { return t.At, t.ID }) {
		if listed(t.At) {
			doc.TopUps = append(doc.TopUps, exportMoneyAt{At: ts(t.At), Platform: t.Platform, Amount: t.Amount.String(), Currency: t.Currency,
				RecordRef: recordRef(t.Ref)})
		}
	}
	for _, r := range sortedByTime(b.Balances, func(r BalanceRecord) (time.Time, int64) { return r.At, r.ID }) {
		if listed(r.At) {
			src := "typed"
			if r.API {
				src = "api"
			}
			doc.Readings = append(doc.Readings, exportReading{Source: src,
				exportMoneyAt: exportMoneyAt{At: ts(r.At), Platform: r.Platform, Amount: r.Amount.String(), Currency: r.Currency,
					RecordRef: recordRef(r.Ref)}})
		}
	}
	for c, t := range st.Totals {
		doc.Totals[c] = exportTotals{Compute: t.Compute.String(), Storage: t.Storage.String(),
			Traffic: t.Traffic.String(), Other: t.Other.String(), Total: t.Total.String(), Unpriced: t.Unpriced}
	}
	for p, bs := range Balances(b, asOf) {
		row := exportBalanceRow{Currency: bs.Currency, Balance: bs.Balance.String()}
		if bs.RunsOutAt != nil {
			row.RunsOutAt = ptr(ts(*bs.RunsOutAt))
		}
		doc.Balances[p] = row
	}
	return doc
}

// exportDelivered returns, by rental ID, each rental's first bench
// received and its job runs started where keep says (at or before
// as_of).
func exportDelivered(b *Book, keep func(time.Time) bool, ts func(time.Time) string) (map[int64]*exportBench, map[int64][]exportJob) {
	benches := map[int64]*exportBench{}
	for _, rec := range b.Benches {
		if _, ok := benches[rec.RentalID]; ok || !keep(rec.At) {
			continue
		}
		bounded := rec.Bounded
		if bounded == nil {
			bounded = []string{}
		}
		benches[rec.RentalID] = &exportBench{Bench: rec.Bench, ReportID: rec.ReportID, ReceivedAt: ts(rec.At),
			Bounded: bounded, ClaimedBy: "agent"}
	}
	jobs := map[int64][]exportJob{}
	for _, j := range b.JobRuns {
		if !keep(j.StartedAt) {
			continue
		}
		ej := exportJob{Label: j.Label, StartedAt: ts(j.StartedAt), EndedAt: ts(j.EndedAt), Source: j.Source}
		if j.Source == JobFromAgent {
			code := j.ExitCode
			ej.ExitCode = &code
		}
		jobs[j.RentalID] = append(jobs[j.RentalID], ej)
	}
	return benches, jobs
}

// exportRentalEvents returns r's events for which keep is true, each
// with its time written by ts; the start and each price change carry the
// rate of a priced rental.
func exportRentalEvents(r *Rental, keep func(time.Time) bool, ts func(time.Time) string) []exportEvent {
	out := make([]exportEvent, 0, len(r.Events))
	for i, e := range r.Events {
		if !keep(e.At) {
			break
		}
		ee := exportEvent{Kind: string(e.Kind), At: ts(e.At)}
		switch {
		case !r.Priced:
		case i == 0 && e.Kind == EventStart:
			ee.Price, ee.PriceUnit = ptr(r.Price.Amount.String()), ptr(string(r.Price.Unit))
		case e.Kind == EventPrice:
			ee.Price, ee.PriceUnit = ptr(e.Price.Amount.String()), ptr(string(e.Price.Unit))
		}
		out = append(out, ee)
	}
	return out
}

// exportRentalTraffic returns r's traffic terms, price changes up to
// asOf and usage before it, or nil for a rental with neither terms nor
// usage.
func exportRentalTraffic(r *Rental, asOf time.Time, ts func(time.Time) string) *exportTraffic {
	if !r.Traffic.Priced && len(r.TrafficUsage) == 0 {
		return nil
	}
	et := &exportTraffic{Priced: r.Traffic.Priced, FreeGB: r.Traffic.FreeGB.String(), Direction: chargedDirection(r.Traffic),
		PriceChanges: []exportTrafficPrice{}, Usage: []exportTrafficUse{}}
	if r.Traffic.Priced {
		et.PricePerGB = ptr(r.Traffic.PricePerGB.String())
	}
	for _, p := range r.TrafficPrices {
		if p.At.After(asOf) {
			break
		}
		et.PriceChanges = append(et.PriceChanges, exportTrafficPrice{At: ts(p.At), PricePerGB: p.PricePerGB.String()})
	}
	for _, u := range sortedByTime(r.TrafficUsage, func(u TrafficUsage) (time.Time, int64) { return u.At, u.ID }) {
		if !u.At.Before(asOf) {
			break
		}
		d := u.Direction
		if d == "" {
			d = Out
		}
		et.Usage = append(et.Usage, exportTrafficUse{At: ts(u.At), Bytes: u.Bytes, Direction: d, RecordRef: recordRef(u.Ref)})
	}
	return et
}

// sortedByTime returns xs in order of time then ID, sorting a copy only
// when they are not in that order already (the store loads them so).
func sortedByTime[T any](xs []T, key func(T) (time.Time, int64)) []T {
	less := func(a, b T) int {
		ta, ia := key(a)
		tb, ib := key(b)
		if c := ta.Compare(tb); c != 0 {
			return c
		}
		return cmp.Compare(ia, ib)
	}
	if slices.IsSortedFunc(xs, less) {
		return xs
	}
	out := slices.Clone(xs)
	slices.SortStableFunc(out, less)
	return out
}

// WriteExportJSON writes the ledger with computed charges as of asOf in
// the JSON shape of DESIGN.md section 5 (see the comment above for the
// additions). The output ends with a newline. WithTeam names a team
// ledger's team.
//
// It writes the document a list element at a time, in the bytes an
// indenting json.Encoder gives for the whole: that one marshals all of it
// and then indents it into a second buffer, several times the output's
// size at once for a large ledger (BenchmarkExport).
func WriteExportJSON(w io.Writer, b *Book, asOf time.Time, opts ...ExportOption) error {
	doc := buildExport(b, asOf, exportOptions(opts))
	s := &jsonStream{w: bufio.NewWriter(w)}
	s.raw("{")
	s.field("as_of", doc.AsOf)
	streamList(s, "rentals", doc.Rentals)
	streamList(s, "volumes", doc.Volumes)
	s.field("totals", doc.Totals)
	s.field("balances", doc.Balances)
	s.field("time_zone", doc.TimeZone)
	streamList(s, "one_offs", doc.OneOffs)
	streamList(s, "top_ups", doc.TopUps)
	streamList(s, "balance_readings", doc.Readings)
	if doc.Team != nil {
		s.field("team", doc.Team)
	}
	s.raw("\n}\n")
	if s.err == nil {
		s.err = s.w.Flush()
	}
	if s.err != nil {
		return fmt.Errorf("ledger: export json: %w", s.err)
	}
	return nil
}

// jsonStream writes a JSON object field by field, indented by two
// spaces, HTML left unescaped; the first error sticks.
type jsonStream struct {
	w      *bufio.Writer
	buf    bytes.Buffer
	fields int
	err    error
}

func (s *jsonStream) raw(text string) {
	if s.err == nil {
		_, s.err = s.w.WriteString(text)
	}
}

// value writes v as indented JSON whose continuation lines begin with
// prefix (the depth it is nested at).
func (s *jsonStream) value(prefix string, v any) {
	if s.err != nil {
		return
	}
	s.buf.Reset()
	enc := json.NewEncoder(&s.buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, "  ")
	if s.err = enc.Encode(v); s.err != nil {
		return
	}
	_, s.err = s.w.Write(bytes.TrimSuffix(s.buf.Bytes(), []byte("\n")))
}

// key starts the next field of the top-level object.
func (s *jsonStream) key(name string) {
	if s.fields > 0 {
		s.raw(",")
	}
	s.fields++
	s.raw("\n  " + strconv.Quote(name) + ": ")
}

func (s *jsonStream) field(name string, v any) {
	s.key(name)
	s.value("  ", v)
}

// streamList writes the field name with the list xs, one element at a
// time.
func streamList[T any](s *jsonStream, name string, xs []T) {
	s.key(name)
	if len(xs) == 0 {
		s.raw("[]")
		return
	}
	s.raw("[")
	for i := range xs {
		if i > 0 {
			s.raw(",")
		}
		s.raw("\n    ")
		s.value("    ", &xs[i])
	}
	s.raw("\n  ]")
}
