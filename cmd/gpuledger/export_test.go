package main_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
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

// TestExport_Team exports a team's ledger with the real binary (--team,
// the name in any case): the JSON names the team and its members and
// each record's owner and project, the CSV ends in the owner and project
// columns; an unknown team is an error listing the teams (exit 1),
// --team with --user a usage error (exit 2); and a plain export of a
// database with one person and their team picks the person, never the
// team's ledger.
func TestExport_Team(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server binary; run without -short")
	}
	bin := buildServer(t)
	data := t.TempDir()
	path := filepath.Join(data, "ledger.db")
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 2, 1, 0, 0, 0, time.UTC)
	if _, err := db.EnsureUser(ctx, ledger.User{ID: 11, Lang: "en", TZ: "Asia/Shanghai", CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	team, err := db.CreateTeam(ctx, ledger.Action{UserID: 11, By: 11, At: at}, "Vision", "alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateRental(ctx, ledger.Action{UserID: team.Ledger(), By: 11, At: at}, ledger.Rental{Name: "box1", Platform: "autodl",
		GPU: "RTX 4090", GPUCount: 1, Mode: ledger.PerSecond, Priced: true, Price: ledger.Price{Amount: ledger.MustDecimal("1.88"), Unit: ledger.UnitHour},
		Currency: ledger.CNY, Project: "yolo-v9", Events: []ledger.Event{{Kind: ledger.EventStart, At: at}}}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	env := []string{"GPULEDGER_DB=" + path}
	asOf := at.Add(2 * time.Hour).Format(time.RFC3339)

	code, out, errs := runBin(t, bin, data, env, "", "export", "--team", "vision", "--as-of", asOf)
	if code != 0 {
		t.Fatalf("export --team: exit %d stderr %q", code, errs)
	}
	var doc struct {
		Team struct {
			ID      int64
			Name    string
			Members []struct {
				ID       int64
				Username string
				Role     string
			}
		} `json:"team"`
		Rentals []struct {
			Name, Project string
			Owner         int64
			Charges       struct{ Total string }
		} `json:"rentals"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("export JSON: %v\n%s", err, out)
	}
	if doc.Team.ID != team.ID || doc.Team.Name != "Vision" || len(doc.Team.Members) != 1 || doc.Team.Members[0].ID != 11 ||
		doc.Team.Members[0].Username != "alice" || doc.Team.Members[0].Role != "owner" {
		t.Errorf("team %+v", doc.Team)
	}
	if len(doc.Rentals) != 1 || doc.Rentals[0].Owner != 11 || doc.Rentals[0].Project != "yolo-v9" || doc.Rentals[0].Charges.Total != "3.76" {
		t.Errorf("rentals %+v, want box1 of 11 for yolo-v9, 3.76", doc.Rentals)
	}

	code, out, errs = runBin(t, bin, data, env, "", "export", "--team", "VISION", "--format", "csv", "--as-of", asOf)
	if code != 0 {
		t.Fatalf("export --team csv: exit %d stderr %q", code, errs)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	n := len(rows[0])
	if rows[0][n-2] != "owner" || rows[0][n-1] != "project" || rows[1][0] != "rental" || rows[1][n-2] != "@alice" || rows[1][n-1] != "yolo-v9" {
		t.Errorf("CSV header %q, first row %q", rows[0], rows[1])
	}

	code, _, errs = runBin(t, bin, data, env, "", "export", "--team", "nope")
	if code != 1 || !strings.Contains(errs, `--team "nope": no such team (the teams: Vision)`) {
		t.Errorf("unknown team: exit %d stderr %q", code, errs)
	}
	code, _, errs = runBin(t, bin, data, env, "", "export", "--team", "vision", "--user", "11")
	if code != 2 || !strings.Contains(errs, "--user and --team") {
		t.Errorf("--team with --user: exit %d stderr %q", code, errs)
	}
	code, out, errs = runBin(t, bin, data, env, "", "export", "--as-of", asOf)
	if code != 0 || strings.Contains(out, `"team"`) || strings.Contains(out, "box1") {
		t.Errorf("plain export of one person and their team: exit %d stderr %q\n%s", code, errs, out)
	}
	code, _, errs = runBin(t, bin, data, env, "", "export", "--user", strconv.FormatInt(team.Ledger(), 10))
	if code != 1 || !strings.Contains(errs, "export it with --team NAME") {
		t.Errorf("--user of a team's ledger: exit %d stderr %q", code, errs)
	}
}
