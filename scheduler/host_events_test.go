package scheduler_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/scheduler"
)

// hostRental logs a running rental on platform for user 1, started at t0.
func (e *env) hostRental(name, platform string) *ledger.Rental {
	e.t.Helper()
	r, err := e.db.CreateRental(context.Background(), ledger.Action{UserID: 1, At: t0}, ledger.Rental{
		Name: name, Platform: platform, GPU: "A100", GPUCount: 1, Mode: ledger.PerSecond,
		Priced: true, Price: ledger.Price{Amount: ledger.MustDecimal("1.10"), Unit: ledger.UnitHour}, Currency: ledger.USD,
		Events: []ledger.Event{{Kind: ledger.EventStart, At: t0}},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { checkDecisions(e.t, e.db, r.ID) })
	return r
}

func (e *env) reload(r *ledger.Rental) *ledger.Rental {
	e.t.Helper()
	got, err := e.db.RentalByID(context.Background(), r.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

// history is a rental's history as "kind@HH:MM" in Shanghai.
func history(r *ledger.Rental) string {
	var parts []string
	sh, _ := time.LoadLocation("Asia/Shanghai")
	for _, ev := range r.Events {
		if ev.Kind == ledger.EventStart {
			continue
		}
		parts = append(parts, string(ev.Kind)+"@"+ev.At.In(sh).Format("15:04"))
	}
	return strings.Join(parts, " ")
}

func messages(e *env) []chat.Outgoing {
	var out []chat.Outgoing
	for _, s := range e.chat.Take() {
		if !s.IsAnswer {
			out = append(out, s.Out)
		}
	}
	return out
}

func TestHostShutdown(t *testing.T) {
	down := t0.Add(8*time.Hour + 2*time.Minute + 17*time.Second) // 18:02:17 in Shanghai
	for _, tt := range []struct {
		name, platform string
		host           bool
		released       bool
		events         string // after the report
		line           string // the quiet line, or "" for a card or nothing
		card           string // the ask card's text
	}{
		{name: "stops", platform: "aws", host: true, events: "stop@18:02",
			line: "<b>x</b> shut down at 18:02: stop recorded (AWS stops billing on a shutdown from inside). /undo takes it back."},
		{name: "bills", platform: "lambda", host: true,
			card: "<b>x</b>'s host shut down at 18:02. On Lambda billing goes on until the instance is terminated."},
		{name: "unknown", platform: "autodl", host: true,
			card: "<b>x</b>'s host shut down at 18:02. On AutoDL it is not known whether that stops billing."},
		{name: "no profile", platform: "mycluster", host: true,
			card: "<b>x</b>'s host shut down at 18:02. On mycluster it is not known whether that stops billing."},
		{name: "agent only", platform: "aws", host: false},
		{name: "released", platform: "aws", host: true, released: true, events: "release@10:00"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, nil)
			r := e.hostRental("x", tt.platform)
			if tt.released {
				var err error
				if r, err = e.db.AppendEvent(context.Background(), ledger.Action{UserID: 1, At: t0}, "x", ledger.Event{Kind: ledger.EventRelease, At: t0}); err != nil {
					t.Fatal(err)
				}
			}
			e.chat.Take()
			e.clk.Set(down.Add(5 * time.Second))
			e.s.Handle(context.Background(), ledger.HostShutdown{Rental: r, At: down, Host: tt.host})
			got := e.reload(r)
			if ev := history(got); ev != tt.events {
				t.Errorf("events %q, want %q", ev, tt.events)
			}
			msgs := messages(e)
			switch {
			case tt.line != "":
				if len(msgs) != 1 || msgs[0].Text != tt.line || !msgs[0].Silent || len(msgs[0].Buttons) != 0 {
					t.Fatalf("want the quiet line %q, got %+v", tt.line, msgs)
				}
			case tt.card != "":
				if len(msgs) != 1 || msgs[0].Text != tt.card {
					t.Fatalf("want the card %q, got %+v", tt.card, msgs)
				}
				if l := buttonLabels(msgs[0]); len(l) != 2 || l[0] != "Stopped at 18:02" || l[1] != "Still billing" {
					t.Errorf("buttons %q", l)
				}
			default:
				if len(msgs) != 0 {
					t.Fatalf("want nothing, got %+v", msgs)
				}
			}
			// The same report again changes nothing and says nothing.
			e.s.Handle(context.Background(), ledger.HostShutdown{Rental: got, At: down, Host: tt.host})
			if ev := history(e.reload(r)); ev != tt.events {
				t.Errorf("after the report again: events %q, want %q", ev, tt.events)
			}
			if msgs := messages(e); len(msgs) != 0 {
				t.Errorf("the report again sent %+v", msgs)
			}
		})
	}
}

func TestHostShutdown_Buttons(t *testing.T) {
	down := t0.Add(8*time.Hour + 2*time.Minute)
	e := newEnv(t, nil)
	if _, err := e.db.EnsureUser(context.Background(), ledger.User{ID: 2, Lang: "en", TZ: "UTC"}); err != nil {
		t.Fatal(err)
	}
	r := e.hostRental("lam1", "lambda")
	e.chat.Take()
	e.clk.Set(down.Add(time.Minute))
	e.s.Handle(context.Background(), ledger.HostShutdown{Rental: r, At: down, Host: true})
	card := messages(e)[0]
	id := e.msgID(card)
	act, payload := buttonData(t, card, "Stopped at")
	if act != scheduler.ActHostStopped {
		t.Fatalf("action %q", act)
	}
	// Another user's press is refused and changes nothing.
	if toast := e.pressAs(2, "", act, payload, id); toast != "that rental is not yours" {
		t.Errorf("another user's press: %q", toast)
	}
	key := "tg:update:stopped"
	if toast := e.pressAs(1, key, act, payload, id); toast != "Recorded. /undo takes it back." {
		t.Errorf("toast %q", toast)
	}
	if ev := history(e.reload(r)); ev != "stop@18:02" {
		t.Errorf("events %q", ev)
	}
	if m := messages(e); len(m) != 1 || m[0].EditMessageID != id || m[0].Text != "✓ <b>lam1</b>: stop recorded at 18:02. /undo takes it back." {
		t.Errorf("card after the press %+v", m)
	}
	// Redelivered: nothing changes.
	e.pressAs(1, key, act, payload, id)
	if ev := history(e.reload(r)); ev != "stop@18:02" {
		t.Errorf("events after a redelivered press %q", ev)
	}
	// A new press re-checks: the rental is stopped already.
	if toast := e.pressAs(1, "", act, payload, id); toast != "lam1 is not running in the ledger: nothing recorded." {
		t.Errorf("second press %q", toast)
	}
	// Its host boots again: the stopped rental resumes by itself.
	boot := down.Add(14 * time.Hour)
	e.clk.Set(boot.Add(time.Minute))
	e.s.Handle(context.Background(), ledger.HostBooted{Rental: e.reload(r), Boot: ledger.Boot{BootAt: boot, LastSeen: down, ShutdownAt: down, ShutdownHost: true}})
	if ev := history(e.reload(r)); ev != "stop@18:02 resume@08:02" {
		t.Errorf("events after the boot %q", ev)
	}
	if m := messages(e); len(m) != 1 || !m[0].Silent || m[0].Text != "<b>lam1</b> started again at 08:02: resume recorded. /undo takes it back." {
		t.Errorf("boot line %+v", m)
	}
}

func TestHostBooted(t *testing.T) {
	seen := t0.Add(8*time.Hour + 2*time.Minute) // 18:02
	for _, tt := range []struct {
		name, platform string
		boot           ledger.Boot
		events         string
		line           string
		card           string
		stopped        string // the Stopped button's label
		pressed        string // events after pressing Stopped
	}{
		{name: "report stops", platform: "gcp", boot: ledger.Boot{BootAt: seen.Add(2 * time.Hour), LastSeen: seen, ShutdownAt: seen, ShutdownHost: false},
			events: "stop@18:02 resume@20:02",
			line:   "<b>x</b> was down 18:02–20:02: stop and resume recorded (Google Cloud stops billing on a shutdown from inside). /undo takes back the resume, a second /undo the stop."},
		{name: "report bills", platform: "lambda", boot: ledger.Boot{BootAt: seen.Add(2 * time.Hour), LastSeen: seen, ShutdownAt: seen, ShutdownHost: true},
			card:    "<b>x</b>'s host shut down at 18:02 and started again at 20:02. On Lambda billing goes on until the instance is terminated.",
			stopped: "Stopped 18:02–20:02", pressed: "stop@18:02 resume@20:02"},
		{name: "no report long gap", platform: "autodl", boot: ledger.Boot{BootAt: seen.Add(30 * time.Minute), LastSeen: seen},
			card:    "<b>x</b>'s agent went silent at 18:02 and its host started again at 18:32: was it stopped in between? On AutoDL it is not known whether that stops billing.",
			stopped: "Stopped 18:02–18:32", pressed: "stop@18:02 resume@18:32"},
		{name: "no report long gap on a stopping platform", platform: "aws", boot: ledger.Boot{BootAt: seen.Add(30 * time.Minute), LastSeen: seen},
			card:    "<b>x</b>'s agent went silent at 18:02 and its host started again at 18:32: was it stopped in between? On AWS it is not known whether that stops billing.",
			stopped: "Stopped 18:02–18:32", pressed: "stop@18:02 resume@18:32"},
		{name: "a reboot", platform: "autodl", boot: ledger.Boot{BootAt: seen.Add(4 * time.Minute), LastSeen: seen}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, nil)
			r := e.hostRental("x", tt.platform)
			e.chat.Take()
			e.clk.Set(tt.boot.BootAt.Add(20 * time.Second))
			e.s.Handle(context.Background(), ledger.HostBooted{Rental: r, Boot: tt.boot})
			if ev := history(e.reload(r)); ev != tt.events {
				t.Errorf("events %q, want %q", ev, tt.events)
			}
			msgs := messages(e)
			switch {
			case tt.line != "":
				if len(msgs) != 1 || msgs[0].Text != tt.line || !msgs[0].Silent {
					t.Fatalf("want the quiet line %q, got %+v", tt.line, msgs)
				}
			case tt.card != "":
				if len(msgs) != 1 || msgs[0].Text != tt.card {
					t.Fatalf("want the card %q, got %+v", tt.card, msgs)
				}
				if l := buttonLabels(msgs[0]); len(l) != 2 || l[0] != tt.stopped || l[1] != "It billed" {
					t.Errorf("buttons %q", l)
				}
			default:
				if len(msgs) != 0 {
					t.Fatalf("want nothing, got %+v", msgs)
				}
			}
			// The same boot told again changes nothing.
			e.s.Handle(context.Background(), ledger.HostBooted{Rental: e.reload(r), Boot: tt.boot})
			if ev := history(e.reload(r)); ev != tt.events {
				t.Errorf("after the boot again: events %q", ev)
			}
			if m := messages(e); len(m) != 0 {
				t.Errorf("the boot again sent %+v", m)
			}
			if tt.card == "" {
				return
			}
			act, payload := buttonData(t, msgs[0], tt.stopped)
			key := "tg:update:range"
			e.pressAs(1, key, act, payload, e.msgID(msgs[0]))
			e.pressAs(1, key, act, payload, e.msgID(msgs[0]))
			if ev := history(e.reload(r)); ev != tt.pressed {
				t.Errorf("after Stopped: events %q, want %q", ev, tt.pressed)
			}
		})
	}
}

