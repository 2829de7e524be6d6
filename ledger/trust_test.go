package ledger_test

import (
	"testing"

	"github.com/gpuledger/gpuledger/ledger"
)

func TestCorroborate(t *testing.T) {
	listed := ledger.HostFacts{Instance: "runpod:pod-1", GPU: "A100", GPUCount: 2, Address: "198.51.100.7"}
	good := ledger.HostFacts{Instance: "runpod:pod-1", GPU: "NVIDIA A100-SXM4-40GB", GPUCount: 2, Address: "198.51.100.7"}
	with := func(f func(*ledger.HostFacts)) ledger.HostFacts { g := good; f(&g); return g }
	for _, c := range []struct {
		name         string
		said, listed ledger.HostFacts
		trusted      *ledger.AgentTrust
		ok           bool
		missing      string
		mismatch     ledger.HostFacts // the agent's side expected
	}{
		{"AllMatch", good, listed, nil, true, "", ledger.HostFacts{}},
		{"MoreGPUsThanListed", with(func(f *ledger.HostFacts) { f.GPUCount = 4 }), listed, nil, true, "", ledger.HostFacts{}},
		{"NoAddressListed", with(func(f *ledger.HostFacts) { f.Address = "203.0.113.1" }), ledger.HostFacts{Instance: "runpod:pod-1", GPU: "A100", GPUCount: 2}, nil, true, "", ledger.HostFacts{}},
		{"NoInstanceID", with(func(f *ledger.HostFacts) { f.Instance = "" }), listed, nil, false, ledger.CorroborateNoInstanceID, ledger.HostFacts{}},
		{"MachineKeyIsNoID", with(func(f *ledger.HostFacts) { f.Instance = "machine:abc" }), listed, nil, false, ledger.CorroborateNoInstanceID, ledger.HostFacts{}},
		{"NoGPU", with(func(f *ledger.HostFacts) { f.GPU, f.GPUCount = "", 0 }), listed, nil, false, ledger.CorroborateNoGPU, ledger.HostFacts{}},
		{"AddressUnknown", with(func(f *ledger.HostFacts) { f.Address = "" }), listed, nil, false, ledger.CorroborateNoAddress, ledger.HostFacts{}},
		{"OtherInstance", with(func(f *ledger.HostFacts) { f.Instance = "runpod:pod-2" }), listed, nil, false, "", ledger.HostFacts{Instance: "runpod:pod-2"}},
		{"OtherPlatform", with(func(f *ledger.HostFacts) { f.Instance = "vast:77" }), listed, nil, false, "", ledger.HostFacts{Instance: "vast:77"}},
		{"OtherGPU", with(func(f *ledger.HostFacts) { f.GPU = "NVIDIA GeForce RTX 4090" }), listed, nil, false, "", ledger.HostFacts{GPU: "NVIDIA GeForce RTX 4090"}},
		{"FewerGPUs", with(func(f *ledger.HostFacts) { f.GPUCount = 1 }), listed, nil, false, "", ledger.HostFacts{GPUCount: 1}},
		{"OtherAddress", with(func(f *ledger.HostFacts) { f.Address = "203.0.113.1" }), listed, nil, false, "", ledger.HostFacts{Address: "203.0.113.1"}},
		{"MismatchBeatsMissing", with(func(f *ledger.HostFacts) { f.Instance, f.Address = "", "203.0.113.1" }), listed, nil, false, "", ledger.HostFacts{Address: "203.0.113.1"}},
		{"TrustedDisagreement", with(func(f *ledger.HostFacts) { f.Address = "203.0.113.1" }), listed,
			&ledger.AgentTrust{State: ledger.TrustTrusted, Said: ledger.HostFacts{Address: "203.0.113.1"}, Listed: ledger.HostFacts{Address: "198.51.100.7"}}, true, "", ledger.HostFacts{}},
		{"TrustedOtherDisagreement", with(func(f *ledger.HostFacts) { f.Address = "203.0.113.2" }), listed,
			&ledger.AgentTrust{State: ledger.TrustTrusted, Said: ledger.HostFacts{Address: "203.0.113.1"}, Listed: ledger.HostFacts{Address: "198.51.100.7"}}, false, "", ledger.HostFacts{Address: "203.0.113.2"}},
		{"TrustNotGivenWhenOff", with(func(f *ledger.HostFacts) { f.Address = "203.0.113.1" }), listed,
			&ledger.AgentTrust{State: ledger.TrustOff, Said: ledger.HostFacts{Address: "203.0.113.1"}, Listed: ledger.HostFacts{Address: "198.51.100.7"}}, false, "", ledger.HostFacts{Address: "203.0.113.1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ledger.Corroborate(c.said, c.listed, c.trusted)
			if got.OK != c.ok || got.Missing != c.missing || got.Said != c.mismatch {
				t.Fatalf("Corroborate = %+v, want OK %v, Missing %q, Said %+v", got, c.ok, c.missing, c.mismatch)
			}
		})
	}
}

