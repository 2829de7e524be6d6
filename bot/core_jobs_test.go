package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/perf"
)

// jobRuns returns the user's job runs from the store.
func (e *env) jobRuns(user int64) []ledger.JobRun {
	e.t.Helper()
	runs, err := e.db.JobRuns(context.Background(), user, "")
	if err != nil {
		e.t.Fatal(err)
	}
	return runs
}

// TestJobs_NameAndList: /job names a span of a rental as a run of a
// label and prices it as the rental's cost over the span (30 min at
// ¥1.88/h: ¥0.94); the same message again records nothing more; /job
// NAME lists the runs with their cost.
func TestJobs_NameAndList(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice, bob}})
	contains(t, e.say(alice, "/rent box1 autodl 4090 1.88/h"), "box1")
	e.now = t0.Add(2 * time.Hour) // 12:00 in Shanghai
	contains(t, e.say(alice, "/job box1"), "No job run on box1 yet", "gpuledger-agent run --label")

	got := e.say(alice, "/job box1 yolo-epoch 10:30 11:00")
	contains(t, got, "Recorded a run of <b>yolo-epoch</b> on box1", "10:30", "11:00", "¥0.94", "/compare yolo-epoch")
	runs := e.jobRuns(alice)
	if len(runs) != 1 || runs[0].Label != "yolo-epoch" || runs[0].Source != ledger.JobFromChat ||
		!runs[0].StartedAt.Equal(t0.Add(30*time.Minute)) || !runs[0].EndedAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("runs %+v", runs)
	}
	contains(t, e.say(alice, "/job box1 yolo-epoch 10:30 11:00"), "already recorded", "nothing changed")
	if n := len(e.jobRuns(alice)); n != 1 {
		t.Fatalf("the same run again stored %d runs", n)
	}

	// The agent wrapped two jobs without a label: the last one is named,
	// then there is none left to name.
	x := e.book(alice).Rentals[0]
	for _, r := range []ledger.JobRun{
		{RentalID: x.ID, UserID: alice, Command: "python old.py", StartedAt: t0.Add(5 * time.Minute), EndedAt: t0.Add(10 * time.Minute), Source: ledger.JobFromAgent},
		{RentalID: x.ID, UserID: alice, Command: "python train.py", StartedAt: t0.Add(70 * time.Minute), EndedAt: t0.Add(100 * time.Minute), Source: ledger.JobFromAgent},
	} {
		if _, _, err := e.db.AddJobRun(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	got = e.say(alice, "/job box1 mnist")
	contains(t, got, "<b>mnist</b> on box1", "11:10", "11:40", "¥0.94", "python train.py")
	contains(t, e.say(alice, "/job box1 mnist"), "already named mnist")
	if n := len(e.jobRuns(alice)); n != 4 {
		t.Fatalf("%d runs, want 2 named and 2 of the agent", n)
	}

	list := e.say(alice, "/job box1")
	contains(t, list, "Job runs on box1", "yolo-epoch", "mnist", "(no label)", "exit 0", "named in the chat", "¥0.94", "¥0.16")
	if strings.Index(list, "mnist") > strings.Index(list, "yolo-epoch") {
		t.Errorf("not newest first:\n%s", list)
	}
}

// TestJobs_BadInputChangesNothing: every bad /job is refused with what to
// write, and no run is stored; another user's rental is not found.
func TestJobs_BadInputChangesNothing(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice, bob}})
	contains(t, e.say(alice, "/rent box1 autodl 4090 1.88/h"), "box1")
	e.now = t0.Add(2 * time.Hour)
	x := e.book(alice).Rentals[0]
	if _, _, err := e.db.AddJobRun(context.Background(), ledger.JobRun{RentalID: x.ID, UserID: alice, StartedAt: t0.Add(5 * time.Minute),
		EndedAt: t0.Add(10 * time.Minute), ExitCode: 137, Source: ledger.JobFromAgent}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		user     int64
		in, want string
	}{
		{alice, "/job box1 yolo/epoch 10:30 11:00", "is not a job label"},
		{alice, "/job box1 " + strings.Repeat("y", 65) + " 10:30 11:00", "at most 64"},
		{alice, "/job box1 yolo 10:30", "needs both the start and the end"},
		{alice, "/job box1 yolo from=10:30", "needs both the start and the end"},
		{alice, "/job box1 yolo 11:00 10:30", "ends before it starts"},
		{alice, "/job box1 yolo 2026-10-01 10:00 2026-11-02 11:00", "longer than 31 days"},
		{alice, "/job box1 yolo 11:00 2026-11-02 13:00", "future"},
		{alice, "/job box1 yolo nonsense 11:00", "nonsense"},
		{alice, "/job box1 yolo 09:00 09:30", "before box1 started"},
		{alice, "/job box1 yolo 10:30 11:00 12:00", "in /job"},
		{alice, "/job nosuch yolo 10:30 11:00", "nosuch"},
		{alice, "/job box1 yolo", "failed (exit code 137)"},
		{alice, "/job", "/job needs a name"},
		{bob, "/job box1 yolo 10:30 11:00", "box1"},
		{bob, "/job box1", "box1"},
		{alice, "/compare yolo/x", "is not a job label"},
		{alice, "/compare a b", "in /compare"},
	} {
		got := e.say(tc.user, tc.in)
		contains(t, got, tc.want)
		if tc.user == bob && strings.Contains(got, "Job runs on") {
			t.Errorf("bob reads alice's rental: %q", got)
		}
	}
	if runs := e.jobRuns(alice); len(runs) != 1 || runs[0].Label != "" {
		t.Fatalf("bad input stored runs: %+v", runs)
	}
	if runs := e.jobRuns(bob); len(runs) != 0 {
		t.Fatalf("bob has runs: %+v", runs)
	}

	// A released rental takes no run after its release.
	contains(t, e.say(alice, "/release box1 at 11:00"), "box1")
	contains(t, e.say(alice, "/job box1 yolo 10:30 11:30"), "after box1 was released")
	if n := len(e.jobRuns(alice)); n != 1 {
		t.Fatalf("%d runs", n)
	}
}

