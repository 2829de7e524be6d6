package scheduler_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// TestTeam_GPUBoundCountsEveryCurrency: a GPU bound counts GPUs whatever
// the currency of their rentals' prices and of the limit (a GPU is a
// GPU): bob's box3 (2× A100 at ¥14/h) and box5 (2 GPUs at €3/h) make 4
// GPUs over a bound of 3 stored in USD, and both rentals get their
// approval; a rate bound in USD over the same rentals opens none (it
// counts only USD rentals, which bob has none of).
func TestTeam_GPUBoundCountsEveryCurrency(t *testing.T) {
	e := newTeamEnv(t, bob)
	ctx := context.Background()
	box5, err := e.db.CreateRental(ctx, ledger.Action{UserID: e.lid, By: bob, At: t0}, ledger.Rental{
		Name: "box5", Platform: "runpod", GPU: "A40", GPUCount: 2, Mode: ledger.PerSecond, Owner: bob,
		Priced: true, Price: ledger.Price{Amount: ledger.MustDecimal("3"), Unit: ledger.UnitHour}, Currency: ledger.EUR,
		Events: []ledger.Event{{Kind: ledger.EventStart, At: t0}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ts.SetLimit(ctx, ledger.Action{UserID: e.lid, By: carol, At: e.clk.Now()}, ledger.Limit{
		TeamID: e.team.ID, Scope: ledger.ScopeMember, Subject: "2", Currency: ledger.USD, GPUs: 3, RatePerHour: ledger.MustDecimal("1")}); err != nil {
		t.Fatal(err)
	}
	e.clk.Add(time.Minute)
	e.tick2()
	aps, err := e.ts.Approvals(ctx, e.team.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]ledger.LimitKind{}
	for _, ap := range aps {
		if ap.Kind != ledger.LimitGPUs {
			t.Errorf("approval %+v: only the GPU bound applies (the rate bound counts USD rentals, bob has none)", ap)
		}
		got[ap.RentalID] = ap.Kind
	}
	if len(aps) != 2 || got[e.rid] != ledger.LimitGPUs || got[box5.ID] != ledger.LimitGPUs {
		t.Fatalf("approvals = %+v, want box3's and box5's for 4 GPUs over 3", aps)
	}
	if aps[0].Value.String() != "4" {
		t.Errorf("approval counts %s GPUs, want 4 (both currencies)", aps[0].Value)
	}
}

// TestTeam_GPUBoundOfOneSaysGPU: the admins' card counts one GPU as one
// ("2 GPUs of 1 GPU"), in both languages' own words.
func TestTeam_GPUBoundOfOneSaysGPU(t *testing.T) {
	e := newTeamEnv(t, bob)
	if err := e.ts.SetLimit(context.Background(), ledger.Action{UserID: e.lid, By: carol, At: e.clk.Now()}, ledger.Limit{
		TeamID: e.team.ID, Scope: ledger.ScopeMember, Subject: "2", Currency: ledger.CNY, GPUs: 1}); err != nil {
		t.Fatal(err)
	}
	e.clk.Add(time.Minute)
	e.tick2()
	got := e.snd.to(carol)
	if len(got) != 1 {
		t.Fatalf("carol got %d messages, want the approval card", len(got))
	}
	if !strings.Contains(got[0].Text, "2 GPUs of 1 GPU") || strings.Contains(got[0].Text, "1 GPUs") {
		t.Errorf("card = %q, want it over by \"2 GPUs of 1 GPU\"", got[0].Text)
	}
}

// TestTeam_AdminOwnerGetsOnlyTheCard: when the rental over a limit is an
// admin's own, the admin's card says so, and no second "your box3 is
// over" message follows it; the other admin gets the card as usual.
func TestTeam_AdminOwnerGetsOnlyTheCard(t *testing.T) {
	e := newTeamEnv(t, carol)
	if err := e.ts.SetLimit(context.Background(), ledger.Action{UserID: e.lid, By: alice, At: e.clk.Now()}, ledger.Limit{
		TeamID: e.team.ID, Scope: ledger.ScopeTeam, Currency: ledger.CNY, RatePerHour: ledger.MustDecimal("10")}); err != nil {
		t.Fatal(err)
	}
	e.clk.Add(time.Minute)
	e.tick2()
	for _, admin := range []int64{alice, carol} {
		got := e.snd.to(admin)
		if len(got) != 1 || labels(got[0]) != "[Approve] [Stop it]" || !strings.Contains(got[0].Text, "@carol's <b>box3</b>") {
			t.Errorf("admin %d got %d messages (%+v), want the one card naming @carol's box3", admin, len(got), got)
		}
	}
	if got := e.snd.to(room); len(got) != 0 {
		t.Errorf("the room got %+v", got)
	}
}
