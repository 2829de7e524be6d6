package ledger

import (
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/perf"
)

// A slow card's money at stake is one paid GPU's share, not the share of
// every card the bench listed: a host that shows its other tenants'
// cards must not shrink it.
func TestBuildReceipt_WasteSharePerPaidGPU(t *testing.T) {
	start := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	r := &Rental{ID: 1, UserID: 7, Name: "h1", Platform: "runpod", GPU: "H200", GPUCount: 1, Mode: PerSecond,
		Priced: true, Price: Price{Amount: MustDecimal("3.60"), Unit: UnitHour}, Currency: USD,
		Events: []Event{{Kind: EventStart, At: start}}}
	slow := perf.GPU{Index: 0, Name: "NVIDIA H200", Model: "H200", BF16TFLOPS: 486.45, FP16TFLOPS: 490}
	other := perf.GPU{Index: 1, Name: "NVIDIA H200", Model: "H200", BF16TFLOPS: 648.6, FP16TFLOPS: 653.4}
	bench := perf.Bench{Source: "cuda", GPUs: []perf.GPU{slow, other, other, other, other, other, other, other}}
	for i := range bench.GPUs {
		bench.GPUs[i].Index = i
	}
	rc := BuildReceipt(ReceiptInput{Book: &Book{Rentals: []*Rental{r}}, Rental: r,
		Benches: []BenchRecord{{ID: 1, RentalID: 1, UserID: 7, At: start.Add(time.Minute), Bench: bench}},
		Now:     start.Add(time.Hour)})
	var got *ReceiptWarning
	for i, w := range rc.Warnings {
		if w.Code == perf.WarnSlowTensor && w.GPU == 0 {
			got = &rc.Warnings[i]
		}
	}
	if got == nil {
		t.Fatalf("no slow-tensor warning on GPU 0: %+v", rc.Warnings)
	}
	// One paid GPU: its share is the whole $3.60/h, not $0.45 (3.60 ÷ 8).
	if got.Share.String() != "3.60" {
		t.Errorf("share = %s, want 3.60 (the one GPU paid for)", got.Share.String())
	}
}

// A setup tax and a job over a span whose disk has no price are marked
// partial: the money shown is the compute's, and /receipt says so as
// /job does, rather than calling it the whole cost.
func TestBuildReceipt_PartialSpans(t *testing.T) {
	start := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	r := &Rental{ID: 1, UserID: 7, Name: "box1", Platform: "vast", GPU: "RTX 4090", GPUCount: 1, Mode: PerSecond,
		Priced: true, Price: Price{Amount: MustDecimal("0.60"), Unit: UnitHour}, Currency: USD,
		Events: []Event{{Kind: EventStart, At: start}}}
	b := &Book{Rentals: []*Rental{r}, Volumes: []*Volume{{ID: 1, Name: "data", RentalID: 1, Platform: "vast", Currency: USD,
		Events: []VolumeEvent{{Kind: VolumeCreate, At: start, SizeGB: MustDecimal("500")}}}}}
	run := JobRun{ID: 1, RentalID: 1, UserID: 7, Label: "e", StartedAt: start.Add(time.Hour), EndedAt: start.Add(2 * time.Hour), Source: JobFromChat}
	rc := BuildReceipt(ReceiptInput{Book: b, Rental: r, FirstWork: start.Add(30 * time.Minute), Jobs: []JobRun{run},
		Now: start.Add(3 * time.Hour)})
	if rc.SetupTax == nil || !rc.SetupTax.Priced || !rc.SetupTax.Partial || rc.SetupTax.Money.String() != "0.30" {
		t.Errorf("setup tax %+v, want $0.30 of compute, marked partial (the disk has no price)", rc.SetupTax)
	}
	if len(rc.Jobs) != 1 || !rc.Jobs[0].Priced || !rc.Jobs[0].Partial || rc.Jobs[0].Cost.String() != "0.60" {
		t.Errorf("jobs %+v, want one of $0.60 of compute, marked partial", rc.Jobs)
	}
}
