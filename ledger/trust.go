package ledger

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// An agent token is a bearer secret: whoever holds it can report for the
// rental from anywhere. So an agent token alone never moves money or data
// through a platform's API: before the server stops or terminates a
// rental's instance without the user's tap, the agent's own reports must
// show that it runs on that instance (Corroborate), and a report that
// contradicts the platform's list turns the automation off until the
// user decides (AgentTrust).

// HostFacts are what identifies the host a rental runs on, either as its
// agent reports it or as the platform lists the rental's instance. Empty
// fields (zero count) are unknown.
type HostFacts struct {
	// Instance is the platform's instance ID, "PLATFORM:ID" as the agent
	// reports it (wire.InstanceFacts.Key); as listed, the platform's key
	// and ID the same way.
	Instance string `json:"instance,omitempty"`
	GPU      string `json:"gpu,omitempty"`       // the GPU model as reported or listed
	GPUCount int    `json:"gpu_count,omitempty"` // GPUs reported or listed
	// Address is the public IP address: the one the agent's heartbeat
	// came from, or the one the platform lists for the instance.
	Address string `json:"address,omitempty"`
}

// IsZero reports whether f holds no fact.
func (f HostFacts) IsZero() bool { return f == HostFacts{} }

// Corroboration is whether a rental's agent has shown that it runs on the
// platform instance the rental is bound to.
type Corroboration struct {
	// OK: every fact the platform lists for the instance (its ID, its GPU
	// model and count, its public address where it lists one) is the
	// agent's too.
	OK bool
	// Missing is why not, when nothing disagrees but something the
	// platform lists is absent from the agent's reports: one of the
	// Corroborate* keys below. "" when OK or when Said is set.
	Missing string
	// Said and Listed are the facts that disagree, the agent's and the
	// platform's (only those fields are set): a mismatch.
	Said, Listed HostFacts
}

// Mismatch reports whether something the agent reports contradicts the
// platform's list.
func (c Corroboration) Mismatch() bool { return !c.Said.IsZero() || !c.Listed.IsZero() }

// Why the agent's reports do not show that it runs on the instance, when
// nothing in them contradicts the platform (Corroboration.Missing); each
// is a catalog key at the chat's edge.
const (
	CorroborateNoInstanceID = "corr_no_instance_id" // the agent reports no platform instance ID
	CorroborateNoGPU        = "corr_no_gpu"         // the agent reports no GPU
	CorroborateNoAddress    = "corr_no_address"     // the heartbeat's address is unknown (none since a restart)
	CorroborateNoAgent      = "corr_no_agent"       // no agent has reported for the rental
)

// CorroborateKeys are the Missing keys, for catalog checks.
func CorroborateKeys() []string {
	return []string{CorroborateNoInstanceID, CorroborateNoGPU, CorroborateNoAddress, CorroborateNoAgent}
}

// AgentFacts are the host facts of a rental's agent's last heartbeat.
func AgentFacts(st AgentState) HostFacts {
	return HostFacts{Instance: st.InstanceSaid, GPU: st.GPU.Model, GPUCount: st.GPU.Count, Address: st.Peer}
}

// ListedFacts are the host facts the platform lists for an instance.
func ListedFacts(in PlatformInstance) HostFacts {
	f := HostFacts{Instance: in.Platform + ":" + in.PlatformID, GPU: in.GPU, GPUCount: in.GPUCount}
	if in.Address.IsValid() {
		f.Address = in.Address.String()
	}
	return f
}

