package view_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

func TestWayCatalog(t *testing.T) {
	c := view.WayCatalog()
	for _, err := range c.Check() {
		t.Error(err)
	}
	for _, k := range append(ledger.CorroborateKeys(), ledger.WayWhyMismatch, ledger.WayWhyAsked, ledger.WayWhyKeptOff) {
		if _, ok := c[k]; !ok {
			t.Errorf("no text for %s", k)
		}
	}
}

// TestWayEvidence: the decision log's reason is worded again in the
// reader's language when /why is read.
func TestWayEvidence(t *testing.T) {
	w := ledger.AutoWay{Kind: ledger.WayAsk, Why: ledger.WayWhyMismatch, Platform: "runpod", PlatformID: "pod-1",
		Said: ledger.HostFacts{GPU: "RTX 4090", GPUCount: 1}, Listed: ledger.HostFacts{GPU: "A100", GPUCount: 1}}
	m := view.WayEvidence("box1", w)
	for lang, want := range map[string]string{
		"en": "the agent reporting for box1 contradicts RunPod's list: the agent said 1× RTX 4090, RunPod lists 1× A100",
		"zh": "为 box1 上报的代理与 RunPod 的列表不符：代理报告 1× RTX 4090，RunPod 显示 1× A100",
	} {
		got, ok := view.DecisionText(m, lang, time.UTC, time.Now())
		if !ok || got != want {
			t.Errorf("%s: %q, %v; want %q", lang, got, ok, want)
		}
	}
	if got := view.WayText("zh", "box1", w, false); !strings.Contains(got, "先询问你") {
		t.Errorf("zh WayText: %q", got)
	}
}
