package bot_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
)

// TestCore_VolumePriceFromTime: /storage VOL price=… at TIME bills the
// volume at the old price before TIME and the new one after; without at
// it corrects the first price only; a time before the volume's creation
// is refused in the user's language and changes nothing; /undo removes
// the change exactly.
func TestCore_VolumePriceFromTime(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	// 200 GB, 50 free, ¥0.0066/GB/day from 2026-11-02 10:00 Shanghai.
	contains(t, e.say(alice, "/storage data1 200GB 0.0066/GB/day free=50GB platform=autodl"), "✓", "data1")
	e.now = t0.Add(30 * 24 * time.Hour)
	storage := func(t *testing.T, want string) {
		t.Helper()
		st := e.statement(alice)
		if len(st.Volumes) != 1 || st.Volumes[0].Charge.String() != want {
			t.Fatalf("storage = %+v, want %s", st.Volumes, want)
		}
	}
	storage(t, "29.70")

	// 15 days × 150 GB × 0.0066, then 15 days × 150 GB × 0.0132.
	contains(t, e.say(alice, "/storage data1 price=0.0132/GB/day at 2026-11-17 10:00"),
		"✓", "data1", "¥0.0132/GB/day", "Nov 17 10:00")
	storage(t, "44.55")
	// Without at: the first price, up to the change.
	contains(t, e.say(alice, "/storage data1 price=0.0099/GB/day"), "✓", "data1", "¥0.0099/GB/day", "Nov 17 10:00")
	storage(t, "51.98")
	contains(t, e.say(alice, "/undo"), "undone", "volume price", "data1")
	storage(t, "44.55")
	contains(t, e.say(alice, "/undo"), "undone", "volume price", "data1")
	storage(t, "29.70")

	contains(t, e.say(alice, "/storage data1 price=0.01/GB/day at 2026-11-01 10:00"), "✗", "before volume data1 was created")
	storage(t, "29.70")
	e.say(alice, "/settings lang=zh")
	contains(t, e.say(alice, "/storage data1 price=0.01/GB/day at 2026-11-01 10:00"), "✗", "早于存储卷 data1 的创建时间")
	storage(t, "29.70")
}

// TestCore_VolumePriceFromTime_StoppedRate: a RunPod volume carries the
// profile's stopped rate; a price from a time on is one rate in every
// state from then, and the reply says the stopped rate ends there.
func TestCore_VolumePriceFromTime_StoppedRate(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/rent p1 runpod 4090 0.69/h")
	contains(t, e.say(alice, "/storage pv 100GB rental=p1"), "$0.20/GB/month while stopped")
	e.now = t0.Add(10 * 24 * time.Hour)
	contains(t, e.say(alice, "/stop p1"), "✓")
	e.now = t0.Add(30 * 24 * time.Hour)
	// 10 days running at 0.10, 5 stopped at 0.20, then 15 at 0.06 in every
	// state, over 100 GB a 30-day month: 3.33… + 3.33… + 3.00.
	contains(t, e.say(alice, "/storage pv price=0.06/GB/month at 2026-11-17 10:00"), "✓", "pv", "$0.06/GB/month", "stopped rate ends")
	if st := e.statement(alice); len(st.Volumes) != 1 || st.Volumes[0].Charge.String() != "9.67" {
		t.Fatalf("storage = %+v, want 9.67", st.Volumes)
	}
}

// TestCore_VolumeStoppedRate: stopped=PRICE gives a volume its rate while
// its rental is stopped, at creation and with a price change from a time
// on (a tier change sets both rates); a bare amount takes the price's
// unit, another unit or no price is refused and changes nothing.
func TestCore_VolumeStoppedRate(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/rent p1 runpod 4090 0.69/h")
	contains(t, e.say(alice, "/storage pv 100GB 0.10/GB/month stopped=0.20/GB/month rental=p1"), "✓", "$0.20/GB/month while stopped")
	e.now = t0.Add(10 * 24 * time.Hour)
	contains(t, e.say(alice, "/stop p1"), "✓")
	e.now = t0.Add(30 * 24 * time.Hour)
	for _, bad := range []string{
		"/storage pv price=0.07/GB/month stopped=0.14/GB/day at 2026-11-17 10:00",
		"/storage pv stopped=0.14",
		"/storage pv resize 200GB stopped=0.14",
	} {
		contains(t, e.say(alice, bad), "✗")
	}
	// 10 days running at 0.10, 5 stopped at 0.20, 15 stopped at 0.14, over
	// 100 GB a 30-day month: 3.33… + 3.33… + 7.00.
	got := e.say(alice, "/storage pv price=0.07/GB/month stopped=0.14 at 2026-11-17 10:00")
	contains(t, got, "✓", "$0.07/GB/month", "$0.14/GB/month while stopped")
	if strings.Contains(got, "stopped rate ends") {
		t.Errorf("reply %q says the stopped rate ends, but the change has one", got)
	}
	if st := e.statement(alice); len(st.Volumes) != 1 || st.Volumes[0].Charge.String() != "13.67" {
		t.Fatalf("storage = %+v, want 13.67", st.Volumes)
	}
}

// TestCore_TrafficPriceFromTime: /traffic NAME price=… at TIME bills the
// GB used before TIME at the old price and after it at the new one, on a
// released rental too; free= and direction= are the rental's terms and
// refused with at; a time before the start is refused in the user's
// language; /undo removes the change.
func TestCore_TrafficPriceFromTime(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/rent box1 autodl 4090 2/h")
	contains(t, e.say(alice, "/traffic box1 price=0.5/GB"), "✓")
	e.now = t0.Add(time.Hour)
	e.say(alice, "/traffic box1 10GB out")
	e.now = t0.Add(3 * time.Hour)
	e.say(alice, "/traffic box1 20GB out")
	e.now = t0.Add(4 * time.Hour)
	e.say(alice, "/release box1")
	traffic := func(t *testing.T, want string) {
		t.Helper()
		st := e.statement(alice)
		if len(st.Rentals) != 1 || st.Rentals[0].Traffic.String() != want {
			t.Fatalf("traffic = %+v, want %s", st.Rentals, want)
		}
	}
	traffic(t, "15.00")
	contains(t, e.say(alice, "/traffic box1 price=0.8/GB at 12:00"), "✓", "box1", "¥0.80", "12:00")
	traffic(t, "21.00")
	contains(t, e.say(alice, "/traffic box1 price=0.8/GB free=5GB at 12:00"), "✗")
	contains(t, e.say(alice, "/traffic box1 price=0.8/GB at 09:00"), "✗", "before box1 started")
	traffic(t, "21.00")
	// The message before /undo was refused: it asks first, naming the change.
	contains(t, e.undoConfirmed(alice, "/undo"), "undone", "traffic price", "box1")
	traffic(t, "15.00")
	e.say(alice, "/settings lang=zh")
	contains(t, e.say(alice, "/traffic box1 price=0.8/GB at 09:00"), "✗", "早于 box1 的开始时间")
}