func TestPlanAuto(t *testing.T) {
	ok := ledger.Corroboration{OK: true}
	missing := ledger.Corroboration{Missing: ledger.CorroborateNoInstanceID}
	mismatch := ledger.Corroboration{Said: ledger.HostFacts{GPU: "RTX 4090"}, Listed: ledger.HostFacts{GPU: "A100"}}
	asked := &ledger.AgentTrust{State: ledger.TrustAsked}
	off := &ledger.AgentTrust{State: ledger.TrustOff}
	for _, c := range []struct {
		name    string
		action  ledger.AutoAction
		canStop bool
		corr    ledger.Corroboration
		trust   *ledger.AgentTrust
		want    ledger.AutoWayKind
		unc     bool
		why     string
	}{
		{"CorroboratedRelease", ledger.AutoRelease, true, ok, nil, ledger.WayAPITerminate, false, ""},
		{"CorroboratedStop", ledger.AutoStop, true, ok, nil, ledger.WayAPIStop, false, ""},
		{"CorroboratedStopCannot", ledger.AutoStop, false, ok, nil, ledger.WayCannotStop, false, ""},
		{"UncorroboratedReleaseAsks", ledger.AutoRelease, true, missing, nil, ledger.WayAsk, false, ledger.CorroborateNoInstanceID},
		{"UncorroboratedStopStops", ledger.AutoStop, true, missing, nil, ledger.WayAPIStop, true, ledger.CorroborateNoInstanceID},
		{"UncorroboratedStopCannot", ledger.AutoStop, false, missing, nil, ledger.WayCannotStop, false, ""},
		{"UncorroboratedReleaseNoStop", ledger.AutoRelease, false, missing, nil, ledger.WayAsk, false, ledger.CorroborateNoInstanceID},
		{"MismatchStopAsks", ledger.AutoStop, true, mismatch, nil, ledger.WayAsk, false, ledger.WayWhyMismatch},
		{"AskedAsks", ledger.AutoRelease, true, ok, asked, ledger.WayAsk, false, ledger.WayWhyAsked},
		{"KeptOffAsks", ledger.AutoStop, true, ok, off, ledger.WayAsk, false, ledger.WayWhyKeptOff},
		{"TrustedActs", ledger.AutoRelease, true, ok, &ledger.AgentTrust{State: ledger.TrustTrusted}, ledger.WayAPITerminate, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := ledger.PlanAuto(c.action, "runpod", "pod-1", c.canStop, c.corr, c.trust)
			if w.Kind != c.want || w.Uncorroborated != c.unc || w.Why != c.why {
				t.Fatalf("PlanAuto = %s (uncorroborated %v, why %q), want %s (%v, %q)", w.Kind, w.Uncorroborated, w.Why, c.want, c.unc, c.why)
			}
		})
	}
}