// Corroborate compares what a rental's agent last reported (said: the
// facts of its last heartbeat) with what the platform lists for the
// rental's instance (listed). A fact the platform does not list is not
// compared. A trusted disagreement (the user's [Trust this agent] on
// exactly these facts, trusted.Said and trusted.Listed) is accepted as
// agreement; any other disagreement is a mismatch.
//
// GPU models are compared as NormalizeGPUName keys ("NVIDIA A100-SXM4-40GB"
// and "A100" agree); the agent must see at least as many GPUs as listed.
// An agent that reports an instance key of another kind ("machine:…",
// "host:…") has not named the instance: Missing, not a mismatch.
func Corroborate(said, listed HostFacts, trusted *AgentTrust) Corroboration {
	var c Corroboration
	// accepted: this disagreement (the agent's s, the platform's l, as
	// key reads them) is the one the user trusted.
	accepted := func(s, l string, key func(HostFacts) string) bool {
		return trusted != nil && trusted.State == TrustTrusted && key(trusted.Said) == s && key(trusted.Listed) == l
	}
	missing := ""
	note := func(k string) {
		if missing == "" {
			missing = k
		}
	}
	if listed.Instance != "" {
		switch {
		case said.Instance == "" || strings.HasPrefix(said.Instance, "machine:") || strings.HasPrefix(said.Instance, "host:"):
			note(CorroborateNoInstanceID)
		case said.Instance != listed.Instance && !accepted(said.Instance, listed.Instance, func(f HostFacts) string { return f.Instance }):
			c.Said.Instance, c.Listed.Instance = said.Instance, listed.Instance
		}
	}
	if want := NormalizeGPUName(listed.GPU); want != "" {
		got := NormalizeGPUName(said.GPU)
		switch {
		case got == "":
			note(CorroborateNoGPU)
		case got != want && !accepted(got, want, func(f HostFacts) string { return NormalizeGPUName(f.GPU) }):
			c.Said.GPU, c.Listed.GPU = said.GPU, listed.GPU
		}
	}
	if listed.GPUCount > 0 {
		switch {
		case said.GPUCount == 0:
			note(CorroborateNoGPU)
		case said.GPUCount < listed.GPUCount &&
			!accepted(strconv.Itoa(said.GPUCount), strconv.Itoa(listed.GPUCount), func(f HostFacts) string { return strconv.Itoa(f.GPUCount) }):
			c.Said.GPUCount, c.Listed.GPUCount = said.GPUCount, listed.GPUCount
		}
	}
	if listed.Address != "" {
		switch {
		case said.Address == "":
			note(CorroborateNoAddress)
		case said.Address != listed.Address && !accepted(said.Address, listed.Address, func(f HostFacts) string { return f.Address }):
			c.Said.Address, c.Listed.Address = said.Address, listed.Address
		}
	}
	if c.Mismatch() {
		return c
	}
	c.Missing = missing
	c.OK = missing == ""
	return c
}

// TrustState is where a rental's agent stands with the user after its
// reports contradicted the platform's list.
type TrustState string

// Trust states.
const (
	// TrustAsked: a mismatch was put to the user on one card; automatic
	// actions through the platform's API are off until they answer.
	TrustAsked TrustState = "asked"
	// TrustOff: the user kept them off. Only a new token for the rental
	// (TrustReset) turns them back on.
	TrustOff TrustState = "off"
	// TrustTrusted: the user trusted the agent in spite of the
	// disagreement shown (Said, Listed); that disagreement is accepted
	// from then on, and any other is asked again.
	TrustTrusted TrustState = "trusted"
	// TrustReset: a new token was issued at At; the agent's reports are
	// checked afresh from the first one after it.
	TrustReset TrustState = "reset"
)

// Valid reports whether s is a known state.
func (s TrustState) Valid() bool {
	switch s {
	case TrustAsked, TrustOff, TrustTrusted, TrustReset:
		return true
	}
	return false
}

// Blocks reports whether automatic actions through the platform's API are
// off in this state.
func (s TrustState) Blocks() bool { return s == TrustAsked || s == TrustOff }

// AgentTrust is a rental's standing answer about its agent: one row per
// rental, so a mismatch brings one card however many heartbeats carry
// it, also across restarts.
type AgentTrust struct {
	RentalID int64
	UserID   int64
	State    TrustState
	// Said and Listed are the disagreement put to the user: the agent's
	// facts and the platform's, only the fields that disagreed.
	Said, Listed HostFacts
	// MessageID is the card's message, to edit on an answer; 0 none.
	MessageID int
	At        time.Time // when the state was set
}

// TrustStore keeps each rental's AgentTrust.
type TrustStore interface {
	// AgentTrust returns the rental's row; ok false when there is none.
	AgentTrust(ctx context.Context, rentalID int64) (t AgentTrust, ok bool, err error)
	// SaveAgentTrust inserts or replaces the rental's row. Errors:
	// EINVALID (an unknown state), ENOTFOUND (not the user's rental).
	SaveAgentTrust(ctx context.Context, t AgentTrust) error
}

