package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/perf"
)

// receiptBench4090 is an RTX 4090's bench: 152 tensor TFLOPS, so ¥1.88/h
// is ¥0.0124 per tensor-TFLOP-hour (1.88 ÷ 152 = 0.012368…).
func receiptBench4090() perf.Bench {
	return perf.Bench{StartedAt: t0, WallSeconds: 1.2, GPUSeconds: 0.8, Source: "simulate",
		GPUs: []perf.GPU{{Index: 0, Name: "NVIDIA GeForce RTX 4090", Model: "RTX 4090", BF16TFLOPS: 152, FP16TFLOPS: 150,
			FP32TFLOPS: 80, MemGBps: 950, H2DGBps: 24, D2HGBps: 25, PCIeGen: 4, PCIeGenMax: 4, PCIeWidth: 16, PCIeWidthMax: 16,
			PowerLimitW: 450, PowerDefaultW: 450}},
		Host:    perf.Host{CPUCores: 16, DiskWriteMBps: 1800, DiskReadMBps: 2100},
		Skipped: []perf.Skip{{What: "download_mbps", GPU: -1, Why: "no download URL set"}}}
}

// rentalNamed returns the user's rental called name.
func (e *env) rentalNamed(user int64, name string) *ledger.Rental {
	e.t.Helper()
	r, err := e.db.Rental(context.Background(), user, name)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// TestReceipt: /receipt NAME shows the whole receipt, by hand: box1 runs
// per second at ¥1.88/h from 10:00; its agent benched at 10:02; its
// first work was at 10:31 (31 min: ¥0.9713 → ¥0.97); a labelled job ran
// 10:40-10:52 (12 min: ¥0.376 → ¥0.38); read at 11:00 (¥1.88 so far).
// It still shows after the release.
func TestReceipt(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice, bob}})
	e.say(alice, "/rent box1 autodl 4090 1.88/h")
	r := e.rentalNamed(alice, "box1")
	if _, _, err := e.db.AddBench(ctx, ledger.BenchRecord{RentalID: r.ID, UserID: alice, ReportID: "r1", At: t0.Add(2 * time.Minute), Bench: receiptBench4090()}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.SetFirstWork(ctx, r.ID, t0.Add(31*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.db.AddJobRun(ctx, ledger.JobRun{RentalID: r.ID, UserID: alice, Label: "yolo-epoch", Command: "python train.py",
		StartedAt: t0.Add(40 * time.Minute), EndedAt: t0.Add(52 * time.Minute), Source: ledger.JobFromAgent}); err != nil {
		t.Fatal(err)
	}
	e.now = t0.Add(time.Hour)
	got := e.say(alice, "/receipt box1")
	contains(t, got, "<b>Receipt of box1</b> · RTX 4090 on AutoDL",
		"Measured by the agent at 10:02 (its claim",
		"tensor bf16 152 TFLOPS", "tensor fp16 150 TFLOPS", "FP32 80 TFLOPS", "memory 0.95 TB/s", "host→device 24 GB/s",
		"PCIe 4.0 x16 24 GB/s", "power 450/450 W", "disk write 1.8 GB/s, read 2.1 GB/s", "16 cores",
		"Not measured: download (no download URL set)",
		"Price: ¥1.88/h → ¥0.0124 per tensor-TFLOP-hour",
		"So far: ¥1.88",
		"Setup tax: ¥0.97 before work started: 31m",
		"yolo-epoch", "12m · ¥0.38", "exit 0")

	e.say(alice, "/release box1")
	e.now = t0.Add(2 * time.Hour)
	got = e.say(alice, "/receipt box1")
	contains(t, got, "<b>Receipt of box1</b>", "¥0.0124 per tensor-TFLOP-hour", "So far: ¥1.88")

	e.say(alice, "/settings lang=zh")
	got = e.say(alice, "/receipt box1")
	contains(t, got, "box1 的测速收据", "每张量 TFLOP·小时 ¥0.0124", "准备成本：开始工作前花了 ¥0.97", "退出码 0")
}

// TestReceipt_NotFound: a name nobody has and another user's rental get
// the same answer, which says nothing of the other's rental.
func TestReceipt_NotFound(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice, bob}})
	e.say(alice, "/rent box1 autodl 4090 1.88/h")
	r := e.rentalNamed(alice, "box1")
	if _, _, err := e.db.AddBench(ctx, ledger.BenchRecord{RentalID: r.ID, UserID: alice, ReportID: "r1", At: t0, Bench: receiptBench4090()}); err != nil {
		t.Fatal(err)
	}
	other := e.say(bob, "/receipt box1")
	none := e.say(bob, "/receipt nosuch")
	if strings.Replace(none, "nosuch", "box1", -1) != other {
		t.Errorf("another's rental %q, a name nobody has %q: they differ", other, none)
	}
	contains(t, other, "no rental called box1")
	for _, leak := range []string{"TFLOPS", "AutoDL", "¥"} {
		if strings.Contains(other, leak) {
			t.Errorf("bob's answer shows %q of alice's rental: %q", leak, other)
		}
	}
	if got := e.say(alice, "/receipt"); !strings.Contains(got, "/receipt") {
		t.Errorf("/receipt without a name: %q", got)
	}
}

