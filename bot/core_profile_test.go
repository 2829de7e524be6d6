package bot_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/ledger"
)

// volumeNamed returns the user's volume called name, failing the test
// when there is none.
func volumeNamed(t *testing.T, e *env, user int64, name string) *ledger.Volume {
	t.Helper()
	for _, v := range e.book(user).Volumes {
		if v.Name == name {
			return v
		}
	}
	t.Fatalf("no volume %s", name)
	return nil
}

func rentalNamed(t *testing.T, e *env, user int64, name string) *ledger.Rental {
	t.Helper()
	for _, r := range e.book(user).Rentals {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no rental %s", name)
	return nil
}

// TestCore_StoragePriceFromProfile: a volume on a rental of a platform
// with a typical storage price gets it (and its stopped rate), the reply
// says where it came from and how to use another; the user's own price and
// free quota win; a volume for a platform without a rental gets the same.
func TestCore_StoragePriceFromProfile(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/rent s1 autodl 4090 1.88/h")
	got := e.say(alice, "/storage sd1 200GB rental=s1")
	contains(t, got, "sd1", "200GB", "¥0.0066/GB/day", "free 50GB", "AutoDL's profile", "/undo")
	if v := volumeNamed(t, e, alice, "sd1"); !v.Priced || v.Price.String() != "0.0066" || v.PriceUnit != ledger.PerGBDay ||
		v.FreeGB.String() != "50" || v.HasStoppedPrice {
		t.Errorf("sd1 = %+v", v)
	}
	// Thirty days of 150 billable GB at ¥0.0066/GB/day.
	e.now = t0.Add(30 * 24 * time.Hour)
	contains(t, e.say(alice, "/spend today"), "storage")
	st := ledger.StatementAsOf(e.book(alice), e.now)
	if got := st.Volumes[0].Charge.String(); got != "29.70" {
		t.Errorf("sd1 after 30 days = %s, want 29.70", got)
	}
	e.now = t0

	// The hint in the reply works: undo, then give a price.
	contains(t, e.say(alice, "/undo"), "undone")
	contains(t, e.say(alice, "/storage sd1 200GB 0.01/GB/day rental=s1"), "¥0.01/GB/day")
	if got := e.say(alice, "/storage sd2 100GB 0.01/GB/day rental=s1"); strings.Contains(got, "profile") {
		t.Errorf("a price the user gave is reported as the profile's: %q", got)
	}
	if v := volumeNamed(t, e, alice, "sd1"); v.Price.String() != "0.01" {
		t.Errorf("sd1 after re-creating = %+v", v)
	}
	// free=0 means none, not "the profile's".
	e.say(alice, "/storage sd3 100GB free=0 rental=s1")
	if v := volumeNamed(t, e, alice, "sd3"); !v.FreeGB.IsZero() || !v.Priced {
		t.Errorf("sd3 free=0 = %+v", v)
	}

	// RunPod: running and stopped rates.
	e.say(alice, "/rent p1 runpod 4090 0.69/h")
	contains(t, e.say(alice, "/storage pv 100GB rental=p1"), "$0.10/GB/month", "$0.20/GB/month while stopped", "RunPod's profile")
	if v := volumeNamed(t, e, alice, "pv"); !v.Priced || v.Price.String() != "0.1" && v.Price.String() != "0.10" ||
		!v.HasStoppedPrice || v.StoppedPrice.Cmp(ledger.MustDecimal("0.2")) != 0 || v.Currency != ledger.USD {
		t.Errorf("pv = %+v", v)
	}
	// Stopped for the second half of 30 days: 15 × 100 × 0.10/30 + 15 × 100 × 0.20/30.
	e.now = t0.Add(15 * 24 * time.Hour)
	e.say(alice, "/stop p1")
	e.now = t0.Add(30 * 24 * time.Hour)
	st = ledger.StatementAsOf(e.book(alice), e.now)
	for _, vc := range st.Volumes {
		if vc.Volume.Name == "pv" && vc.Charge.String() != "15.00" {
			t.Errorf("pv after 15 days running and 15 stopped = %s, want 15.00", vc.Charge)
		}
	}
	e.now = t0

	// A volume for a platform, without a rental.
	contains(t, e.say(alice, "/storage nv 500GB platform=runpod"), "$0.10/GB/month", "RunPod's profile")
	if v := volumeNamed(t, e, alice, "nv"); v.Platform != "runpod" || v.Currency != ledger.USD || !v.Priced || v.RentalID != 0 {
		t.Errorf("nv = %+v", v)
	}
	// Vast.ai's hosts set their own price: the volume stays UNPRICED.
	e.say(alice, "/rent v1 vast 4090 0.35/h")
	contains(t, e.say(alice, "/storage vv 100GB rental=v1"), "UNPRICED")
}

// TestCore_StoragePriceFromProfile_Chinese: the profile notes are in the
// user's language.
func TestCore_StoragePriceFromProfile_Chinese(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	u := e.update(alice, "/rent s1 autodl 4090 1.88元/小时")
	u.LangCode = "zh-hans"
	e.handle(u)
	contains(t, e.say(alice, "/storage sd1 200GB rental=s1"), "¥0.0066/GB/天", "AutoDL", "默认", "/undo")
	e.say(alice, "/rent e1 aws a10g 1.006/h")
	contains(t, e.say(alice, "/traffic e1 price=0.09/GB"), "每月免费 100GB", "AWS", "默认", "free=0")
	e.say(alice, "/rent p1 runpod 4090 0.69/h")
	contains(t, e.say(alice, "/storage pv 100GB rental=p1"), "$0.10/GB/月", "关机时 $0.20/GB/月")
}

// TestCore_TrafficAllowanceFromProfile: a traffic price on an AWS rental
// gets AWS's free 100 GB a month unless free= is written.
func TestCore_TrafficAllowanceFromProfile(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/rent e1 aws a10g 1.006/h")
	contains(t, e.say(alice, "/traffic e1 price=0.09/GB"), "e1", "$0.09/GB", "100GB free", "AWS's profile")
	if tr := rentalNamed(t, e, alice, "e1").Traffic; !tr.Priced || tr.FreeGB.String() != "100" || tr.Direction != ledger.Out {
		t.Errorf("e1 traffic = %+v", tr)
	}
	e.now = t0.Add(time.Hour)
	e.say(alice, "/traffic e1 150GB out")
	e.now = t0.Add(2 * time.Hour)
	st := ledger.StatementAsOf(e.book(alice), e.now)
	if len(st.Rentals) != 1 {
		t.Fatalf("statement rentals = %+v", st.Rentals)
	}
	if got := st.Rentals[0].Traffic.String(); got != "4.50" {
		t.Errorf("150GB out with 100 free at $0.09 = %s, want 4.50", got)
	}
	// free=0 means none; free=20 means 20.
	if got := e.say(alice, "/traffic e1 price=0.09/GB free=0"); strings.Contains(got, "profile") {
		t.Errorf("free=0 reported as the profile's: %q", got)
	}
	if tr := rentalNamed(t, e, alice, "e1").Traffic; !tr.FreeGB.IsZero() {
		t.Errorf("free=0: %+v", tr)
	}
	e.say(alice, "/traffic e1 price=0.09/GB free=20GB")
	if tr := rentalNamed(t, e, alice, "e1").Traffic; tr.FreeGB.String() != "20" {
		t.Errorf("free=20GB: %+v", tr)
	}
	// Vast.ai charges both directions by default.
	e.say(alice, "/rent v1 vast 4090 0.35/h")
	e.say(alice, "/traffic v1 price=0.02/GB")
	if tr := rentalNamed(t, e, alice, "v1").Traffic; tr.Direction != ledger.Both || !tr.FreeGB.IsZero() {
		t.Errorf("vast traffic = %+v", tr)
	}
}
