package bot_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/ledger"
)

// exportedCompute returns each exported rental's compute charge, by its
// ref when it has one, else by name.
func exportedCompute(t *testing.T, b *ledger.Book, asOf time.Time) map[string]string {
	t.Helper()
	var buf bytes.Buffer
	if err := ledger.WriteExportJSON(&buf, b, asOf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Rentals []struct {
			Name    string `json:"name"`
			Ref     string `json:"ref"`
			Charges struct {
				Compute string `json:"compute"`
			} `json:"charges"`
		} `json:"rentals"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range doc.Rentals {
		k := r.Ref
		if k == "" {
			k = r.Name
		}
		out[k] = r.Charges.Compute
	}
	return out
}

// TestCore_ReusedNameStaysReachable: after /rent reuses a released
// rental's name, the reply says how the older one is reached now, and its
// price is corrected by its address: /spend and the export change for
// that rental only.
func TestCore_ReusedNameStaysReachable(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice, bob}})
	e.say(alice, "/rent yolo autodl 4090 2/h") // Nov 2 10:00 in Shanghai
	e.now = t0.Add(3 * time.Hour)
	e.say(alice, "/release yolo")
	e.now = t0.Add(24 * time.Hour) // Nov 3 10:00
	got := e.say(alice, "/rent yolo autodl 4090 3/h")
	contains(t, got, "yolo@2026-11-02", "Nov 2")
	e.now = t0.Add(26 * time.Hour)

	spend := e.say(alice, "/spend month")
	contains(t, spend, "yolo@2026-11-02 ¥6.00", "yolo@2026-11-03 ¥6.00")
	contains(t, e.say(alice, "/status"), "yolo@2026-11-03")
	before := exportedCompute(t, e.book(alice), e.now)
	if before["yolo@2026-11-02"] != "6.00" || before["yolo@2026-11-03"] != "6.00" {
		t.Fatalf("export before = %v, want each yolo by its ref at 6.00", before)
	}

	got = e.say(alice, "/price yolo@2026-11-02 2.5/h at 2026-11-02 10:00")
	contains(t, got, "✓", "yolo@2026-11-02", "¥2.50/h")
	contains(t, e.say(alice, "/spend month"), "yolo@2026-11-02 ¥7.50", "yolo@2026-11-03 ¥6.00")
	after := exportedCompute(t, e.book(alice), e.now)
	if after["yolo@2026-11-02"] != "7.50" || after["yolo@2026-11-03"] != "6.00" {
		t.Fatalf("export after = %v, want only the older yolo at 7.50", after)
	}

	// A charge reaches the older one by its address too, not the newest.
	contains(t, e.say(alice, "/charge yolo@2026-11-02 5 image fee at 2026-11-02 11:00"), "yolo@2026-11-02")
	b := e.book(alice)
	if len(b.Charges) != 1 || b.Charges[0].RentalID != b.Rentals[0].ID {
		t.Fatalf("charges = %+v, want one on the older yolo (%d)", b.Charges, b.Rentals[0].ID)
	}

	// A bare name takes the live one and says so, with the other's address.
	got = e.say(alice, "/price yolo 3.5/h at 2026-11-03 11:00")
	contains(t, got, "yolo@2026-11-03", "yolo@2026-11-02")

	// Bad addresses change nothing.
	n := len(e.book(alice).Rentals[0].Events) + len(e.book(alice).Rentals[1].Events)
	for _, in := range []string{"/price yolo@2026-13-45 2/h", "/stop yolo@", "/stop yolo@2026-11-09", "/price yolo@2026-11-01 2/h at 2026-11-01 10:00"} {
		if got := e.say(alice, in); !strings.Contains(got, "✗") {
			t.Errorf("%s: %q, want a refusal", in, got)
		}
	}
	// Bob has no yolo: Alice's address never reaches hers from his chat.
	contains(t, e.say(bob, "/price yolo@2026-11-02 9/h at 2026-11-02 10:00"), "✗")
	if m := len(e.book(alice).Rentals[0].Events) + len(e.book(alice).Rentals[1].Events); m != n {
		t.Fatalf("a refused address changed the ledger: %d events, were %d", m, n)
	}
}

// TestCore_ReusedNameZH: the notes in Chinese.
func TestCore_ReusedNameZH(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/lang zh")
	e.say(alice, "/rent yolo autodl 4090 2/h")
	e.now = t0.Add(3 * time.Hour)
	e.say(alice, "/release yolo")
	e.now = t0.Add(24 * time.Hour)
	contains(t, e.say(alice, "/rent yolo autodl 4090 3/h"), "之前的 yolo", "11月2日", "yolo@2026-11-02")
	e.now = t0.Add(26 * time.Hour)
	contains(t, e.say(alice, "/price yolo 3.5/h at 2026-11-03 11:00"), "这里的 yolo", "yolo@2026-11-03", "yolo@2026-11-02")
	contains(t, e.say(alice, "/price yolo@2026-13-45 2/h"), "不是租用的地址")
}

// TestCore_ProposalSuggestsNewName: a rental told in words is offered a
// name no rental has had, so it never hides a released one; a /rent that
// reuses a name after the edit still says so.
func TestCore_ProposalSuggestsNewName(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/rent box1 autodl 4090 2/h")
	e.now = t0.Add(time.Hour)
	e.say(alice, "/release box1")
	e.now = t0.Add(2 * time.Hour)
	p := e.proposal(alice, "在autodl租了一张4090 1.88元/小时")
	contains(t, p.Text, "/rent box2 ")
	card := e.pressedProposal(alice, p, 0, 1)
	contains(t, card.Text, "✓", "box2")
}

// TestCore_BareNameAtOlderTime: a correction through a bare name dated
// in the life of an earlier rental of that name is refused with that
// rental's address, not only "before yolo started".
func TestCore_BareNameAtOlderTime(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/rent yolo autodl 4090 2/h")
	e.now = t0.Add(3 * time.Hour)
	e.say(alice, "/release yolo")
	e.now = t0.Add(24 * time.Hour)
	e.say(alice, "/rent yolo autodl 4090 3/h")
	e.now = t0.Add(26 * time.Hour)
	before := e.book(alice)
	got := e.say(alice, "/price yolo 2.5/h at 2026-11-02 11:00")
	contains(t, got, "✗", "yolo@2026-11-02")
	got = e.say(alice, "/traffic yolo 3GB at 2026-11-02 11:00")
	contains(t, got, "✗", "yolo@2026-11-02")
	after := e.book(alice)
	for i := range before.Rentals {
		if len(after.Rentals[i].Events) != len(before.Rentals[i].Events) || len(after.Rentals[i].TrafficUsage) != 0 {
			t.Fatalf("a refused change changed rental %d", i)
		}
	}
	e.say(alice, "/lang zh")
	contains(t, e.say(alice, "/price yolo 2.5/h at 2026-11-02 11:00"), "✗", "yolo@2026-11-02")
}

// TestCore_BareNameAtOlderTimeCharge: a charge and a traffic price dated
// in the earlier rental's life say which rental ran then.
func TestCore_BareNameAtOlderTimeCharge(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/rent yolo autodl 4090 2/h")
	e.now = t0.Add(3 * time.Hour)
	e.say(alice, "/release yolo")
	e.now = t0.Add(24 * time.Hour)
	e.say(alice, "/rent yolo autodl 4090 3/h")
	e.say(alice, "/traffic yolo price=0.5/GB")
	e.now = t0.Add(26 * time.Hour)
	for _, in := range []string{"/charge yolo 5 image fee at 2026-11-02 11:00", "/traffic yolo price=0.8/GB at 2026-11-02 11:00"} {
		if got := e.say(alice, in); !strings.Contains(got, "yolo@2026-11-02") {
			t.Errorf("%s: %q, want the earlier yolo's address", in, got)
		}
	}
	if b := e.book(alice); len(b.Charges) != 0 {
		t.Fatalf("charges = %+v", b.Charges)
	}
}

// TestCore_TrafficUsageTookNote: traffic recorded through a bare shared
// name says which rental took it; by address, the reply names it.
func TestCore_TrafficUsageTookNote(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/rent yolo autodl 4090 2/h")
	e.now = t0.Add(3 * time.Hour)
	e.say(alice, "/release yolo")
	e.now = t0.Add(24 * time.Hour)
	e.say(alice, "/rent yolo autodl 4090 3/h")
	e.now = t0.Add(26 * time.Hour)
	contains(t, e.say(alice, "/traffic yolo 3GB"), "yolo@2026-11-03", "yolo@2026-11-02")
	contains(t, e.say(alice, "/traffic yolo@2026-11-02 2GB at 2026-11-02 11:00"), "yolo@2026-11-02")
	b := e.book(alice)
	if len(b.Rentals[0].TrafficUsage) != 1 || len(b.Rentals[1].TrafficUsage) != 1 {
		t.Fatalf("traffic = %v / %v, want one record on each", b.Rentals[0].TrafficUsage, b.Rentals[1].TrafficUsage)
	}
}
