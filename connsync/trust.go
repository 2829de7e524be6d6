package connsync

import (
	"context"

	"github.com/gpuledger/gpuledger/ledger"
)

// AutoWay says how an automatic stop or release (action) of r would be
// carried out now (ledger.PlanAuto): WayAgent when r is not a live
// instance of a connected platform; otherwise through the API only as
// far as r's agent has shown that it runs on the instance the platform
// lists (ledger.Corroborate: its instance ID, GPU model and count, and
// the address its heartbeats come from), and never while a mismatch
// waits for the user's answer or was kept off. Reports from before a
// new token was issued count as none. It makes no platform call; a store
// error is logged and reads as a mismatch not cleared (WayAsk).
func (s *Syncer) AutoWay(ctx context.Context, r *ledger.Rental, action ledger.AutoAction) ledger.AutoWay {
	in, ok := s.Listed(ctx, r)
	if !ok {
		return ledger.AutoWay{Kind: ledger.WayAgent}
	}
	t, has, err := s.store.AgentTrust(ctx, r.ID)
	if err != nil {
		s.log.Error("connsync: agent trust", "rental", r.ID, "err", err)
		return ledger.AutoWay{Kind: ledger.WayAsk, Why: ledger.WayWhyAsked, Platform: r.Platform, PlatformID: r.PlatformID}
	}
	var trust *ledger.AgentTrust
	if has {
		trust = &t
	}
	return ledger.PlanAuto(action, r.Platform, r.PlatformID, s.cfg.Platforms.CanStop(r.Platform), s.corroborate(r, in, trust), trust)
}

// corroborate compares r's agent's last heartbeat with in.
func (s *Syncer) corroborate(r *ledger.Rental, in ledger.PlatformInstance, trust *ledger.AgentTrust) ledger.Corroboration {
	var st ledger.AgentState
	seen := false
	if s.cfg.Agents != nil {
		st, seen = s.cfg.Agents.AgentState(r.ID)
	}
	if seen && trust != nil && trust.State == ledger.TrustReset && !st.LastSeen.After(trust.At) {
		seen = false // the old token's agent
	}
	if !seen {
		return ledger.Corroboration{Missing: ledger.CorroborateNoAgent}
	}
	return ledger.Corroborate(ledger.AgentFacts(st), ledger.ListedFacts(in), trust)
}
