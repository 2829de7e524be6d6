package agent

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/internal/clip"
)

// policyGate decides whether the policy in a heartbeat answer is taken.
// A policy can lead to a release (a lease deadline that has passed, a
// threshold under which a busy GPU reads idle), so it is taken only when
// it is signed with the rental's token, for this rental, unexpired, and
// not older than the newest one taken (kept in the State, across
// restarts, so an old lease cannot be replayed to shorten a newer one).
// Even a taken threshold only ever lowers the local --util-threshold.
// A refusal keeps the agent's own settings (and the last policy taken),
// is logged once per kind of refusal and carried in every heartbeat
// (policy_refused) until a policy is taken again. It is safe for
// concurrent use.
type policyGate struct {
	token string
	tok   *Token  // when set, replaces token (an enrolment agent switches it)
	local float64 // the --util-threshold, the highest threshold ever used
	state *State
	log   *slog.Logger

	mu        sync.Mutex
	refused   string // why the latest movable policy was refused; "" once one is taken
	code      string // refused's kind (wire.PolicyRefused*)
	saidKind  string // the kind of refusal last logged
	applied   string // the effect last logged as applied
	aboveSaid bool   // the "above the local threshold" note was logged
}

// policyEffect is what a taken policy asks for.
type policyEffect struct {
	threshold float64    // the threshold to use: never above local
	lease     *time.Time // the server's lease deadline; nil: back to the local one
}

// refusal returns why the latest policy was refused, "" when none was.
func (g *policyGate) refusal() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.refused
}

// refusalCode returns the kind of refusal() (wire.PolicyRefused*), ""
// when none was refused.
func (g *policyGate) refusalCode() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.code
}

// take checks p, received when the agent serves rental ("" when not
// known yet), at now. It returns the effect to apply and true, or false
// when nothing is to change.
func (g *policyGate) take(p wire.Policy, rental string, now time.Time) (policyEffect, bool) {
	if p.Signature == "" && !p.Movable() {
		// A server that predates signed policies, with nothing to say.
		return policyEffect{}, false
	}
	key := g.token
	if g.tok != nil {
		key = g.tok.Get()
	}
	err := wire.VerifyPolicy(key, p, now)
	if err == nil && rental != "" && p.Rental != rental {
		err = fmt.Errorf("%w: policy is for rental %q, this agent serves %q", errPolicyRental, p.Rental, rental)
	}
	eff := policyEffect{threshold: g.local, lease: p.LeaseUntil}
	if t := p.UtilThreshold; t > 0 && t < g.local {
		eff.threshold = t
	}
	desc := fmt.Sprintf("threshold %v lease %v", eff.threshold, eff.lease)
	if eff.lease != nil {
		desc = fmt.Sprintf("threshold %v lease %s", eff.threshold, eff.lease.UTC().Format(time.RFC3339Nano))
	}
	if err == nil {
		if g.state == nil {
			err = errors.New("agent: no state to record the policy in")
		} else {
			// The state is written only when desc changes: the same
			// policy comes signed anew with every heartbeat.
			err = g.state.AcceptPolicy(p.IssuedAt, "rental "+p.Rental+" "+desc)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if err != nil {
		g.refused = clip.Bytes("server policy refused, keeping local settings: "+err.Error(), wire.MaxStrLen, "…")
		g.code = refusalCode(err)
		if k := refusalKind(err); k != g.saidKind {
			g.saidKind = k
			g.log.Warn("server policy refused; keeping the local lease and thresholds", "why", k, "err", err)
		}
		return policyEffect{}, false
	}
	g.refused, g.code, g.saidKind = "", "", ""
	if t := p.UtilThreshold; t > g.local && !g.aboveSaid {
		g.aboveSaid = true
		g.log.Info("server's util_threshold is above the local --util-threshold; the local one stays (a server may only make releases rarer)",
			"server", t, "local", g.local)
	}
	if desc != g.applied {
		g.applied = desc
		attrs := []any{"util_threshold", eff.threshold}
		if eff.lease != nil {
			attrs = append(attrs, "lease_until", eff.lease.UTC().Format(time.RFC3339))
		}
		g.log.Info("server policy applied", attrs...)
	}
	return eff, true
}

var errPolicyRental = errors.New("agent: policy for another rental")

// refusalCode is the kind of a refusal as the server reads it
// (wire.HeartbeatRequest.PolicyRefusedCode).
func refusalCode(err error) string {
	switch {
	case errors.Is(err, wire.ErrPolicyUnsigned):
		return wire.PolicyRefusedUnsigned
	case errors.Is(err, wire.ErrPolicyBadSignature):
		return wire.PolicyRefusedBadSignature
	case errors.Is(err, wire.ErrPolicyExpired):
		return wire.PolicyRefusedExpired
	case errors.Is(err, wire.ErrPolicyNotYetValid):
		return wire.PolicyRefusedFuture
	case errors.Is(err, wire.ErrPolicyInvalid):
		return wire.PolicyRefusedInvalid
	case errors.Is(err, errPolicyRental):
		return wire.PolicyRefusedRental
	case errors.Is(err, errPolicyOlder):
		return wire.PolicyRefusedOlder
	}
	return wire.PolicyRefusedState
}

// refusalKind names the kind of a refusal, so that a refusal repeated at
// every heartbeat (an expiry whose times change each time) is logged once.
func refusalKind(err error) string {
	switch {
	case errors.Is(err, wire.ErrPolicyUnsigned):
		return "unsigned"
	case errors.Is(err, wire.ErrPolicyBadSignature):
		return "bad signature"
	case errors.Is(err, wire.ErrPolicyExpired):
		return "expired (check this host's clock)"
	case errors.Is(err, wire.ErrPolicyNotYetValid):
		return "issued in the future (check this host's clock)"
	case errors.Is(err, wire.ErrPolicyInvalid):
		return "malformed"
	case errors.Is(err, errPolicyRental):
		return "for another rental"
	case errors.Is(err, errPolicyOlder):
		return "older than one already taken"
	}
	return "state not writable"
}
