package ledger

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// designBook is DESIGN.md section 5's example: box1 on AutoDL at ¥1.88/h
// per-second, running for 6300 s; data1, 200 GB with 50 GB free at
// ¥0.0066/GB/day, for 30 days; an AutoDL balance of ¥100 recorded when
// the volume was created.
func designBook(t *testing.T) (*Book, time.Time) {
	t.Helper()
	loc, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	asOf := time.Date(2026, 11, 2, 0, 0, 0, 0, loc)
	box := &Rental{ID: 1, Name: "box1", Platform: "autodl", GPU: "RTX 4090", GPUCount: 1, Mode: PerSecond,
		Priced: true, Price: Price{MustDecimal("1.88"), UnitHour}, Currency: CNY,
		Events: []Event{{Kind: EventStart, At: asOf.Add(-6300 * time.Second).UTC()}}}
	created := asOf.Add(-30 * 24 * time.Hour).UTC()
	data := &Volume{ID: 1, Name: "data1", RentalID: 1, RentalName: "box1", Platform: "autodl", Currency: CNY,
		Priced: true, Price: MustDecimal("0.0066"), PriceUnit: PerGBDay, FreeGB: MustDecimal("50"),
		Events: []VolumeEvent{{Kind: VolumeCreate, At: created, SizeGB: MustDecimal("200")}}}
	b := &Book{User: User{ID: 1, TZ: "Asia/Shanghai"}, Rentals: []*Rental{box}, Volumes: []*Volume{data},
		Balances: []BalanceRecord{{Platform: "autodl", Amount: MustDecimal("100"), Currency: CNY, At: created}}}
	return b, asOf
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run go test -run Export -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestWriteExportJSON_DesignExample(t *testing.T) {
	b, asOf := designBook(t)
	var buf bytes.Buffer
	if err := WriteExportJSON(&buf, b, asOf); err != nil {
		t.Fatal(err)
	}
	golden(t, "export_design.json", buf.Bytes())

	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("invalid JSON: %v", err)
	}
	keys := func(m any) []string {
		var out []string
		for k := range m.(map[string]any) {
			out = append(out, k)
		}
		return sortedStrings(out)
	}
	check := func(what string, got, want []string) {
		t.Helper()
		if !reflect.DeepEqual(got, sortedStrings(want)) {
			t.Errorf("%s keys %v, want %v", what, got, sortedStrings(want))
		}
	}
	check("top", keys(doc), []string{"as_of", "rentals", "volumes", "totals", "balances",
		"time_zone", "one_offs", "top_ups", "balance_readings"})
	rental := doc["rentals"].([]any)[0].(map[string]any)
	check("rental", keys(rental), []string{"name", "platform", "gpu", "gpu_count", "mode", "price", "price_unit",
		"currency", "state", "started_at", "released_at", "running_seconds", "billed_seconds", "idle_seconds", "charges",
		"min_seconds", "step_seconds", "floor", "events", "ref"})
	check("charges", keys(rental["charges"]), []string{"compute", "storage", "traffic", "other", "total"})
	vol := doc["volumes"].([]any)[0].(map[string]any)
	check("volume", keys(vol), []string{"name", "rental", "size_gb", "free_gb", "price", "price_unit", "currency",
		"created_at", "deleted_at", "charge", "platform", "events", "rental_ref"})
	check("totals", keys(doc["totals"].(map[string]any)["CNY"]), []string{"compute", "storage", "traffic", "other", "total"})
	check("balance", keys(doc["balances"].(map[string]any)["autodl"]), []string{"currency", "balance", "runs_out_at"})

	want := map[string]any{
		"as_of": "2026-11-02T00:00:00+08:00",
		"rental": map[string]any{"name": "box1", "ref": "box1@2026-11-01", "platform": "autodl", "gpu": "RTX 4090", "gpu_count": 1.0,
			"mode": "per-second", "price": "1.88", "price_unit": "hour", "currency": "CNY", "state": "running",
			"started_at": "2026-11-01T22:15:00+08:00", "released_at": nil, "running_seconds": 6300.0,
			"billed_seconds": 6300.0, "idle_seconds": 0.0,
			"charges":     map[string]any{"compute": "3.29", "storage": "29.70", "traffic": "0.00", "other": "0.00", "total": "32.99"},
			"min_seconds": 0.0, "step_seconds": 1.0, "floor": nil,
			"events": []any{map[string]any{"kind": "start", "at": "2026-11-01T22:15:00+08:00", "price": "1.88", "price_unit": "hour"}}},
		"volume": map[string]any{"name": "data1", "rental": "box1", "rental_ref": "box1@2026-11-01", "size_gb": "200", "free_gb": "50", "price": "0.0066",
			"price_unit": "gb_day", "currency": "CNY", "created_at": "2026-10-03T00:00:00+08:00", "deleted_at": nil, "charge": "29.70",
			"platform": "autodl", "events": []any{map[string]any{"kind": "create", "at": "2026-10-03T00:00:00+08:00", "size_gb": "200"}}},
		"totals":  map[string]any{"compute": "3.29", "storage": "29.70", "traffic": "0.00", "other": "0.00", "total": "32.99"},
		"balance": map[string]any{"currency": "CNY", "balance": "67.01", "runs_out_at": "2026-11-03T10:52:42+08:00"},
	}
	got := map[string]any{"as_of": doc["as_of"], "rental": rental, "volume": vol,
		"totals": doc["totals"].(map[string]any)["CNY"], "balance": doc["balances"].(map[string]any)["autodl"]}
	for k := range want {
		if !reflect.DeepEqual(got[k], want[k]) {
			t.Errorf("%s:\n got %v\nwant %v", k, got[k], want[k])
		}
	}
}

func sortedStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestWriteExportJSON_NullsAndUnpriced(t *testing.T) {
	b, asOf := designBook(t)
	r := b.Rentals[0]
	r.Events = append(r.Events, Event{Kind: EventRelease, At: asOf.Add(-time.Hour)})
	un := &Rental{ID: 2, Name: "mystery", Platform: "other", GPU: "A100", GPUCount: 8, Mode: PerHour, Currency: USD,
		Events: []Event{{Kind: EventStart, At: asOf.Add(-time.Hour)}}}
	b.Rentals = append(b.Rentals, un)
	b.Volumes[0].Events = append(b.Volumes[0].Events, VolumeEvent{Kind: VolumeDelete, At: asOf.Add(-time.Hour)})
	b.Balances = nil
	b.TopUps = []TopUp{{Platform: "autodl", Amount: MustDecimal("10"), Currency: CNY, At: asOf.Add(-40 * 24 * time.Hour)}}
	var buf bytes.Buffer
	if err := WriteExportJSON(&buf, b, asOf); err != nil {
		t.Fatal(err)
	}
	var doc exportDoc
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Rentals) != 2 || doc.Rentals[0].Name != "box1" || doc.Rentals[1].Name != "mystery" {
		t.Fatalf("rentals %+v", doc.Rentals)
	}
	if doc.Rentals[0].ReleasedAt == nil || *doc.Rentals[0].ReleasedAt != "2026-11-01T23:00:00+08:00" || doc.Rentals[0].State != Released {
		t.Errorf("released box1: %+v", doc.Rentals[0])
	}
	m := doc.Rentals[1]
	if m.Price != nil || m.PriceUnit != nil || m.Charges.Compute != Unpriced || m.Charges.Total != Unpriced {
		t.Errorf("unpriced rental: %+v", m)
	}
	if doc.Volumes[0].DeletedAt == nil {
		t.Errorf("deleted volume has no deleted_at")
	}
	if doc.Totals[USD].Unpriced != 1 || doc.Totals[USD].Total != "0.00" {
		t.Errorf("USD totals %+v", doc.Totals[USD])
	}
	if bal := doc.Balances["autodl"]; bal.RunsOutAt == nil || *bal.RunsOutAt != "2026-11-02T00:00:00+08:00" {
		t.Errorf("overdrawn balance should run out now: %+v", bal)
	}
	if !strings.Contains(buf.String(), `"released_at": null`) {
		t.Errorf("null released_at missing")
	}
}

