package hub_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/hub"
	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/internal/testkit"
	"github.com/gpuledger/gpuledger/ledger"
)

// BenchmarkHeartbeat_Kinds measures one heartbeat through the hub's
// handler (no network) on a real SQLite file, by kind, so that an
// enrolment heartbeat is read against a rental's in the same run:
//
//	rental      a rental's agent, busy (the baseline)
//	enrol-known an enrolment heartbeat of an instance already announced
//	            and waiting for the user (the steady state of an unanswered
//	            card: no store write within a minute)
//	enrol-new   an enrolment heartbeat of a new instance each time (a
//	            store write and a listener event; the hub's pending cap
//	            is lifted by a fresh user every MaxPendingInstances)
//
// go test -run '^$' -bench BenchmarkHeartbeat_Kinds -benchmem -count 5 ./agent/hub/
func BenchmarkHeartbeat_Kinds(b *testing.B) {
	ctx := context.Background()
	db := testkit.DB(b)
	clk := testkit.NewClock(t0)
	db.Now = clk.Now
	for uid := int64(1); uid <= 400; uid++ {
		if _, err := db.EnsureUser(ctx, ledger.User{ID: uid, TZ: "UTC"}); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := db.CreateRental(ctx, ledger.Action{UserID: 1, At: t0}, ledger.Rental{
		Name: "box1", Platform: "autodl", GPU: "RTX 4090", GPUCount: 1, Mode: ledger.PerSecond,
		Priced: true, Price: ledger.Price{Amount: ledger.MustDecimal("1.88"), Unit: ledger.UnitHour}, Currency: ledger.CNY,
		Events: []ledger.Event{{Kind: ledger.EventStart, At: t0}},
	}); err != nil {
		b.Fatal(err)
	}
	clk.Add(time.Hour)
	h, err := hub.New(hub.Config{Store: db, Now: clk.Now, RateBurst: 1 << 30, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	if err := h.Load(ctx); err != nil {
		b.Fatal(err)
	}
	handler := h.Handler()
	rentalTok, err := h.Tokens().Issue(ctx, 1, "box1")
	if err != nil {
		b.Fatal(err)
	}
	enrolTok := map[int64]string{}
	enrolOf := func(uid int64) string {
		if tok, ok := enrolTok[uid]; ok {
			return tok
		}
		tok, _, err := h.Enrolment().Issue(ctx, uid)
		if err != nil {
			b.Fatal(err)
		}
		enrolTok[uid] = tok
		return tok
	}
	post := func(tok string, beat wire.HeartbeatRequest) {
		now := clk.Now()
		beat.SentAt, beat.WindowStart, beat.WindowEnd = now, now.Add(-30*time.Second), now
		body, _ := json.Marshal(beat)
		req := httptest.NewRequest(http.MethodPost, wire.PathHeartbeat, bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		w := httptest.NewRecorder()
		handler.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("heartbeat: %d %s", w.Code, w.Body.String())
		}
	}
	instance := func(id string) wire.HeartbeatRequest {
		beat := hb(wire.VerdictBusy, 0)
		beat.Host.Hostname = "host-" + id
		beat.Instance = &wire.InstanceFacts{Platform: "runpod", PlatformSource: "env RUNPOD_POD_ID", ID: id, BootedAt: t0}
		return beat
	}

	b.Run("rental", func(b *testing.B) {
		for b.Loop() {
			post(rentalTok, hb(wire.VerdictBusy, 0))
		}
	})
	b.Run("enrol-known", func(b *testing.B) {
		tok := enrolOf(1)
		post(tok, instance("known1"))
		for b.Loop() {
			post(tok, instance("known1"))
		}
	})
	for uid := int64(2); uid <= 400; uid++ {
		enrolOf(uid) // issued before the timing: a token per user
	}
	// Across the -count runs: every instance new, each user's pending
	// instances under the cap.
	n := 0
	b.Run("enrol-new", func(b *testing.B) {
		for b.Loop() {
			// A fresh user every MaxPendingInstances-1: the cap is per user.
			uid := 2 + int64(n/(ledger.MaxPendingInstances-1))
			if uid > 400 {
				b.Skip("ran out of users: raise the user count for a longer run")
			}
			post(enrolOf(uid), instance(fmt.Sprintf("new%d", n)))
			n++
		}
	})
}