// AutoWayKind is how an automatic stop or release of a rental is carried
// out.
type AutoWayKind string

// Ways of an automatic action.
const (
	// WayAgent: an order to the rental's agent, which runs its own release
	// command after re-sampling (a rental not live on a connected
	// platform).
	WayAgent AutoWayKind = "agent"
	// WayAPIStop and WayAPITerminate: through the platform's API, without
	// a tap.
	WayAPIStop      AutoWayKind = "api_stop"
	WayAPITerminate AutoWayKind = "api_terminate"
	// WayCannotStop: a stop policy on a platform that can only terminate:
	// nothing is done, the user is told.
	WayCannotStop AutoWayKind = "cannot_stop"
	// WayAsk: the idle card asks for a tap instead, for AutoWay.Why.
	WayAsk AutoWayKind = "ask"
)

// Why an automatic action through a platform's API asks for a tap, beyond
// the Corroborate* keys (which say what the agent's reports lack).
const (
	WayWhyMismatch = "way_mismatch" // the agent's reports contradict the platform's list (Said, Listed)
	WayWhyAsked    = "way_asked"    // a mismatch was put to the user, who has not answered
	WayWhyKeptOff  = "way_kept_off" // the user kept automation off after a mismatch
)

// AutoWay is what an automatic stop or release of a rental will really
// do, and why: what /autorelease, /why and the idle card tell the user.
type AutoWay struct {
	Kind       AutoWayKind
	Platform   string // the platform's key; "" for WayAgent
	PlatformID string // the instance's ID on it
	// Uncorroborated: a WayAPIStop taken although the agent has not shown
	// it runs on the instance (allowed: a stop keeps the disk and the
	// user's policy chose stops); Why says what it lacks.
	Uncorroborated bool
	// Why is the reason for WayAsk (or for Uncorroborated): a Corroborate*
	// or WayWhy* key.
	Why string
	// Said and Listed are the disagreement, for WayWhyMismatch,
	// WayWhyAsked and WayWhyKeptOff.
	Said, Listed HostFacts
	// Corr is the comparison it was decided on; Trust the rental's
	// standing answer, when HasTrust.
	Corr     Corroboration
	Trust    AgentTrust
	HasTrust bool
}

// PlanAuto decides how an automatic action (stop or release) is carried
// out on a rental that is live on a connected platform (platform,
// platformID; canStop: the platform can stop rather than only
// terminate), given how the agent's reports compare with the platform's
// list (corr) and the rental's standing answer (trust, nil none). The
// rule: an agent token alone never moves money or data through the
// API. Automatically, the API terminates only for a corroborated agent;
// it stops for a corroborated one, or for an uncorroborated one where the
// platform keeps the disk and the policy is "stop"; a mismatch, or a
// mismatch the user has not cleared, asks.
func PlanAuto(action AutoAction, platform, platformID string, canStop bool, corr Corroboration, trust *AgentTrust) AutoWay {
	w := AutoWay{Platform: platform, PlatformID: platformID, Corr: corr}
	if trust != nil {
		w.Trust, w.HasTrust = *trust, true
	}
	switch {
	case trust != nil && trust.State == TrustAsked:
		w.Kind, w.Why, w.Said, w.Listed = WayAsk, WayWhyAsked, trust.Said, trust.Listed
	case trust != nil && trust.State == TrustOff:
		w.Kind, w.Why, w.Said, w.Listed = WayAsk, WayWhyKeptOff, trust.Said, trust.Listed
	case corr.Mismatch():
		w.Kind, w.Why, w.Said, w.Listed = WayAsk, WayWhyMismatch, corr.Said, corr.Listed
	case action == AutoStop && !canStop:
		w.Kind = WayCannotStop
	case corr.OK && action == AutoStop:
		w.Kind = WayAPIStop
	case corr.OK:
		w.Kind = WayAPITerminate
	case action == AutoStop:
		w.Kind, w.Uncorroborated, w.Why = WayAPIStop, true, corr.Missing
	default:
		w.Kind, w.Why = WayAsk, corr.Missing
	}
	return w
}
