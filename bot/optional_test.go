package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/internal/testkit"
)

// TestConfig_OptionalFeaturesOff builds a core over the real SQLite store
// but gives it none of the optional features: the store having the
// methods is not enough, so /autorelease answers that automatic actions
// are off and changes nothing, and /why shows no policy.
func TestConfig_OptionalFeaturesOff(t *testing.T) {
	db := openStore(t)
	now := t0
	db.Now = func() time.Time { return now }
	core, err := bot.New(context.Background(), bot.Config{Store: db, AllowedUsers: []int64{alice}, TZ: "Asia/Shanghai",
		Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, db: db, core: core, rec: &testkit.Sender{}, now: now, logs: &strings.Builder{}}
	e.say(alice, "/rent box1 autodl 4090 1.88/h")
	if got := e.say(alice, "/autorelease box1 stop after 1h"); !strings.Contains(got, "Automatic actions need the agent hub") {
		t.Errorf("/autorelease without AutoPolicies: %q, want the feature-off reply", got)
	}
	r, err := e.db.RentalByID(context.Background(), e.book(alice).Rentals[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := db.AutoPolicy(context.Background(), r.ID); err != nil || p.Action != "notify" {
		t.Errorf("policy after the refused /autorelease: %+v, %v; want the default notify", p, err)
	}
	if got := e.say(alice, "/why box1"); !strings.Contains(got, "No automatic decisions") || strings.Contains(got, "idle warnings only") {
		t.Errorf("/why without AutoPolicies: %q, want no policy line", got)
	}
}
