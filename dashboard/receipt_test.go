package dashboard_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/dashboard"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/perf"
)

// bench4090 is an RTX 4090 as the bench measures a healthy one, with a
// tensor figure of 152 TFLOPS: at box's ¥1.88/h that is 1.88 ÷ 152 =
// ¥0.012368… per tensor-TFLOP-hour.
func bench4090() perf.Bench {
	off := false
	return perf.Bench{StartedAt: t0.Add(-time.Hour), WallSeconds: 1.2, GPUSeconds: 0.9, Source: "cuda",
		GPUs: []perf.GPU{{Index: 0, Name: "NVIDIA GeForce RTX 4090", Model: "RTX 4090", FP32TFLOPS: 80, BF16TFLOPS: 152, FP16TFLOPS: 150,
			MemGBps: 950, H2DGBps: 24.5, D2HGBps: 25.1, MemoryTotalMiB: 24564, PCIeGen: 4, PCIeGenMax: 4, PCIeWidth: 16, PCIeWidthMax: 16,
			PowerLimitW: 450, PowerDefaultW: 450, SMClockMaxMHz: 2520, ECC: &off}},
		Host: perf.Host{CPUCores: 16, DiskWriteMBps: 1800, DiskReadMBps: 2100},
	}
}

// addBench stores b as rental's bench received at, as the hub does.
func (e *env) addBench(user, rental int64, id string, b perf.Bench, bounded ...string) {
	e.t.Helper()
	if _, _, err := e.db.AddBench(context.Background(), ledger.BenchRecord{RentalID: rental, UserID: user, ReportID: id, At: e.now.Add(-time.Hour), Bench: b, Bounded: bounded}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) rentalPage(tok string, id int64) dashboard.RentalPage {
	e.t.Helper()
	var rp dashboard.RentalPage
	if rec := e.get(tok, dashboard.PathRental+"?id="+strconv.FormatInt(id, 10), &rp); rec.Code != http.StatusOK {
		e.t.Fatalf("rental %d: %d %s", id, rec.Code, rec.Body)
	}
	return rp
}

// TestRental_Receipt: the rental's page carries its receipt: the
// headline, every figure with its label and unit and the 4090's
// reference, said to be the agent's claim, and the price per
// tensor-TFLOP-hour computed exactly from the rental's price (1.88 ÷ 152).
// Its first work prices the setup tax (31 minutes at ¥1.88/h = ¥0.97).
func TestRental_Receipt(t *testing.T) {
	e := newEnv(t, nil)
	box, _ := e.fill(1)
	e.addBench(1, box.ID, "r1", bench4090())
	if _, err := e.db.SetFirstWork(context.Background(), box.ID, box.StartedAt().Add(31*time.Minute)); err != nil {
		t.Fatal(err)
	}
	rp := e.rentalPage(e.signIn(1), box.ID)
	rc := rp.Receipt
	if rc == nil {
		t.Fatalf("no receipt on box's page (no_receipt %q)", rp.NoReceipt)
	}
	if rc.Headline != "RTX 4090 on AutoDL (box)" {
		t.Errorf("headline %q", rc.Headline)
	}
	if rc.ClaimedBy != "agent" || !strings.Contains(rc.Claim, "agent") || !strings.Contains(rc.Claim, "claim") {
		t.Errorf("claimed by %q, claim %q: want the agent's claim said so", rc.ClaimedBy, rc.Claim)
	}
	if rc.TensorTFLOPS != 152 {
		t.Errorf("tensor %v TFLOPS, want 152 (the larger of bf16 and fp16)", rc.TensorTFLOPS)
	}
	if rc.PricePerTFLOPHour == nil || *rc.PricePerTFLOPHour != "0.012368" || rc.PricePerTFLOPHourText != "¥0.0124 per tensor-TFLOP-hour" {
		t.Errorf("price per tensor-TFLOP-hour %v %q; want 0.012368 (1.88 ÷ 152) shown ¥0.0124", rc.PricePerTFLOPHour, rc.PricePerTFLOPHourText)
	}
	if rc.PriceText != "¥1.88/h" {
		t.Errorf("price divided %q, want ¥1.88/h", rc.PriceText)
	}
	if len(rc.GPUs) != 1 || rc.GPUs[0].Reference != "RTX 4090" {
		t.Fatalf("gpus %+v; want one compared with the RTX 4090's reference", rc.GPUs)
	}
	figs := map[string]dashboard.ReceiptFigure{}
	for _, f := range rc.GPUs[0].Figures {
		figs[f.Name] = f
	}
	for name, want := range map[string]string{"bf16_tflops": "152 TFLOPS", "fp32_tflops": "80.0 TFLOPS", "mem_gbps": "950 GB/s",
		"h2d_gbps": "24.5 GB/s", "pcie": "4.0 x16 of 4.0 x16", "power_limit_w": "450 / 450 W"} {
		if figs[name].Text != want || !figs[name].Measured {
			t.Errorf("%s shown %q (measured %v), want %q", name, figs[name].Text, figs[name].Measured, want)
		}
	}
	if m := figs["mem_gbps"]; m.Reference == 0 || m.RefKind == "" {
		t.Errorf("memory bandwidth without its reference: %+v", m)
	}
	host := map[string]string{}
	for _, f := range rc.Host {
		host[f.Name] = f.Text
	}
	if host["disk_write_mbps"] != "1.8 GB/s" || host["cpu_cores"] != "16 cores" || host["download_mbps"] != "not measured" {
		t.Errorf("host %v", host)
	}
	if rc.SetupTax == nil || rc.SetupTax.Seconds != 31*60 || rc.SetupTax.Money == nil || *rc.SetupTax.Money != "0.97" ||
		rc.SetupTax.Text != "¥0.97 before work started: 31 min" {
		t.Errorf("setup tax %+v; want 31 min, ¥0.97 (1.88 × 31/60)", rc.SetupTax)
	}
}

// TestRental_ReceiptLabelsEveryFigure: every figure of a receipt, GPU or
// host, measured or not, comes with a label and a text in the user's
// language; a Chinese user's labels are Chinese.
func TestRental_ReceiptLabelsEveryFigure(t *testing.T) {
	labels := map[string]map[string]string{}
	for _, lang := range []string{"en", "zh"} {
		e := newEnv(t, nil)
		box, _ := e.fill(1)
		u, _ := e.db.User(context.Background(), 1)
		u.Lang = lang
		if _, err := e.db.UpdateUser(context.Background(), ledger.Action{UserID: 1, At: e.now}, u); err != nil {
			t.Fatal(err)
		}
		b := bench4090()
		b.GPUs[0].FP16TFLOPS = 0 // not measured: still labelled
		e.addBench(1, box.ID, "r1", b)
		rc := e.rentalPage(e.signIn(1), box.ID).Receipt
		if rc == nil {
			t.Fatalf("%s: no receipt", lang)
		}
		labels[lang] = map[string]string{}
		all := append(append([]dashboard.ReceiptFigure{}, rc.GPUs[0].Figures...), rc.Host...)
		if len(all) < 15 {
			t.Errorf("%s: %d figures, want every figure of the bench", lang, len(all))
		}
		for _, f := range all {
			if f.Name == "" || f.Label == "" || f.Text == "" {
				t.Errorf("%s: unlabelled figure %+v", lang, f)
			}
			if f.Measured && f.Unit == "" && f.Name != "ecc" {
				t.Errorf("%s: figure %s without a unit", lang, f.Name)
			}
			labels[lang][f.Name] = f.Label + "|" + f.Text
		}
		if rc.Claim == "" || rc.Headline == "" || rc.PricePerTFLOPHourText == "" {
			t.Errorf("%s: claim %q, headline %q, per unit %q", lang, rc.Claim, rc.Headline, rc.PricePerTFLOPHourText)
		}
	}
	for _, name := range []string{"bf16_tflops", "mem_gbps", "pcie", "power_limit_w", "disk_write_mbps", "cpu_cores", "fp16_tflops"} {
		if labels["en"][name] == labels["zh"][name] {
			t.Errorf("%s reads the same in English and Chinese: %q", name, labels["en"][name])
		}
	}
	if !strings.Contains(labels["zh"]["fp16_tflops"], "未测得") {
		t.Errorf("zh fp16 not measured: %q", labels["zh"]["fp16_tflops"])
	}
}

// TestRental_ReceiptBounded: a figure the hub did not believe is shown
// not measured, with a note naming it, and there is no price per unit
// when the tensor figure was the one bounded.
func TestRental_ReceiptBounded(t *testing.T) {
	e := newEnv(t, nil)
	box, _ := e.fill(1)
	b := bench4090()
	b.GPUs[0].BF16TFLOPS, b.GPUs[0].FP16TFLOPS = 0, 0                                // as perf.Bound left a claim of 1e9
	e.addBench(1, box.ID, "forged", b, "gpus[0].bf16_tflops", "gpus[0].fp16_tflops") // as the hub names them
	rc := e.rentalPage(e.signIn(1), box.ID).Receipt
	if rc == nil {
		t.Fatal("no receipt")
	}
	if rc.PricePerTFLOPHour != nil || !strings.Contains(rc.PricePerTFLOPHourText, "no tensor figure") {
		t.Errorf("per unit %v %q; want none: no tensor figure", rc.PricePerTFLOPHour, rc.PricePerTFLOPHourText)
	}
	for _, f := range rc.GPUs[0].Figures {
		if f.Name == "bf16_tflops" && (f.Measured || f.Text != "not measured") {
			t.Errorf("bounded bf16 shown %+v", f)
		}
	}
	var named int
	for _, s := range rc.Skipped {
		if strings.HasSuffix(s.Code, "_tflops") && s.GPU == 0 && strings.HasPrefix(s.Text, "Tensor (") && strings.Contains(s.Text, "did not believe") {
			named++
		}
	}
	if named != 2 || len(rc.Bounded) != 2 {
		t.Errorf("skipped %+v, bounded %v; want both bounded figures named", rc.Skipped, rc.Bounded)
	}
}

// TestRental_ReceiptOwnOnly: another user's rental with a bench is not
// found (404, as if it did not exist), and a rental without a bench has
// no receipt and says why.
func TestRental_ReceiptOwnOnly(t *testing.T) {
	e := newEnv(t, nil)
	box, _ := e.fill(1)
	e.addBench(1, box.ID, "r1", bench4090())
	mine, _ := e.fill(2)
	tok2 := e.signIn(2)
	rec := e.get(tok2, dashboard.PathRental+"?id="+strconv.FormatInt(box.ID, 10), nil)
	refusal(t, rec, http.StatusNotFound, "not_found", strconv.FormatInt(box.ID, 10))
	if strings.Contains(rec.Body.String(), "4090") || strings.Contains(rec.Body.String(), "receipt") {
		t.Errorf("the refusal tells of the other user's receipt: %s", rec.Body)
	}
	rp := e.rentalPage(tok2, mine.ID)
	if rp.Receipt != nil || !strings.Contains(rp.NoReceipt, "gpuledger-agent bench") {
		t.Errorf("user 2's box without a bench: receipt %+v, no_receipt %q", rp.Receipt, rp.NoReceipt)
	}
	raw := e.get(tok2, dashboard.PathRental+"?id="+strconv.FormatInt(mine.ID, 10), nil).Body.Bytes()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if v, ok := m["receipt"]; !ok || v != nil {
		t.Errorf("receipt = %v (present %v), want null", v, ok)
	}
}

// TestRental_ReceiptNothingMeasured: a bench that could open no GPU still
// makes a receipt: the host's figures, what was not measured and the
// agent's reason, and no price per unit of work (never a guess).
func TestRental_ReceiptNothingMeasured(t *testing.T) {
	e := newEnv(t, nil)
	box, _ := e.fill(1)
	why := "no CUDA driver: libcuda.so.1 not found"
	e.addBench(1, box.ID, "none", perf.Bench{StartedAt: t0, Source: "none", Host: perf.Host{CPUCores: 8},
		Skipped: []perf.Skip{{What: "gpu", GPU: -1, Why: why}}})
	rc := e.rentalPage(e.signIn(1), box.ID).Receipt
	if rc == nil {
		t.Fatal("no receipt for a bench that measured no GPU")
	}
	if rc.Source != "none" || len(rc.GPUs) != 0 || rc.Headline != "RTX 4090 on AutoDL (box)" {
		t.Errorf("source %q, %d GPUs, headline %q; want none, 0 and the rental's own GPU", rc.Source, len(rc.GPUs), rc.Headline)
	}
	if len(rc.Skipped) != 1 || rc.Skipped[0].Text != why {
		t.Errorf("skipped %+v; want the agent's reason %q", rc.Skipped, why)
	}
	if rc.PricePerTFLOPHour != nil || !strings.Contains(rc.PricePerTFLOPHourText, "no tensor figure") {
		t.Errorf("per unit %v %q; want none", rc.PricePerTFLOPHour, rc.PricePerTFLOPHourText)
	}
	for _, f := range rc.Host {
		if f.Name == "cpu_cores" && f.Text != "8 cores" {
			t.Errorf("cores %q, want 8 cores", f.Text)
		}
	}
}
