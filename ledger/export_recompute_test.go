package ledger_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"log/slog"
	"math/big"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// The tests here build a ledger through the real store and check its
// export against the independent recomputation in export_rules_test.go.

// richLedger records, through the real store, a month of rentals that
// uses every input of the billing rules, for a user in Asia/Shanghai,
// and returns the store, the user and the export's as_of.
func richLedger(t *testing.T) (*sqlite.DB, int64, time.Time) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ledger.db"), sqlite.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	const uid = 42
	if _, err := db.EnsureUser(ctx, ledger.User{ID: uid, Lang: "zh", TZ: "Asia/Shanghai"}); err != nil {
		t.Fatal(err)
	}
	sh, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 10, 28, 9, 17, 23, 0, sh)
	asOf := time.Date(2026, 11, 3, 14, 38, 11, 0, sh)
	d := func(s string) time.Time {
		t.Helper()
		x, err := time.ParseDuration(s)
		if err != nil {
			t.Fatal(err)
		}
		return t0.Add(x)
	}
	act := ledger.Action{UserID: uid, At: asOf}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	dec := ledger.MustDecimal
	price := func(a string, u ledger.Unit) ledger.Price { return ledger.Price{Amount: dec(a), Unit: u} }
	rent := func(r ledger.Rental, at time.Time) {
		t.Helper()
		r.GPU, r.GPUCount = "RTX 4090", 1
		r.Events = []ledger.Event{{Kind: ledger.EventStart, At: at}}
		must(db.CreateRental(ctx, act, r))
	}
	ev := func(name string, kind ledger.EventKind, at time.Time, p ...ledger.Price) {
		t.Helper()
		e := ledger.Event{Kind: kind, At: at}
		if len(p) > 0 {
			e.Price = p[0]
		}
		must(db.AppendEvent(ctx, act, name, e))
	}
	traffic := func(name string, at time.Time, gb int64, dir ledger.Direction) {
		t.Helper()
		must(db.AddTraffic(ctx, act, name, ledger.TrafficUsage{At: at, Bytes: gb<<30 + 123456789, Direction: dir}))
	}

	// Per-second at ¥1.88/h, stopped and resumed, its price changed
	// mid-run, still running; traffic above a monthly allowance across
	// the month's end, its price changed.
	rent(ledger.Rental{Name: "yolo", Platform: "autodl", Mode: ledger.PerSecond, Priced: true, Price: price("1.88", ledger.UnitHour),
		Currency: ledger.CNY, Traffic: ledger.TrafficTerms{Priced: true, PricePerGB: dec("0.8"), FreeGB: dec("20"), Direction: ledger.Out}}, t0)
	ev("yolo", ledger.EventStop, d("2h13m7s"))
	traffic("yolo", d("3h"), 15, ledger.Out)
	traffic("yolo", d("3h5m"), 40, ledger.In)
	ev("yolo", ledger.EventResume, d("5h0m41s"))
	ev("yolo", ledger.EventPrice, d("6h30m19s"), price("2.08", ledger.UnitHour))
	traffic("yolo", d("24h"), 12, ledger.Out)
	must(db.SetTrafficPriceAt(ctx, act, "yolo", ledger.CNY, ledger.TrafficPrice{At: d("48h"), PricePerGB: dec("0.65")}))
	traffic("yolo", d("50h"), 9, ledger.Out)
	traffic("yolo", d("100h"), 25, ledger.Out) // November: a new allowance

	// Per-minute at $0.0123/min with a 10-minute minimum: a short run,
	// a price change inside a run, released.
	rent(ledger.Rental{Name: "pod", Platform: "runpod", Mode: ledger.PerMinute, Priced: true, Price: price("0.0123", ledger.UnitMinute),
		Currency: ledger.USD, Min: 10 * time.Minute}, d("1h"))
	ev("pod", ledger.EventStop, d("1h3m17s"))
	ev("pod", ledger.EventResume, d("4h"))
	ev("pod", ledger.EventPrice, d("4h31m30s"), price("0.89", ledger.UnitHour))
	ev("pod", ledger.EventStop, d("7h2m1s"))
	ev("pod", ledger.EventResume, d("30h"))
	ev("pod", ledger.EventRelease, d("31h45m59s"))

	// Per-hour with a floor, two runs and a price change: started hours.
	rent(ledger.Rental{Name: "hr", Platform: "vast", Mode: ledger.PerHour, Priced: true, Price: price("0.347", ledger.UnitHour),
		Currency: ledger.USD, Floor: dec("5")}, d("2h"))
	ev("hr", ledger.EventPrice, d("2h40m"), price("0.421", ledger.UnitHour))
	ev("hr", ledger.EventStop, d("3h10m"))
	ev("hr", ledger.EventResume, d("20h"))
	ev("hr", ledger.EventRelease, d("21h0m1s"))

	// Per-second in 15-minute steps with a floor of ¥0.01 (a short job).
	rent(ledger.Rental{Name: "tiny", Platform: "autodl", Mode: ledger.PerSecond, Priced: true, Price: price("0.01", ledger.UnitHour),
		Currency: ledger.CNY, Step: 15 * time.Minute, Floor: dec("0.05")}, d("10h"))
	ev("tiny", ledger.EventRelease, d("10h16m"))

	// Always-on: a daily package, then an hourly price (prorated), stops
	// that do not stop the meter.
	rent(ledger.Rental{Name: "pkg", Platform: "featurize", Mode: ledger.AlwaysOn, Priced: true, Price: price("45", ledger.UnitDay),
		Currency: ledger.CNY}, d("3h"))
	ev("pkg", ledger.EventStop, d("20h"))
	ev("pkg", ledger.EventPrice, d("40h"), price("2.2", ledger.UnitHour))
	ev("pkg", ledger.EventResume, d("41h"))
	ev("pkg", ledger.EventPrice, d("60h"), price("290", ledger.UnitWeek))

	// Always-on by the hour, released; in euros.
	rent(ledger.Rental{Name: "lam", Platform: "lambda", Mode: ledger.AlwaysOn, Priced: true, Price: price("1.29", ledger.UnitHour),
		Currency: "EUR"}, d("5h"))
	ev("lam", ledger.EventStop, d("6h"))
	ev("lam", ledger.EventRelease, d("77h7m7s"))

	// No price: its compute and its traffic are UNPRICED.
	rent(ledger.Rental{Name: "mystery", Platform: "恒源云", Mode: ledger.PerSecond, Currency: ledger.CNY}, d("8h"))
	traffic("mystery", d("9h"), 3, ledger.Out)

	// Volumes: a RunPod volume with a stopped rate on the pod, resized,
	// its price changed; an AutoDL disk on yolo with a free quota,
	// deleted; an unattached one; an unpriced one.
	must(db.CreateVolume(ctx, act, ledger.Volume{Name: "vol", RentalName: "pod", Platform: "runpod", Currency: ledger.USD, Priced: true,
		Price: dec("0.1"), PriceUnit: ledger.PerGBMonth, StoppedPrice: dec("0.2"), HasStoppedPrice: true,
		Events: []ledger.VolumeEvent{{Kind: ledger.VolumeCreate, At: d("1h"), SizeGB: dec("100")}}}))
	must(db.AppendVolumeEvent(ctx, act, "vol", ledger.VolumeEvent{Kind: ledger.VolumeResize, At: d("5h"), SizeGB: dec("150")}))
	must(db.SetVolumePriceAt(ctx, act, "vol", ledger.USD, ledger.VolumePrice{At: d("26h"), Price: dec("0.07"), PriceUnit: ledger.PerGBMonth,
		StoppedPrice: dec("0.14"), HasStoppedPrice: true}))
	must(db.CreateVolume(ctx, act, ledger.Volume{Name: "data", RentalName: "yolo", Platform: "autodl", Currency: ledger.CNY, Priced: true,
		Price: dec("0.0066"), PriceUnit: ledger.PerGBDay, FreeGB: dec("50"),
		Events: []ledger.VolumeEvent{{Kind: ledger.VolumeCreate, At: d("30m"), SizeGB: dec("200")}}}))
	must(db.SetVolumePriceAt(ctx, act, "data", ledger.CNY, ledger.VolumePrice{At: d("72h"), Price: dec("0.0132"), PriceUnit: ledger.PerGBDay}))
	must(db.AppendVolumeEvent(ctx, act, "data", ledger.VolumeEvent{Kind: ledger.VolumeDelete, At: d("120h")}))
	must(db.CreateVolume(ctx, act, ledger.Volume{Name: "cold", Platform: "autodl", Currency: ledger.CNY, Priced: true,
		Price: dec("0.0003"), PriceUnit: ledger.PerGBHour,
		Events: []ledger.VolumeEvent{{Kind: ledger.VolumeCreate, At: d("33h"), SizeGB: dec("37.5")}}}))
	must(db.CreateVolume(ctx, act, ledger.Volume{Name: "vd3", RentalName: "mystery", Platform: "恒源云", Currency: ledger.CNY,
		Events: []ledger.VolumeEvent{{Kind: ledger.VolumeCreate, At: d("8h"), SizeGB: dec("50")}}}))

	// The name "pod" again, for a new pod after the first one's release:
	// the volume stays the first one's, the new one's charge is its own.
	rent(ledger.Rental{Name: "pod", Platform: "runpod", Mode: ledger.PerSecond, Priced: true, Price: price("0.69", ledger.UnitHour),
		Currency: ledger.USD}, d("40h"))
	ev("pod", ledger.EventStop, d("41h1m1s"))
	must(db.AddCharge(ctx, act, "pod", ledger.Charge{Platform: "runpod", Amount: dec("0.125"), Currency: ledger.USD, Note: "template", At: d("41h")}))

	// One-off charges with notes, top-ups and balance readings.
	must(db.AddCharge(ctx, act, "yolo", ledger.Charge{Platform: "autodl", Amount: dec("3.005"), Currency: ledger.CNY, Note: "镜像 image fee", At: d("4h")}))
	must(db.AddCharge(ctx, act, "", ledger.Charge{Platform: "vast", Amount: dec("1.5"), Currency: ledger.USD, Note: "support", At: d("22h")}))
	must(db.AddCharge(ctx, act, "", ledger.Charge{Platform: "lambda", Amount: dec("0.994"), Currency: "EUR", Note: "filesystem", At: d("70h")}))
	must(db.AddTopUp(ctx, act, ledger.TopUp{Platform: "autodl", Amount: dec("100"), Currency: ledger.CNY, At: d("-1h")}))
	must(db.RecordBalance(ctx, act, ledger.BalanceRecord{Platform: "autodl", Amount: dec("80.5"), Currency: ledger.CNY, At: d("30h")}))
	must(db.AddTopUp(ctx, act, ledger.TopUp{Platform: "autodl", Amount: dec("50"), Currency: ledger.CNY, At: d("90h")}))
	must(db.AddTopUp(ctx, act, ledger.TopUp{Platform: "runpod", Amount: dec("25"), Currency: ledger.USD, At: d("30m")}))
	must(db.RecordBalance(ctx, act, ledger.BalanceRecord{Platform: "vast", Amount: dec("20.004"), Currency: ledger.USD, At: d("2h30m")}))
	return db, uid, asOf
}