func TestHostBooted_ItBilled(t *testing.T) {
	seen := t0.Add(8 * time.Hour)
	e := newEnv(t, nil)
	r := e.hostRental("x", "lambda")
	e.chat.Take()
	boot := ledger.Boot{BootAt: seen.Add(time.Hour), LastSeen: seen, ShutdownAt: seen, ShutdownHost: true}
	e.clk.Set(boot.BootAt)
	e.s.Handle(context.Background(), ledger.HostBooted{Rental: r, Boot: boot})
	card := messages(e)[0]
	act, payload := buttonData(t, card, "It billed")
	if toast := e.pressAs(1, "", act, payload, e.msgID(card)); toast != "Nothing recorded: it billed." {
		t.Errorf("toast %q", toast)
	}
	if ev := history(e.reload(r)); ev != "" {
		t.Errorf("It billed recorded %q", ev)
	}
	if m := messages(e); len(m) != 1 || m[0].Text != "<b>x</b>: it billed, nothing recorded." || len(m[0].Buttons) != 0 {
		t.Errorf("card after It billed %+v", m)
	}
}

// TestHost_ThroughTheHub: an agent's shutdown report and its next boot,
// posted as heartbeats to the real hub, stop and resume an AWS rental.
func TestHost_ThroughTheHub(t *testing.T) {
	e := newEnv(t, nil)
	r := e.hostRental("aws1", "aws")
	tok, err := e.hub.Tokens().Issue(context.Background(), 1, "aws1")
	if err != nil {
		t.Fatal(err)
	}
	boot := t0.Add(-time.Hour)
	beat := func(booted time.Time, sd *wire.Shutdown) {
		t.Helper()
		e.seq++
		now := e.clk.Now()
		e.sendWith(tok, wire.HeartbeatRequest{Version: wire.Version, Seq: e.seq, BootID: "b" + booted.String(), Verdict: wire.VerdictBusy, Samples: 6, BusySamples: 6,
			WindowStart: now.Add(-30 * time.Second), WindowEnd: now, SentAt: now,
			Host:     wire.HostFacts{Hostname: "ip-10-0-0-1", GPUSource: "simulate", GPUs: []wire.GPUFact{{Name: "NVIDIA A100-SXM4-40GB"}}},
			Instance: &wire.InstanceFacts{Platform: "aws", ID: "i-0abc", BootedAt: booted}, Shutdown: sd})
		e.s.DrainEvents(context.Background())
	}
	e.clk.Set(t0.Add(8 * time.Hour))
	beat(boot, nil)
	e.clk.Add(time.Minute) // 18:01
	beat(boot, &wire.Shutdown{At: e.clk.Now(), Host: true})
	if ev := history(e.reload(r)); ev != "stop@18:01" {
		t.Fatalf("after the shutdown report: %q", ev)
	}
	if m := messages(e); len(m) != 1 || !strings.HasPrefix(m[0].Text, "<b>aws1</b> shut down at 18:01: stop recorded") || !m[0].Silent {
		t.Fatalf("shutdown line %+v", m)
	}
	e.clk.Add(14 * time.Hour) // 08:01 the next day
	beat(e.clk.Now().Add(-time.Minute), nil)
	if ev := history(e.reload(r)); ev != "stop@18:01 resume@08:00" {
		t.Fatalf("after the new boot: %q", ev)
	}
	if m := messages(e); len(m) != 1 || !strings.Contains(m[0].Text, "started again at") {
		t.Fatalf("boot line %+v", m)
	}
}