// TestCompare_Chat: /compare with nothing to compare says how to get a
// table; with a bench and labelled runs it shows the price of a
// tensor-TFLOP-hour (¥1.88 ÷ 152 = ¥0.0124) and each label's money per
// run; /compare LABEL shows one label, and a mistyped one the nearest.
func TestCompare_Chat(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice, bob}})
	contains(t, e.say(alice, "/compare"), "Nothing to compare yet", "gpuledger-agent run --label", "/agent")
	contains(t, e.say(alice, "/compare yolo-epoch"), "no job labelled yolo-epoch", "nor any labelled job")

	contains(t, e.say(alice, "/rent box1 autodl 4090 1.88/h"), "box1")
	x := e.book(alice).Rentals[0]
	bench := perf.Bench{Source: "simulate", GPUs: []perf.GPU{{Name: "NVIDIA GeForce RTX 4090", Model: "RTX 4090", BF16TFLOPS: 152,
		MemGBps: 950, H2DGBps: 24, PCIeGen: 4, PCIeGenMax: 4, PCIeWidth: 16, PCIeWidthMax: 16}}}
	if _, _, err := e.db.AddBench(context.Background(), ledger.BenchRecord{RentalID: x.ID, UserID: alice, ReportID: "r1", At: t0.Add(time.Minute), Bench: bench}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.SetFirstWork(context.Background(), x.ID, t0.Add(31*time.Minute)); err != nil {
		t.Fatal(err)
	}
	e.now = t0.Add(3 * time.Hour)
	contains(t, e.say(alice, "/job box1 yolo-epoch 10:30 11:00"), "¥0.94")
	contains(t, e.say(alice, "/job box1 yolo-epoch 11:00 11:40"), "¥1.25")
	if _, _, err := e.db.AddJobRun(context.Background(), ledger.JobRun{RentalID: x.ID, UserID: alice, Label: "yolo-epoch", StartedAt: t0.Add(2 * time.Hour),
		EndedAt: t0.Add(2*time.Hour + 5*time.Minute), ExitCode: 1, Source: ledger.JobFromAgent}); err != nil {
		t.Fatal(err)
	}

	got := e.say(alice, "/compare")
	contains(t, got, "<b>RTX 4090</b> on AutoDL", "tensor 152 TFLOPS", "memory 950 GB/s", "PCIe 4.0 x16", "¥1.88/GPU-hour",
		"<b>¥0.0124</b> per tensor-TFLOP-hour", "(1 rented, 1 benched)",
		"Setup tax", "AutoDL: 31m", "¥0.97", // 31 min at ¥1.88/h
		"<b>yolo-epoch</b>", "35m", "¥1.10", "rests on 2 runs", "1 failed, not counted") // median of ¥0.94 and ¥1.25: ¥1.095
	one := e.say(alice, "/compare yolo-epoch")
	contains(t, one, "<b>yolo-epoch</b>", "1. RTX 4090 on AutoDL")
	if strings.Contains(one, "Setup tax") {
		t.Errorf("one label's table shows the cards:\n%s", one)
	}
	contains(t, e.say(alice, "/compare yolo-epoc"), "did you mean yolo-epoch")

	contains(t, e.say(bob, "/compare"), "Nothing to compare yet")
	contains(t, e.say(bob, "/compare yolo-epoch"), "no job labelled yolo-epoch")

	e.say(alice, "/settings lang=zh")
	contains(t, e.say(alice, "/compare"), "花的钱换来了什么", "AutoDL 上的 <b>RTX 4090</b>", "每 TFLOP·小时张量算力 <b>¥0.0124</b>")
}

// TestCompare_Cut: a table longer than a Telegram message is cut with
// how much was left out.
func TestCompare_Cut(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	contains(t, e.say(alice, "/rent box1 autodl 4090 1.88/h"), "box1")
	x := e.book(alice).Rentals[0]
	for i := range 120 {
		l := "label-" + strings.Repeat("x", 40) + string(rune('a'+i%26)) + string(rune('a'+i/26))
		if _, _, err := e.db.AddJobRun(context.Background(), ledger.JobRun{RentalID: x.ID, UserID: alice, Label: l, StartedAt: t0.Add(time.Duration(i) * time.Minute),
			EndedAt: t0.Add(time.Duration(i)*time.Minute + 30*time.Second), Source: ledger.JobFromAgent}); err != nil {
			t.Fatal(err)
		}
	}
	e.now = t0.Add(3 * time.Hour)
	got := e.say(alice, "/compare")
	if n := len([]rune(got)); n > 4096 {
		t.Errorf("reply of %d characters", n)
	}
	contains(t, got, "more lines")
}