// TestExport_RecomputeEveryFigure recomputes every line and total of the
// JSON export of a rich ledger from the export alone, and again at an
// earlier as_of (a rental still running then, a volume not yet deleted).
func TestExport_RecomputeEveryFigure(t *testing.T) {
	db, uid, asOf := richLedger(t)
	book, err := db.Book(context.Background(), uid)
	if err != nil {
		t.Fatal(err)
	}
	loc, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	// Idle periods come from an agent's heartbeats: set here on the
	// loaded book, as the store would load them.
	idle := func(name string, from, to time.Duration) {
		r := book.Rental(name)
		iv := ledger.Interval{From: r.StartedAt().Add(from)}
		if to > 0 {
			iv.To = r.StartedAt().Add(to)
		}
		r.Idle = append(r.Idle, iv)
	}
	idle("yolo", time.Hour, 3*time.Hour) // across its stop
	idle("yolo", 30*time.Hour, 0)        // still idle
	idle("pkg", 15*time.Hour, 45*time.Hour)
	for _, at := range []time.Time{asOf, asOf.Add(-4*24*time.Hour + 17*time.Minute + 3*time.Second)} {
		var buf bytes.Buffer
		if err := ledger.WriteExportJSON(&buf, book, at); err != nil {
			t.Fatal(err)
		}
		rc := &recomputer{t: t, loc: loc, asOf: at.Unix()}
		if err := json.Unmarshal(buf.Bytes(), &rc.doc); err != nil {
			t.Fatal(err)
		}
		if rc.doc.TimeZone != "Asia/Shanghai" {
			t.Errorf("time_zone %q, want Asia/Shanghai (the months of traffic allowances are cut in it)", rc.doc.TimeZone)
		}
		if !strings.HasSuffix(rc.doc.AsOf, "+08:00") {
			t.Errorf("as_of %s is not in the user's zone", rc.doc.AsOf)
		}
		if len(rc.doc.Rentals) < 6 || len(rc.doc.Volumes) < 3 {
			t.Fatalf("the ledger exported %d rentals and %d volumes", len(rc.doc.Rentals), len(rc.doc.Volumes))
		}
		refs := map[string]bool{}
		for _, r := range rc.doc.Rentals {
			if refs[r.Ref] || !strings.HasPrefix(r.Ref, r.Name+"@") {
				t.Errorf("rental %s has the address %q, not its own", r.Name, r.Ref)
			}
			refs[r.Ref] = true
		}
		rc.check()
	}
}

