package ledger

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
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

type exportDoc struct {
	AsOf     string                      `json:"as_of"`
	Rentals  []exportRental              `json:"rentals"`
	Volumes  []exportVolume              `json:"volumes"`
	Totals   map[Currency]exportTotals   `json:"totals"`
	Balances map[string]exportBalanceRow `json:"balances"`
}

type exportRental struct {
	Name           string        `json:"name"`
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
}

type exportCharges struct {
	Compute string `json:"compute"`
	Storage string `json:"storage"`
	Traffic string `json:"traffic"`
	Other   string `json:"other"`
	Total   string `json:"total"`
}

type exportVolume struct {
	Name      string      `json:"name"`
	Rental    *string     `json:"rental"`
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

func priced(ok bool, m Money) string {
	if !ok {
		return Unpriced
	}
	return m.String()
}

// buildExport computes the export document for b as of asOf.
func buildExport(b *Book, asOf time.Time) exportDoc {
	return buildExportOf(b, StatementAsOf(b, asOf), asOf)
}

// buildExportOf computes the export document of the statement st (from
// the beginning or of a window ending at asOf), with balances as of asOf.
func buildExportOf(b *Book, st *Statement, asOf time.Time) exportDoc {
	loc := b.User.Location()
	ts := func(t time.Time) string { return t.In(loc).Format(time.RFC3339) }
	doc := exportDoc{
		AsOf:     ts(asOf),
		Rentals:  []exportRental{},
		Volumes:  []exportVolume{},
		Totals:   map[Currency]exportTotals{},
		Balances: map[string]exportBalanceRow{},
	}
	names := map[int64]string{}
	for _, r := range b.Rentals {
		names[r.ID] = r.Name
	}
	for _, rc := range st.Rentals {
		r := rc.Rental
		er := exportRental{
			Name: r.Name, Platform: r.Platform, PlatformID: r.PlatformID, GPU: r.GPU, GPUCount: r.GPUCount, Mode: r.Mode,
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
		doc.Rentals = append(doc.Rentals, er)
	}
	for _, vc := range st.Volumes {
		v := vc.Volume
		ev := exportVolume{
			Name: v.Name, SizeGB: vc.SizeGB.String(), FreeGB: v.FreeGB.String(), PriceUnit: v.PriceUnit,
			Currency: v.Currency, CreatedAt: ts(v.Events[0].At), Charge: priced(vc.Priced, vc.Charge),
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

// WriteExportJSON writes the ledger with computed charges as of asOf in
// the JSON shape of DESIGN.md section 5 (see the comment above for the
// two additions). The output ends with a newline.
func WriteExportJSON(w io.Writer, b *Book, asOf time.Time) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(buildExport(b, asOf)); err != nil {
		return fmt.Errorf("ledger: export json: %w", err)
	}
	return nil
}

// ExportCSVColumns is the header of the CSV export. The record column says
// what a row is: rental, volume, total (one per currency) or balance (one
// per platform); each row fills the columns that apply to it and leaves
// the others empty. Times and money are written as in the JSON, a null as
// an empty cell, an unpriced line as UNPRICED. For a total row, unpriced
// is the number of lines left out; as_of is on every row. platform_id is
// a synced rental's platform instance ID (empty for other rows). New
// columns are added at the end, so a reader by position keeps working.
var ExportCSVColumns = []string{
	"record", "name", "platform", "rental", "gpu", "gpu_count", "mode", "price", "price_unit", "currency",
	"state", "started_at", "released_at", "running_seconds", "billed_seconds", "idle_seconds",
	"size_gb", "free_gb", "created_at", "deleted_at",
	"compute", "storage", "traffic", "other", "total", "charge", "unpriced",
	"balance", "runs_out_at", "as_of", "stopped_price", "price_changes", "platform_id",
}

// WriteExportCSV writes the same rows as WriteExportJSON as CSV with one
// header row (ExportCSVColumns): rentals, then volumes, then totals by
// currency, then balances by platform.
func WriteExportCSV(w io.Writer, b *Book, asOf time.Time) error {
	return writeExportCSV(w, buildExport(b, asOf))
}

// WriteExportCSVPeriod writes the CSV export of the window [from, to)
// (the dashboard's month): the same columns and rows as WriteExportCSV,
// but only the lines active in the window, each with the charges that
// accrued inside it (Spend's figures: running, billed and idle seconds
// too), the totals of the window, and the balances as of to. as_of is
// to. So the rows of consecutive windows add up to the export of their
// union.
func WriteExportCSVPeriod(w io.Writer, b *Book, from, to time.Time) error {
	if !to.After(from) {
		return Errorf(EINVALID, "the period must end after it starts (from %s, to %s)", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	return writeExportCSV(w, buildExportOf(b, Spend(b, from, to), to))
}

func writeExportCSV(w io.Writer, doc exportDoc) error {
	col := make(map[string]int, len(ExportCSVColumns))
	for i, c := range ExportCSVColumns {
		col[c] = i
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(ExportCSVColumns); err != nil {
		return fmt.Errorf("ledger: export csv: %w", err)
	}
	row := func(kv ...string) error {
		rec := make([]string, len(ExportCSVColumns))
		for i := 0; i+1 < len(kv); i += 2 {
			rec[col[kv[i]]] = kv[i+1]
		}
		rec[col["as_of"]] = doc.AsOf
		return cw.Write(rec)
	}
	opt := func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	}
	for _, r := range doc.Rentals {
		if err := row("record", "rental", "name", r.Name, "platform", r.Platform, "platform_id", r.PlatformID, "gpu", r.GPU,
			"gpu_count", strconv.Itoa(r.GPUCount), "mode", string(r.Mode), "price", opt(r.Price),
			"price_unit", opt(r.PriceUnit), "currency", string(r.Currency), "state", string(r.State),
			"started_at", r.StartedAt, "released_at", opt(r.ReleasedAt),
			"running_seconds", strconv.FormatInt(r.RunningSeconds, 10),
			"billed_seconds", strconv.FormatInt(r.BilledSeconds, 10),
			"idle_seconds", strconv.FormatInt(r.IdleSeconds, 10),
			"compute", r.Charges.Compute, "storage", r.Charges.Storage, "traffic", r.Charges.Traffic,
			"other", r.Charges.Other, "total", r.Charges.Total); err != nil {
			return fmt.Errorf("ledger: export csv: %w", err)
		}
	}
	for _, v := range doc.Volumes {
		if err := row("record", "volume", "name", v.Name, "rental", opt(v.Rental), "size_gb", v.SizeGB,
			"free_gb", v.FreeGB, "price", opt(v.Price), "price_unit", string(v.PriceUnit),
			"currency", string(v.Currency), "created_at", v.CreatedAt, "deleted_at", opt(v.DeletedAt),
			"charge", v.Charge, "stopped_price", opt(v.StoppedPrice), "price_changes", csvPriceChanges(v.PriceChanges)); err != nil {
			return fmt.Errorf("ledger: export csv: %w", err)
		}
	}
	curs := make([]string, 0, len(doc.Totals))
	for c := range doc.Totals {
		curs = append(curs, string(c))
	}
	sort.Strings(curs)
	for _, c := range curs {
		t := doc.Totals[Currency(c)]
		if err := row("record", "total", "currency", c, "compute", t.Compute, "storage", t.Storage,
			"traffic", t.Traffic, "other", t.Other, "total", t.Total, "unpriced", strconv.Itoa(t.Unpriced)); err != nil {
			return fmt.Errorf("ledger: export csv: %w", err)
		}
	}
	plats := make([]string, 0, len(doc.Balances))
	for p := range doc.Balances {
		plats = append(plats, p)
	}
	sort.Strings(plats)
	for _, p := range plats {
		bal := doc.Balances[p]
		if err := row("record", "balance", "platform", p, "currency", string(bal.Currency),
			"balance", bal.Balance, "runs_out_at", opt(bal.RunsOutAt)); err != nil {
			return fmt.Errorf("ledger: export csv: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("ledger: export csv: %w", err)
	}
	return nil
}

// csvPriceChanges writes a volume's price changes in one cell, "AT PRICE
// UNIT" each, with " stopped=PRICE" when the change has a stopped rate,
// separated by "; ".
func csvPriceChanges(ps []exportVolumePrice) string {
	parts := make([]string, 0, len(ps))
	for _, p := range ps {
		c := p.At + " " + p.Price + " " + string(p.PriceUnit)
		if p.StoppedPrice != nil {
			c += " stopped=" + *p.StoppedPrice
		}
		parts = append(parts, c)
	}
	return strings.Join(parts, "; ")
}