// TestInstanceCard_QuietHours: a new instance's card is not held by quiet
// hours: it comes at once, silently.
func TestInstanceCard_QuietHours(t *testing.T) {
	e := newEnv(t, func(s *ledger.Settings) { s.QuietFrom, s.QuietTo = 9*60, 11*60 })
	tok := e.enrolToken()
	e.chat.Take()
	e.announce(tok, instance{platform: "vast", id: "q1", host: "v", gpu: "NVIDIA GeForce RTX 3090", gpus: 1, boot: t0})
	if m := e.onlyNew(); !m.Silent || !strings.HasPrefix(m.Text, "New instance on Vast.ai") {
		t.Errorf("card in quiet hours %+v", m)
	}
}

// TestHost_BootAnswersShutdownCard: a shutdown card not answered before
// the host boots again loses its buttons; the boot's card asks instead.
func TestHost_BootAnswersShutdownCard(t *testing.T) {
	down := t0.Add(8 * time.Hour)
	e := newEnv(t, nil)
	r := e.hostRental("lam", "lambda")
	e.chat.Take()
	e.clk.Set(down)
	e.s.Handle(context.Background(), ledger.HostShutdown{Rental: r, At: down, Host: true})
	first := messages(e)[0]
	e.clk.Set(down.Add(time.Hour))
	e.s.Handle(context.Background(), ledger.HostBooted{Rental: e.reload(r), Boot: ledger.Boot{BootAt: down.Add(time.Hour), LastSeen: down, ShutdownAt: down, ShutdownHost: true}})
	m := messages(e)
	if len(m) != 2 || m[0].EditMessageID != e.msgID(first) || len(m[0].Buttons) != 0 || m[0].Text != first.Text {
		t.Fatalf("the shutdown card was not closed: %+v", m)
	}
	if l := buttonLabels(m[1]); len(l) != 2 || l[0] != "Stopped 18:00–19:00" {
		t.Errorf("boot card %q", l)
	}
}