// TestExportCSVPeriod_InputsOfTheWindow: the dashboard's month CSV lists
// the one-offs, top-ups and readings inside the window and each listed
// rental's and volume's whole history up to the window's end, and its
// one-off rows add up to the window's "other" totals.
func TestExportCSVPeriod_InputsOfTheWindow(t *testing.T) {
	db, uid, asOf := richLedger(t)
	book, err := db.Book(context.Background(), uid)
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2026, 10, 31, 0, 0, 0, 0, asOf.Location())
	var buf bytes.Buffer
	if err := ledger.WriteExportCSVPeriod(&buf, book, from, asOf); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, c := range rows[0] {
		col[c] = i
	}
	get := func(r []string, c string) string {
		t.Helper()
		i, ok := col[c]
		if !ok {
			t.Fatalf("no column %s", c)
		}
		return r[i]
	}
	inWindow := func(at time.Time) bool { return !at.Before(from) && at.Before(asOf) }
	want := map[string]int{}
	for _, c := range book.Charges {
		if inWindow(c.At) {
			want["one_off"]++
		}
	}
	for _, x := range book.TopUps {
		if inWindow(x.At) {
			want["top_up"]++
		}
	}
	for _, x := range book.Balances {
		if inWindow(x.At) {
			want["balance_reading"]++
		}
	}
	got := map[string]int{}
	other := map[string]*big.Rat{}
	starts := map[string]bool{}
	rentals := map[string]bool{}
	for _, r := range rows[1:] {
		kind := get(r, "record")
		got[kind]++
		switch kind {
		case "rental":
			rentals[get(r, "name")] = true
		case "rental_event":
			if get(r, "kind") == "start" {
				starts[get(r, "rental")] = true
			}
		case "one_off", "top_up", "balance_reading":
			at, err := time.Parse(time.RFC3339, get(r, "at"))
			if err != nil || !inWindow(at) {
				t.Errorf("%s at %q is outside the window [%s, %s)", kind, get(r, "at"), from, asOf)
			}
			if kind == "one_off" {
				cur := get(r, "currency")
				if other[cur] == nil {
					other[cur] = new(big.Rat)
				}
				other[cur].Add(other[cur], rat(t, get(r, "charge")))
			}
		}
	}
	for _, k := range []string{"one_off", "top_up", "balance_reading"} {
		if got[k] != want[k] {
			t.Errorf("%d %s rows, want the window's %d", got[k], k, want[k])
		}
	}
	if want["one_off"] == 0 || want["top_up"] == 0 {
		t.Fatalf("the window holds no one-off or top-up: the test checks nothing (%v)", want)
	}
	// Each line's figures in the window are its charge at the window's
	// end less its charge at its start, rounded each (design section 4),
	// recomputed from the whole export's inputs.
	var js bytes.Buffer
	if err := ledger.WriteExportJSON(&js, book, asOf); err != nil {
		t.Fatal(err)
	}
	rc := &recomputer{t: t, loc: asOf.Location(), asOf: asOf.Unix()}
	if err := json.Unmarshal(js.Bytes(), &rc.doc); err != nil {
		t.Fatal(err)
	}
	a, b := from.Unix(), asOf.Unix()
	window := func(cur string, f func(int64) *big.Rat) string {
		return fmtMinor(roundMinor(f(b), cur)-roundMinor(f(a), cur), cur)
	}
	for _, r := range rows[1:] {
		switch get(r, "record") {
		case "rental":
			x := rc.rental(get(r, "ref"))
			if x == nil {
				t.Errorf("rental row %s is not in the export", get(r, "ref"))
				continue
			}
			want := ledger.Unpriced
			if x.Price != nil {
				want = window(x.Currency, func(t int64) *big.Rat { c, _, _ := rc.computeAt(*x, t); return c })
			}
			if got := get(r, "compute"); got != want {
				t.Errorf("%s's compute in the window: %s, recomputed %s", x.Ref, got, want)
			}
			if x.Traffic != nil && x.Traffic.Priced {
				want := window(x.Currency, func(t int64) *big.Rat { c, _ := rc.trafficAt(*x, t); return c })
				if got := get(r, "traffic"); got != want {
					t.Errorf("%s's traffic in the window: %s, recomputed %s", x.Ref, got, want)
				}
			}
		case "volume":
			for _, v := range rc.doc.Volumes {
				if v.Name != get(r, "name") || v.Price == nil {
					continue
				}
				want := window(v.Currency, func(t int64) *big.Rat { return rc.storageAt(v, t) })
				if got := get(r, "charge"); got != want {
					t.Errorf("volume %s's charge in the window: %s, recomputed %s", v.Name, got, want)
				}
			}
		}
	}
	for name := range rentals {
		if !starts[name] {
			t.Errorf("rental %s is in the window's CSV without its start event (the history its figures depend on)", name)
		}
	}
	for _, r := range rows[1:] {
		if get(r, "record") != "total" {
			continue
		}
		cur := get(r, "currency")
		sum := "0.00"
		if other[cur] != nil {
			sum = other[cur].FloatString(minorDigits(cur))
		}
		if get(r, "other") != sum {
			t.Errorf("total %s: other %s, the one-off rows add up to %s", cur, get(r, "other"), sum)
		}
	}
}