// TestReceipt_NoBench: without a bench /receipt says why and how to get
// one: the agent has not sent one, benches are off, or it was released.
func TestReceipt_NoBench(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/rent box1 autodl 4090 1.88/h")
	contains(t, e.say(alice, "/receipt box1"), "no receipt yet", "gpuledger-agent bench")
	e.say(alice, "/settings bench=off")
	contains(t, e.say(alice, "/receipt box1"), "benches are off", "/settings bench=on")
	e.say(alice, "/settings bench=on")
	e.say(alice, "/release box1")
	contains(t, e.say(alice, "/receipt box1"), "released without a receipt")
}

// TestSettings_Bench: bench=off and on are stored and shown; a bad value
// is refused in both languages and changes nothing.
func TestSettings_Bench(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	benchOff := func() bool {
		u, err := e.db.User(ctx, alice)
		if err != nil {
			t.Fatal(err)
		}
		return u.Settings.BenchOff
	}
	contains(t, e.say(alice, "/settings"), "bench=on")
	contains(t, e.say(alice, "/settings bench=off"), "✓", "bench=off")
	if !benchOff() {
		t.Fatal("bench=off not stored")
	}
	contains(t, e.say(alice, "/settings bench=maybe"), "maybe", "is not on or off: write bench=on or bench=off")
	if !benchOff() {
		t.Fatal("a refused bench= changed the setting")
	}
	contains(t, e.say(alice, "/settings bench=on"), "bench=on")
	if benchOff() {
		t.Fatal("bench=on not stored")
	}
	e.say(alice, "/settings lang=zh")
	contains(t, e.say(alice, "/设置 bench=也许"), "也许", "不是 on 或 off：请写 bench=on 或 bench=off")
	contains(t, e.say(alice, "/设置 bench=关闭"), "bench=关闭")
	if !benchOff() {
		t.Fatal("bench=关闭 not stored")
	}
}

func TestParse_Receipt(t *testing.T) {
	for _, in := range []string{"/receipt box1", "/收据 box1", "/receipt name=box1"} {
		c, err := command.Parse(in, t0, time.UTC)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if rc, ok := c.(command.ReceiptCmd); !ok || rc.Name != "box1" {
			t.Errorf("%q: %#v", in, c)
		}
	}
	for _, in := range []string{"/receipt", "/receipt a b", "/receipt box1 name=box2"} {
		if _, err := command.Parse(in, t0, time.UTC); err == nil {
			t.Errorf("%q parsed", in)
		}
	}
}
