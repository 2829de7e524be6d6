package main_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// TestExport_TeamFormerMembers exports, with the real binary, a team
// whose admin bob was removed after logging a charge: the export still
// names him, with his last username and role, marked removed, after the
// current members.
func TestExport_TeamFormerMembers(t *testing.T) {
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
	for _, id := range []int64{11, 12} {
		if _, err := db.EnsureUser(ctx, ledger.User{ID: id, Lang: "en", TZ: "Asia/Shanghai", CreatedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	team, err := db.CreateTeam(ctx, ledger.Action{UserID: 11, By: 11, At: at}, "Vision", "alice")
	if err != nil {
		t.Fatal(err)
	}
	on := func(by int64) ledger.Action { return ledger.Action{UserID: team.Ledger(), By: by, At: at} }
	code, _, err := db.CreateInvite(ctx, on(11), team.ID, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Join(ctx, ledger.Action{UserID: 12, At: at}, code, "bob", false); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SetRole(ctx, on(11), team.ID, 12, ledger.RoleAdmin); err != nil {
		t.Fatal(err)
	}
	if _, err := db.AddCharge(ctx, on(12), "", ledger.Charge{Platform: "autodl", Amount: ledger.MustDecimal("3"), Currency: ledger.CNY, At: at}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RemoveMember(ctx, on(11), team.ID, 12, 11); err != nil {
		t.Fatal(err)
	}
	db.Close()
	env := []string{"GPULEDGER_DB=" + path}
	rc, out, errs := runBin(t, bin, data, env, "", "export", "--team", "vision", "--as-of", at.Add(time.Hour).Format(time.RFC3339))
	if rc != 0 {
		t.Fatalf("export --team: exit %d stderr %q", rc, errs)
	}
	var doc struct {
		Team struct {
			Members []struct {
				ID       int64
				Username string
				Role     string
				Removed  bool
			}
		} `json:"team"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("export JSON: %v\n%s", err, out)
	}
	m := doc.Team.Members
	if len(m) != 2 || m[0].ID != 11 || m[0].Removed ||
		m[1].ID != 12 || m[1].Username != "bob" || m[1].Role != "admin" || !m[1].Removed {
		t.Fatalf("members = %+v, want alice then bob (@bob, admin, removed)\n%s", m, out)
	}
}