// TestExportCSV_SameInputsAsJSON: the CSV carries the same inputs as the
// JSON, one row each, with what the user typed (a one-off's note and
// amount, a reading's amount) and each rental's terms on its row.
func TestExportCSV_SameInputsAsJSON(t *testing.T) {
	db, uid, asOf := richLedger(t)
	book, err := db.Book(context.Background(), uid)
	if err != nil {
		t.Fatal(err)
	}
	var js, cs bytes.Buffer
	if err := ledger.WriteExportJSON(&js, book, asOf); err != nil {
		t.Fatal(err)
	}
	if err := ledger.WriteExportCSV(&cs, book, asOf); err != nil {
		t.Fatal(err)
	}
	var doc xDoc
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	csvText := cs.String()
	rows, err := csv.NewReader(&cs).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, c := range rows[0] {
		col[c] = i
	}
	// Each input as "kind|rental address|at|values" from both sides.
	var fromJSON, fromCSV []string
	add := func(list *[]string, parts ...string) { *list = append(*list, strings.Join(parts, "|")) }
	for _, r := range doc.Rentals {
		add(&fromJSON, "rental", r.Ref, "", strconv.FormatInt(r.MinSeconds, 10), strconv.FormatInt(r.StepSeconds, 10), ptrOr(r.Floor))
		for _, e := range r.Events {
			add(&fromJSON, "rental_event", r.Ref, e.At, e.Kind, ptrOr(e.Price), ptrOr(e.PriceUnit))
		}
		if r.Traffic != nil {
			for _, p := range r.Traffic.PriceChanges {
				add(&fromJSON, "traffic_price", r.Ref, p.At, p.PricePerGB)
			}
			for _, u := range r.Traffic.Usage {
				add(&fromJSON, "traffic", r.Ref, u.At, strconv.FormatInt(u.Bytes, 10), u.Direction)
			}
		}
	}
	for _, v := range doc.Volumes {
		for _, e := range v.Events {
			add(&fromJSON, "volume_event", v.Name, e.At, e.Kind, ptrOr(e.SizeGB))
		}
	}
	for _, o := range doc.OneOffs {
		add(&fromJSON, "one_off", ptrOr(o.RentalRef), o.At, o.Amount, o.Currency, o.Charge, o.Note)
	}
	for _, m := range doc.TopUps {
		add(&fromJSON, "top_up", m.Platform, m.At, m.Amount, m.Currency)
	}
	for _, m := range doc.Readings {
		add(&fromJSON, "balance_reading", m.Platform, m.At, m.Amount, m.Currency)
	}
	for _, r := range rows[1:] {
		g := func(c string) string { return r[col[c]] }
		switch k := g("record"); k {
		case "rental":
			add(&fromCSV, k, g("ref"), "", g("min_seconds"), g("step_seconds"), g("floor"))
		case "rental_event":
			add(&fromCSV, k, g("rental_ref"), g("at"), g("kind"), g("price"), g("price_unit"))
		case "traffic_price":
			add(&fromCSV, k, g("rental_ref"), g("at"), g("traffic_price"))
		case "traffic":
			add(&fromCSV, k, g("rental_ref"), g("at"), g("bytes"), g("direction"))
		case "volume_event":
			add(&fromCSV, k, g("name"), g("at"), g("kind"), g("size_gb"))
		case "one_off":
			add(&fromCSV, k, g("rental_ref"), g("at"), g("amount"), g("currency"), g("charge"), g("note"))
		case "top_up", "balance_reading":
			add(&fromCSV, k, g("platform"), g("at"), g("amount"), g("currency"))
		}
		if g("time_zone") != "Asia/Shanghai" {
			t.Errorf("%s row's time_zone %q", g("record"), g("time_zone"))
		}
	}
	sort.Strings(fromJSON)
	sort.Strings(fromCSV)
	if strings.Join(fromJSON, "\n") != strings.Join(fromCSV, "\n") {
		t.Errorf("the CSV's inputs differ from the JSON's:\n--- CSV\n%s\n--- JSON\n%s", strings.Join(fromCSV, "\n"), strings.Join(fromJSON, "\n"))
	}
	if !strings.Contains(csvText, "镜像 image fee") || !strings.Contains(csvText, ",3.005,") {
		t.Errorf("the CSV lost a one-off's note or its amount as typed")
	}
}

func ptrOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestExport_FollowsCorrections: after a one-off is deleted, a top-up
// and a traffic record are corrected, the export shows the ledger as it
// now is, and every figure still recomputes from it; an undone deletion
// brings the one-off back.
func TestExport_FollowsCorrections(t *testing.T) {
	db, uid, asOf := richLedger(t)
	ctx := context.Background()
	act := ledger.Action{UserID: uid, At: asOf}
	recs, err := db.Records(ctx, uid, ledger.RecordFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var support, topUp, usage int64
	for _, r := range recs {
		switch {
		case r.Kind == ledger.RecordCharge && r.Note == "support":
			support = r.Ref
		case r.Kind == ledger.RecordTopUp && r.Amount.String() == "50":
			topUp = r.Ref
		case r.Kind == ledger.RecordTraffic && r.Rental == "yolo" && usage == 0:
			usage = r.Ref
		}
	}
	if support == 0 || topUp == 0 || usage == 0 {
		t.Fatalf("records not found: %+v", recs)
	}
	if _, err := db.DeleteRecord(ctx, act, support); err != nil {
		t.Fatal(err)
	}
	sixty := ledger.MustDecimal("60.4")
	if _, _, err := db.FixRecord(ctx, act, topUp, ledger.RecordFix{Amount: &sixty}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.FixRecord(ctx, act, usage, ledger.RecordFix{Bytes: 77 << 30}); err != nil {
		t.Fatal(err)
	}
	loc, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	export := func() *recomputer {
		t.Helper()
		book, err := db.Book(ctx, uid)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := ledger.WriteExportJSON(&buf, book, asOf); err != nil {
			t.Fatal(err)
		}
		rc := &recomputer{t: t, loc: loc, asOf: asOf.Unix()}
		if err := json.Unmarshal(buf.Bytes(), &rc.doc); err != nil {
			t.Fatal(err)
		}
		rc.check()
		return rc
	}
	rc := export()
	for _, o := range rc.doc.OneOffs {
		if o.Note == "support" {
			t.Errorf("the deleted one-off is still exported: %+v", o)
		}
	}
	var amounts []string
	for _, m := range rc.doc.TopUps {
		amounts = append(amounts, m.Amount)
	}
	if !slices.Contains(amounts, "60.4") || slices.Contains(amounts, "50") {
		t.Errorf("top-ups %v, want the corrected 60.4 in place of 50", amounts)
	}
	found := false
	for _, u := range rc.rental(rc.doc.Rentals[0].Ref).Traffic.Usage {
		found = found || u.Bytes == 77<<30
	}
	if !found {
		t.Errorf("the corrected traffic record (77 GiB) is not exported: %+v", rc.doc.Rentals[0].Traffic)
	}
	if _, err := db.Undo(ctx, act); err != nil { // the traffic fix
		t.Fatal(err)
	}
	if _, err := db.Undo(ctx, act); err != nil { // the top-up fix
		t.Fatal(err)
	}
	if _, err := db.Undo(ctx, act); err != nil { // the deletion
		t.Fatal(err)
	}
	rc = export()
	notes := 0
	for _, o := range rc.doc.OneOffs {
		if o.Note == "support" {
			notes++
		}
	}
	if notes != 1 {
		t.Errorf("after /undo the deleted one-off is exported %d times, want once", notes)
	}
}