// TestHostBooted_SameMinute: a stop and a boot seconds apart read to the
// second, in the line, the card, its button and the answer to it, in both
// languages; to the minute they would read "18:02–18:02".
func TestHostBooted_SameMinute(t *testing.T) {
	down := t0.Add(8*time.Hour + 2*time.Minute + 10*time.Second) // 18:02:10 in Shanghai
	boot := ledger.Boot{BootAt: down.Add(30 * time.Second), LastSeen: down.Add(-20 * time.Second), ShutdownAt: down, ShutdownHost: true}
	t.Run("recorded", func(t *testing.T) {
		e := newEnv(t, nil)
		r := e.hostRental("x", "gcp")
		e.chat.Take()
		e.clk.Set(boot.BootAt.Add(5 * time.Second))
		e.s.Handle(context.Background(), ledger.HostBooted{Rental: r, Boot: boot})
		want := "<b>x</b> was down 18:02:10–18:02:40: stop and resume recorded"
		if m := messages(e); len(m) != 1 || !strings.HasPrefix(m[0].Text, want) {
			t.Errorf("want the line %q…, got %+v", want, m)
		}
	})
	for _, tt := range []struct {
		lang, card, button, done string
	}{
		{"en", "<b>x</b>'s host shut down at 18:02:10 and started again at 18:02:40.", "Stopped 18:02:10–18:02:40",
			"✓ <b>x</b>: stopped 18:02:10–18:02:40 recorded."},
		{"zh", "<b>x</b> 的主机于 18:02:10 关机，18:02:40 重新启动。", "18:02:10–18:02:40 关机",
			"✓ <b>x</b>：已记录 18:02:10–18:02:40 关机。"},
	} {
		t.Run("asked "+tt.lang, func(t *testing.T) {
			e := newEnv(t, nil)
			ctx := context.Background()
			u, _ := e.db.User(ctx, 1)
			u.Lang = tt.lang
			if _, err := e.db.UpdateUser(ctx, ledger.Action{UserID: 1, At: t0}, u); err != nil {
				t.Fatal(err)
			}
			r := e.hostRental("x", "lambda")
			e.chat.Take()
			e.clk.Set(boot.BootAt.Add(5 * time.Second))
			e.s.Handle(ctx, ledger.HostBooted{Rental: r, Boot: boot})
			m := messages(e)
			if len(m) != 1 || !strings.HasPrefix(m[0].Text, tt.card) {
				t.Fatalf("want the card %q…, got %+v", tt.card, m)
			}
			if l := buttonLabels(m[0]); len(l) != 2 || l[0] != tt.button {
				t.Fatalf("buttons %q, want %q first", l, tt.button)
			}
			act, payload := buttonData(t, m[0], tt.button)
			e.pressAs(1, "", act, payload, e.msgID(m[0]))
			if got := e.reload(r); len(got.Events) != 3 || !got.Events[1].At.Equal(down) || !got.Events[2].At.Equal(boot.BootAt) {
				t.Errorf("events after Stopped: %+v", got.Events)
			}
			if m := messages(e); len(m) != 1 || !strings.HasPrefix(m[0].Text, tt.done) {
				t.Errorf("want the card edited to %q…, got %+v", tt.done, m)
			}
		})
	}
}
