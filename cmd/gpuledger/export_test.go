package main_test

import (
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExport_WhatWasTypedComesBack types a rental, its traffic terms and
// usage, a one-off with a Chinese note, a top-up, a balance, a price
// change and a stop in the terminal chat of the real binary, then exports
// with the real binary: each comes back as typed, in the user's zone, in
// the JSON and in the CSV.
func TestExport_WhatWasTypedComesBack(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server binary; run without -short")
	}
	bin := buildServer(t)
	data := t.TempDir()
	db := filepath.Join(data, "ledger.db")
	env := []string{"GPULEDGER_DB=" + db, "GPULEDGER_LISTEN=127.0.0.1:0", "GPULEDGER_TZ=Asia/Shanghai",
		"GPULEDGER_AGENT_BINARY=" + filepath.Join(data, "no-agent")}
	in := strings.Join([]string{"/rent t1 autodl 4090 1.88/h", "/traffic t1 price=0.8/GB free=10GB", "/traffic t1 12GB",
		"/charge t1 3.5 镜像费 image", "/topup autodl 100", "/balance autodl 96.5", "/price t1 2.08/h", "/stop t1"}, "\n") + "\n"
	if code, out, errs := runBin(t, bin, data, env, in); code != 0 || strings.Count(out, "✓") != 8 {
		t.Fatalf("chat: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errs)
	}
	// Everything above was recorded within the last minute or so.
	asOf := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	code, out, errs := runBin(t, bin, data, env, "", "export", "--format", "json", "--as-of", asOf)
	if code != 0 {
		t.Fatalf("export: exit %d stderr %q", code, errs)
	}
	var doc struct {
		TimeZone string `json:"time_zone"`
		Rentals  []struct {
			Events []struct {
				Kind, At, Price string
				PriceUnit       string `json:"price_unit"`
			} `json:"events"`
			Traffic struct {
				PricePerGB string `json:"price_per_gb"`
				FreeGB     string `json:"free_gb"`
				Usage      []struct {
					Bytes int64 `json:"bytes"`
				} `json:"usage"`
			} `json:"traffic"`
		} `json:"rentals"`
		OneOffs []struct {
			At, Amount, Note, Charge string
			Rental                   string `json:"rental"`
		} `json:"one_offs"`
		TopUps   []struct{ At, Amount string }         `json:"top_ups"`
		Readings []struct{ At, Amount, Source string } `json:"balance_readings"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("export JSON: %v\n%s", err, out)
	}
	if doc.TimeZone != "Asia/Shanghai" || len(doc.Rentals) != 1 || len(doc.OneOffs) != 1 || len(doc.TopUps) != 1 || len(doc.Readings) != 1 {
		t.Fatalf("the export lost what was typed:\n%s", out)
	}
	var kinds []string
	for _, e := range doc.Rentals[0].Events {
		kinds = append(kinds, e.Kind+" "+e.Price+" "+e.PriceUnit)
		if !strings.HasSuffix(e.At, "+08:00") {
			t.Errorf("event %s at %s, not in the user's zone", e.Kind, e.At)
		}
	}
	if got := strings.Join(kinds, ", "); got != "start 1.88 hour, price 2.08 hour, stop  " {
		t.Errorf("events %q, want the start at 1.88/h, the change to 2.08/h and the stop", got)
	}
	tr := doc.Rentals[0].Traffic
	if tr.PricePerGB != "0.8" || tr.FreeGB != "10" || len(tr.Usage) != 1 || tr.Usage[0].Bytes != 12<<30 {
		t.Errorf("traffic %+v, want 0.8/GB, 10 free and 12 GiB used", tr)
	}
	if o := doc.OneOffs[0]; o.Amount != "3.5" || o.Charge != "3.50" || o.Note != "镜像费 image" || o.Rental != "t1" || !strings.HasSuffix(o.At, "+08:00") {
		t.Errorf("one-off %+v, want 3.5 on t1 noted 镜像费 image", o)
	}
	if doc.TopUps[0].Amount != "100" || doc.Readings[0].Amount != "96.5" || doc.Readings[0].Source != "typed" {
		t.Errorf("top-up %+v, reading %+v", doc.TopUps[0], doc.Readings[0])
	}

	code, out, errs = runBin(t, bin, data, env, "", "export", "--format", "csv", "--as-of", asOf)
	if code != 0 {
		t.Fatalf("export csv: exit %d stderr %q", code, errs)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, r := range rows[1:] {
		count[r[0]]++
		if r[0] == "one_off" && !strings.Contains(strings.Join(r, ","), "镜像费 image") {
			t.Errorf("the CSV's one-off row lost its note: %v", r)
		}
	}
	for kind, n := range map[string]int{"rental": 1, "rental_event": 3, "traffic": 1, "one_off": 1, "top_up": 1, "balance_reading": 1} {
		if count[kind] != n {
			t.Errorf("%d %s rows in the CSV, want %d:\n%s", count[kind], kind, n, out)
		}
	}
}
