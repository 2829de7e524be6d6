package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/connector/runpod/runpodfake"
	"github.com/gpuledger/gpuledger/connector/vast/vastfake"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// What the platform test expects the bot to say, in one place: align
// them here when a wording changes.
const (
	fragConnected  = "Connected"   // /connect's reply after the key check
	fragDeletedKey = "deleted"     // ... which says the key's message was deleted
	fragRelease    = "Release now" // the idle card's button
	fragStopped    = "Stopped "    // the card after the stop was confirmed: "Stopped box1 on RunPod at 18:02"
	fragOnRunPod   = "on RunPod at "
	fragReconcile  = "RunPod" // /reconcile's heading for the platform
)

// Keys the fake platforms accept; never to appear in a log or a reply.
const (
	rpKey   = "rpa_E2EKEY0123456789ABCDEFGHIJKLMNOPQRSTUV"
	vastKey = "vastkey0123456789abcdef0123456789abcdef0123456789abcdef01234567"
)

// TestPlatforms runs the real server against two fake platforms (RunPod,
// Vast.ai): the keys are connected from the chat and their messages
// deleted; the platforms' instances become rentals with their IDs; the
// RunPod one, idle per its agent, is stopped through RunPod's API on
// Release now (its release command does not run), the platform lists it
// stopped, and the ledger records the stop; the ledger's RunPod balance is
// the platform's; a billed amount the ledger does not account for shows up
// in /reconcile.
func TestPlatforms(t *testing.T) {
	started := time.Now().Add(-time.Hour).Truncate(time.Second)
	rp := runpodfake.New(rpKey)
	t.Cleanup(rp.Close)
	rp.SetPods(runpodfake.NewPod("pod1abc", "trainer", "RUNNING", json.Number("0.69"), "RTX 4090", 1, started))
	rp.SetBalance(json.Number("50.00"), json.Number("0.69"))
	vf := vastfake.New(vastKey)
	t.Cleanup(vf.Close)
	vf.SetInstances(vastfake.Instance(4242001))

	w := startWorldEnv(t, []string{
		"GPULEDGER_RUNPOD_URL=" + rp.RESTURL(),
		"GPULEDGER_RUNPOD_GRAPHQL_URL=" + rp.GraphQLURL(),
		"GPULEDGER_VAST_URL=" + vf.Base(),
		"GPULEDGER_SYNC=10s",
	}, func(ctx context.Context, w *world, db *sqlite.DB) {
		if _, err := db.EnsureUser(ctx, ledger.User{ID: userID, Lang: "en", TZ: "UTC", Settings: fastSettings()}); err != nil {
			t.Fatal(err)
		}
	})

	// Connect RunPod: the key is checked, stored, its message deleted.
	w.fake.SendText(userID, userID, "/connect runpod "+rpKey)
	w.waitMessage(fragConnected, 20*time.Second)
	if n := len(w.fake.Deleted(userID)); n != 1 {
		t.Errorf("%d messages deleted after /connect, want the one holding the RunPod key", n)
	}
	// The pod is logged as a rental with its platform ID.
	name := w.waitRentalByPlatformID(t, "pod1abc", 30*time.Second)

	// Connect Vast.ai: its instance appears too.
	w.fake.SendText(userID, userID, "/connect vast "+vastKey)
	w.waitRentalByPlatformID(t, "4242001", 30*time.Second)

	// The RunPod rental's agent sees idle GPUs: the idle card comes.
	w.token = w.agentTokenFor(t, name)
	w.setGPU(0)
	w.startAgent()
	card := w.waitMessage("spent idle", 30*time.Second)
	data := button(card, fragRelease)
	if data == "" {
		t.Fatalf("no %q on the idle card: %+v", fragRelease, card.Buttons)
	}
	pressed := time.Now()
	w.fake.PressButton(userID, userID, card.ID, data)
	w.fake.PressButton(userID, userID, card.ID, data) // a second press: still one stop
	w.waitText(t, 0, 60*time.Second, fragStopped, fragOnRunPod)
	if n := rp.Calls("POST /v1/pods/pod1abc/stop"); n != 1 {
		t.Errorf("RunPod got %d stop calls, want 1", n)
	}
	if _, err := os.Stat(w.marker); err == nil {
		t.Errorf("the agent's release command ran: the stop went through the API, not the agent")
	}
	r := rentalOf(w.export(), name)
	if r == nil || r["state"] != "stopped" || r["platform_id"] != "pod1abc" {
		t.Fatalf("exported rental = %+v, want stopped with platform_id pod1abc", r)
	}
	_ = pressed

	// The ledger's RunPod balance is the platform's.
	exp := w.export()
	if got := balanceOf(exp, "runpod"); got != "50.00" && got != "50" {
		t.Errorf("exported RunPod balance = %q, want the platform's 50.00 (export %v)", got, exp["balances"])
	}

	// A forced drift: RunPod bills $5 for the pod this month.
	rp.SetBilling(map[string]any{"podId": "pod1abc", "time": started.Truncate(time.Hour).Format(time.RFC3339), "amount": json.Number("5.00"), "timeBilledMs": json.Number("3600000")})
	after := len(w.fake.Messages(userID))
	w.fake.SendText(userID, userID, "/reconcile")
	rec := w.waitText(t, after, 30*time.Second, fragReconcile, "5.00")
	if !strings.Contains(rec.Text, name) {
		t.Errorf("/reconcile does not name the rental %s:\n%s", name, rec.Text)
	}

	// No key in the server's log.
	for _, k := range []string{rpKey, vastKey} {
		if strings.Contains(w.srvLog.String(), k) {
			t.Errorf("a platform key appears in the server's log")
		}
	}
}

// waitRentalByPlatformID waits until the export holds a rental with that
// platform ID and returns its name.
func (w *world) waitRentalByPlatformID(t *testing.T, id string, timeout time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		rs, _ := w.export()["rentals"].([]any)
		for _, x := range rs {
			if r, ok := x.(map[string]any); ok && r["platform_id"] == id {
				return fmt.Sprint(r["name"])
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
	t.Fatalf("no rental with platform_id %s within %s; messages:\n%s", id, timeout, w.transcript())
	return ""
}

// agentTokenFor asks the bot for a rental's agent token with /agent NAME.
func (w *world) agentTokenFor(t *testing.T, name string) string {
	t.Helper()
	after := len(w.fake.Messages(userID))
	w.fake.SendText(userID, userID, "/agent "+name)
	m := w.waitText(t, after, 20*time.Second, name)
	tok := tokenRE.FindString(m.Text)
	if tok == "" {
		t.Fatalf("no token in /agent's reply: %s", m.Text)
	}
	return tok
}

// balanceOf returns the exported balance of a platform, as text.
func balanceOf(exp map[string]any, platform string) string {
	bs, _ := exp["balances"].(map[string]any)
	if b, ok := bs[platform].(map[string]any); ok {
		return fmt.Sprint(b["balance"])
	}
	return ""
}