func TestWriteExportCSV(t *testing.T) {
	b, asOf := designBook(t)
	var buf bytes.Buffer
	if err := WriteExportCSV(&buf, b, asOf); err != nil {
		t.Fatal(err)
	}
	golden(t, "export_design.csv", buf.Bytes())
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatalf("invalid CSV: %v", err)
	}
	if !reflect.DeepEqual(rows[0], ExportCSVColumns) {
		t.Fatalf("header %v", rows[0])
	}
	get := func(row []string, c string) string {
		for i, h := range ExportCSVColumns {
			if h == c {
				return row[i]
			}
		}
		t.Fatalf("no column %s", c)
		return ""
	}
	var kinds []string
	for _, r := range rows[1:] {
		kinds = append(kinds, get(r, "record"))
	}
	if strings.Join(kinds, ",") != "rental,volume,total,balance,rental_event,volume_event,balance_reading" {
		t.Errorf("records %v", kinds)
	}
	if get(rows[1], "total") != "32.99" || get(rows[2], "charge") != "29.70" || get(rows[3], "total") != "32.99" ||
		get(rows[4], "balance") != "67.01" || get(rows[1], "released_at") != "" {
		t.Errorf("rows %v", rows)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestExport_WriteErrors(t *testing.T) {
	b, asOf := designBook(t)
	if err := WriteExportJSON(failWriter{}, b, asOf); err == nil {
		t.Errorf("JSON write error lost")
	}
	if err := WriteExportCSV(failWriter{}, b, asOf); err == nil {
		t.Errorf("CSV write error lost")
	}
}

// TestExport_StoppedPrice: a volume's stopped rate is part of its terms
// in both formats; a volume without one has none.
func TestExport_StoppedPrice(t *testing.T) {
	r := newRental("pod", PerSecond, "0.69", UnitHour, USD, ev(EventStart, 0), ev(EventStop, 10*day))
	r.ID = 7
	v := volume("vol", "100", "0", "0.10", PerGBMonth, USD)
	v.RentalID, v.RentalName, v.HasStoppedPrice, v.StoppedPrice = 7, "pod", true, MustDecimal("0.20")
	plain := volume("net", "100", "0", "0.07", PerGBMonth, USD)
	plain.ID = 2
	b := bookOf(r)
	b.Volumes = []*Volume{v, plain}
	var js, cs bytes.Buffer
	if err := WriteExportJSON(&js, b, off(30*day)); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Volumes []map[string]any `json:"volumes"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, ev := range doc.Volumes {
		sp, has := ev["stopped_price"]
		switch ev["name"] {
		case "vol":
			if sp != "0.2" || ev["charge"] != "16.67" {
				t.Errorf("vol: stopped_price %v charge %v, want 0.2 and 16.67", sp, ev["charge"])
			}
		case "net":
			if has {
				t.Errorf("net: stopped_price %v, want none", sp)
			}
		}
	}
	if err := WriteExportCSV(&cs, b, off(30*day)); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&cs).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := -1
	for i, h := range rows[0] {
		if h == "stopped_price" {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("no stopped_price column in %v", rows[0])
	}
	for _, row := range rows[1:] {
		if row[0] != "volume" {
			continue
		}
		if want := map[string]string{"vol": "0.2", "net": ""}[row[1]]; row[col] != want {
			t.Errorf("CSV %s stopped_price %q, want %q", row[1], row[col], want)
		}
	}
}

// TestExport_PriceChanges: a volume's price changes up to as_of are
// listed after its first terms in both formats (its price fields keep
// the terms from creation), its charge bills each stretch at its price,
// and a volume without changes has no price_changes key at all.
func TestExport_PriceChanges(t *testing.T) {
	v := volume("vol", "100", "0", "0.01", PerGBDay, CNY)
	v.Prices = []VolumePrice{
		{At: off(15 * day), Price: MustDecimal("0.02"), PriceUnit: PerGBDay},
		{At: off(20 * day), Price: MustDecimal("0.9"), PriceUnit: PerGBMonth, HasStoppedPrice: true, StoppedPrice: MustDecimal("1.2")},
		{At: off(40 * day), Price: MustDecimal("5"), PriceUnit: PerGBDay}, // after as_of: not shown
	}
	plain := volume("net", "100", "0", "0.07", PerGBDay, CNY)
	plain.ID = 2
	b := bookOf()
	b.Volumes = []*Volume{v, plain}
	var js, cs bytes.Buffer
	if err := WriteExportJSON(&js, b, off(30*day)); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Volumes []map[string]any `json:"volumes"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, ev := range doc.Volumes {
		pc, has := ev["price_changes"]
		switch ev["name"] {
		case "vol":
			// 15 × 100 × 0.01 + 5 × 100 × 0.02 + 10 × 100 × 0.9/30.
			if ev["price"] != "0.01" || ev["price_unit"] != "gb_day" || ev["charge"] != "55.00" {
				t.Errorf("vol: price %v %v charge %v, want 0.01 gb_day 55.00", ev["price"], ev["price_unit"], ev["charge"])
			}
			got, _ := json.Marshal(pc)
			want := `[{"at":"2026-11-16T00:00:00Z","price":"0.02","price_unit":"gb_day"},` +
				`{"at":"2026-11-21T00:00:00Z","price":"0.9","price_unit":"gb_month","stopped_price":"1.2"}]`
			if string(got) != want {
				t.Errorf("vol: price_changes\n%s\nwant\n%s", got, want)
			}
		case "net":
			if has {
				t.Errorf("net: price_changes %v, want none", pc)
			}
		}
	}
	if err := WriteExportCSV(&cs, b, off(30*day)); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&cs).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := -1
	for i, h := range rows[0] {
		if h == "price_changes" {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("no price_changes column in %v", rows[0])
	}
	for _, row := range rows[1:] {
		if row[0] != "volume" {
			continue
		}
		want := map[string]string{
			"vol": "2026-11-16T00:00:00Z 0.02 gb_day; 2026-11-21T00:00:00Z 0.9 gb_month stopped=1.2", "net": "",
		}[row[1]]
		if row[col] != want {
			t.Errorf("CSV %s price_changes %q, want %q", row[1], row[col], want)
		}
	}
}

// TestExport_PlatformID: a synced rental carries its platform instance ID
// in the JSON ("platform_id") and the CSV (the last column); a rental
// known only from the chat has no key and an empty cell.
func TestExport_PlatformID(t *testing.T) {
	b, asOf := designBook(t)
	synced := *b.Rentals[0]
	synced.ID, synced.Name, synced.Platform, synced.PlatformID = 2, "pod", "runpod", "abc123xyz"
	b.Rentals = append(b.Rentals, &synced)
	var js, cs bytes.Buffer
	if err := WriteExportJSON(&js, b, asOf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Rentals []map[string]any `json:"rentals"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, r := range doc.Rentals {
		id, has := r["platform_id"]
		switch r["name"] {
		case "box1":
			if has {
				t.Errorf("box1 (typed) has platform_id %v", id)
			}
		case "pod":
			if id != "abc123xyz" {
				t.Errorf("pod platform_id = %v, want abc123xyz", id)
			}
		}
	}
	if err := WriteExportCSV(&cs, b, asOf); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&cs).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	last := slices.Index(rows[0], "platform_id")
	if last < 0 || rows[0][last-1] != "price_changes" {
		t.Fatalf("platform_id does not follow price_changes: %v", rows[0])
	}
	got := map[string]string{}
	for _, row := range rows[1:] {
		if row[0] == "rental" {
			got[row[1]] = row[last]
		}
	}
	if got["box1"] != "" || got["pod"] != "abc123xyz" {
		t.Errorf("CSV platform_id cells %v, want box1 empty and pod abc123xyz", got)
	}
}
