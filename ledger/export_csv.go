package ledger

import (
	"encoding/csv"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ExportCSVColumns is the header of the CSV export. The record column says
// what a row is: rental, volume, total (one per currency) or balance (one
// per platform); each row fills the columns that apply to it and leaves
// the others empty. Times and money are written as in the JSON, a null as
// an empty cell, an unpriced line as UNPRICED. For a total row, unpriced
// is the number of lines left out; as_of is on every row. platform_id is
// a synced rental's platform instance ID (empty for other rows). New
// columns are added at the end, so a reader by position keeps working.
//
// The rows after the balances are the inputs each line is computed from
// (exportInputColumns' records): a rental's events (rental_event), its
// traffic price changes (traffic_price), usage (traffic) and idle periods
// (idle), a volume's events (volume_event), the one-off charges (one_off),
// top-ups (top_up) and balance readings (balance_reading), each at its
// time ("at"), naming its rental in "rental" and its volume in "name". A
// rental row also carries its min_seconds, step_seconds, floor and traffic
// terms, a volume row its platform; time_zone is on every row.
var ExportCSVColumns = []string{
	"record", "name", "platform", "rental", "gpu", "gpu_count", "mode", "price", "price_unit", "currency",
	"state", "started_at", "released_at", "running_seconds", "billed_seconds", "idle_seconds",
	"size_gb", "free_gb", "created_at", "deleted_at",
	"compute", "storage", "traffic", "other", "total", "charge", "unpriced",
	"balance", "runs_out_at", "as_of", "stopped_price", "price_changes", "platform_id",
	"time_zone", "min_seconds", "step_seconds", "floor", "traffic_price", "traffic_free_gb", "traffic_direction",
	"kind", "at", "until", "amount", "note", "bytes", "direction", "source",
	"ref", "rental_ref", "record_ref",
}

// ExportCSVTeamColumns is the header of a team ledger's CSV export:
// ExportCSVColumns and then owner (the member a rental, volume or
// one-off is for: "@username", or the user ID when the member has no
// username; empty when nobody claimed it) and project. A personal
// ledger's CSV has neither column.
var ExportCSVTeamColumns = append(ExportCSVColumns[:len(ExportCSVColumns):len(ExportCSVColumns)], "owner", "project")

// exportCSVNumbers are the CSV columns that hold numbers only (a signed
// amount included): they are written as they are. Every other cell is
// text, and one that starts as a spreadsheet formula gets a quote first
// (csvText).
var exportCSVNumbers = map[string]bool{
	"gpu_count": true, "price": true, "running_seconds": true, "billed_seconds": true, "idle_seconds": true,
	"size_gb": true, "free_gb": true, "compute": true, "storage": true, "traffic": true, "other": true,
	"total": true, "charge": true, "unpriced": true, "balance": true, "stopped_price": true,
	"min_seconds": true, "step_seconds": true, "floor": true, "traffic_price": true, "traffic_free_gb": true,
	"amount": true, "bytes": true, "record_ref": true,
}

// csvText returns a text cell as a spreadsheet shows it as text: one that
// starts with =, +, -, @, a tab or a carriage return, which a spreadsheet
// would run as a formula (a note as typed, or an instance name a
// platform's sync gave), gets a single quote first, as OWASP advises for
// CSV injection. The JSON export keeps every text exactly.
func csvText(s string) string {
	if s != "" && strings.IndexByte("=+-@\t\r", s[0]) >= 0 {
		return "'" + s
	}
	return s
}

// WriteExportCSV writes the same rows as WriteExportJSON as CSV with one
// header row (ExportCSVColumns): rentals, then volumes, then totals by
// currency, then balances by platform. A team ledger's has the columns
// ExportCSVTeamColumns; WithTeam names its owners.
func WriteExportCSV(w io.Writer, b *Book, asOf time.Time, opts ...ExportOption) error {
	return writeExportCSV(w, buildExport(b, asOf, exportOptions(opts)))
}

// WriteExportCSVPeriod writes the CSV export of the window [from, to)
// (the dashboard's month): the same columns and rows as WriteExportCSV,
// but only the lines active in the window, each with the charges that
// accrued inside it (Spend's figures: running, billed and idle seconds
// too), the totals of the window, and the balances as of to. as_of is
// to. So the rows of consecutive windows add up to the export of their
// union.
func WriteExportCSVPeriod(w io.Writer, b *Book, from, to time.Time, opts ...ExportOption) error {
	if !to.After(from) {
		return Errorf(EINVALID, "the period must end after it starts (from %s, to %s)", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	return writeExportCSV(w, buildExportOf(b, Spend(b, from, to), to, exportOptions(opts)))
}

// csvOwner is an owner's cell: "@username" when the member's username is
// one Telegram allows (letters, digits, '_'), else the user ID; "" for 0.
// A username is never written otherwise, so the cell is never a formula.
func csvOwner(id int64, names map[int64]string) string {
	if id == 0 {
		return ""
	}
	if u := names[id]; u != "" && len(u) <= 64 && strings.Trim(u, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == "" {
		return "@" + u
	}
	return strconv.FormatInt(id, 10)
}

func writeExportCSV(w io.Writer, doc exportDoc) error {
	cols := ExportCSVColumns
	var names map[int64]string
	if doc.Team != nil {
		cols = ExportCSVTeamColumns
		names = make(map[int64]string, len(doc.Team.Members))
		for _, m := range doc.Team.Members {
			names[m.ID] = m.Username
		}
	}
	col := make(map[string]int, len(cols))
	text := make([]bool, len(cols))
	for i, c := range cols {
		col[c] = i
		text[i] = !exportCSVNumbers[c]
	}
	if doc.Team != nil {
		// csvOwner writes "@" and a Telegram username's letters only: no
		// formula, and the name as the chat shows it.
		text[col["owner"]] = false
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(cols); err != nil {
		return fmt.Errorf("ledger: export csv: %w", err)
	}
	// One record is reused for every row (csv.Writer.Write keeps none):
	// a large ledger writes hundreds of thousands of rows.
	rec := make([]string, len(cols))
	row := func(kv ...string) error {
		clear(rec)
		for i := 0; i+1 < len(kv); i += 2 {
			j := col[kv[i]]
			if text[j] {
				rec[j] = csvText(kv[i+1])
			} else {
				rec[j] = kv[i+1]
			}
		}
		rec[col["as_of"]] = doc.AsOf
		rec[col["time_zone"]] = doc.TimeZone
		return cw.Write(rec)
	}
	// owned is row for a team's record: its owner's and project's cells
	// after kv (a personal ledger has no such columns).
	owned := func(owner int64, project string, kv ...string) error {
		if doc.Team != nil {
			kv = append(kv, "owner", csvOwner(owner, names), "project", project)
		}
		return row(kv...)
	}
	opt := func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	}
	for _, r := range doc.Rentals {
		if err := owned(r.Owner, r.Project, "record", "rental", "name", r.Name, "ref", r.Ref, "platform", r.Platform, "platform_id", r.PlatformID, "gpu", r.GPU,
			"gpu_count", strconv.Itoa(r.GPUCount), "mode", string(r.Mode), "price", opt(r.Price),
			"price_unit", opt(r.PriceUnit), "currency", string(r.Currency), "state", string(r.State),
			"started_at", r.StartedAt, "released_at", opt(r.ReleasedAt),
			"running_seconds", strconv.FormatInt(r.RunningSeconds, 10),
			"billed_seconds", strconv.FormatInt(r.BilledSeconds, 10),
			"idle_seconds", strconv.FormatInt(r.IdleSeconds, 10),
			"compute", r.Charges.Compute, "storage", r.Charges.Storage, "traffic", r.Charges.Traffic,
			"other", r.Charges.Other, "total", r.Charges.Total,
			"min_seconds", strconv.FormatInt(r.MinSeconds, 10), "step_seconds", strconv.FormatInt(r.StepSeconds, 10),
			"floor", opt(r.Floor), "traffic_price", trafficCell(r.Traffic, func(t *exportTraffic) string { return opt(t.PricePerGB) }),
			"traffic_free_gb", trafficCell(r.Traffic, func(t *exportTraffic) string { return t.FreeGB }),
			"traffic_direction", trafficCell(r.Traffic, func(t *exportTraffic) string { return string(t.Direction) })); err != nil {
			return fmt.Errorf("ledger: export csv: %w", err)
		}
	}
	for _, v := range doc.Volumes {
		if err := owned(v.Owner, v.Project, "record", "volume", "name", v.Name, "rental", opt(v.Rental), "rental_ref", opt(v.RentalRef), "size_gb", v.SizeGB,
			"free_gb", v.FreeGB, "price", opt(v.Price), "price_unit", string(v.PriceUnit),
			"currency", string(v.Currency), "created_at", v.CreatedAt, "deleted_at", opt(v.DeletedAt),
			"charge", v.Charge, "stopped_price", opt(v.StoppedPrice), "price_changes", csvPriceChanges(v.PriceChanges),
			"platform", v.Platform); err != nil {
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
	if err := writeExportInputs(doc, row, owned, opt); err != nil {
		return fmt.Errorf("ledger: export csv: %w", err)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("ledger: export csv: %w", err)
	}
	return nil
}

// writeExportInputs writes the rows of the billing rules' inputs, by
// kind: every rental's events, traffic price changes, traffic usage and
// idle periods (rentals in export order), every volume's events, then
// the one-off charges, top-ups and balance readings, each in time order.
func writeExportInputs(doc exportDoc, row func(kv ...string) error, owned func(int64, string, ...string) error, opt func(*string) string) error {
	for _, r := range doc.Rentals {
		for _, e := range r.Events {
			cur := ""
			if e.Price != nil {
				cur = string(r.Currency)
			}
			if err := row("record", "rental_event", "rental", r.Name, "rental_ref", r.Ref, "platform", r.Platform, "kind", e.Kind, "at", e.At,
				"price", opt(e.Price), "price_unit", opt(e.PriceUnit), "currency", cur); err != nil {
				return err
			}
		}
	}
	for _, r := range doc.Rentals {
		if r.Traffic == nil {
			continue
		}
		for _, p := range r.Traffic.PriceChanges {
			if err := row("record", "traffic_price", "rental", r.Name, "rental_ref", r.Ref, "platform", r.Platform, "at", p.At,
				"traffic_price", p.PricePerGB, "currency", string(r.Currency)); err != nil {
				return err
			}
		}
	}
	for _, r := range doc.Rentals {
		if r.Traffic == nil {
			continue
		}
		for _, u := range r.Traffic.Usage {
			if err := row("record", "traffic", "rental", r.Name, "rental_ref", r.Ref, "platform", r.Platform, "at", u.At,
				"bytes", strconv.FormatInt(u.Bytes, 10), "direction", string(u.Direction), "record_ref", refCell(u.RecordRef)); err != nil {
				return err
			}
		}
	}
	for _, r := range doc.Rentals {
		for _, iv := range r.Idle {
			if err := row("record", "idle", "rental", r.Name, "rental_ref", r.Ref, "platform", r.Platform, "at", iv.From, "until", opt(iv.To)); err != nil {
				return err
			}
		}
	}
	for _, v := range doc.Volumes {
		for _, e := range v.Events {
			if err := row("record", "volume_event", "name", v.Name, "rental", opt(v.Rental), "rental_ref", opt(v.RentalRef), "platform", v.Platform,
				"kind", e.Kind, "at", e.At, "size_gb", opt(e.SizeGB)); err != nil {
				return err
			}
		}
	}
	for _, o := range doc.OneOffs {
		if err := owned(o.Owner, o.Project, "record", "one_off", "rental", opt(o.Rental), "rental_ref", opt(o.RentalRef), "platform", o.Platform, "at", o.At,
			"amount", o.Amount, "currency", string(o.Currency), "charge", o.Charge, "note", o.Note, "record_ref", refCell(o.RecordRef)); err != nil {
			return err
		}
	}
	for _, t := range doc.TopUps {
		if err := row("record", "top_up", "platform", t.Platform, "at", t.At, "amount", t.Amount, "currency", string(t.Currency), "record_ref", refCell(t.RecordRef)); err != nil {
			return err
		}
	}
	for _, b := range doc.Readings {
		if err := row("record", "balance_reading", "platform", b.Platform, "at", b.At, "amount", b.Amount,
			"currency", string(b.Currency), "source", b.Source, "record_ref", refCell(b.RecordRef)); err != nil {
			return err
		}
	}
	return nil
}

// refCell writes a record's number, "" for none.
func refCell(ref *int64) string {
	if ref == nil {
		return ""
	}
	return strconv.FormatInt(*ref, 10)
}

// trafficCell returns f(t), or "" for a rental without traffic terms.
func trafficCell(t *exportTraffic, f func(*exportTraffic) string) string {
	if t == nil {
		return ""
	}
	return f(t)
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
