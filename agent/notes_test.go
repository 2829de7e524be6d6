package agent

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
)

// TestExecutor_RefusalNotes: an order refused for the host's state
// carries its reasons as codes with their values (wire.Note), so the
// server words them in its user's language; their English is the
// message, which stays for older servers and the logs.
func TestExecutor_RefusalNotes(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name, state string
		setup       func(e *Executor)
		want        string // a code every result of this kind carries
	}{
		{"Busy", "busy", nil, wire.NoteGPUUtil},
		{"Unknown", "missing", nil, wire.NoteGPUError},
		{"NoReleaseCmd", "idle", func(e *Executor) { e.ReleaseCmd = "" }, wire.NoteNoCommand},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, rec, hub, _ := newExecutor(t, tt.state)
			if tt.setup != nil {
				tt.setup(e)
			}
			e.HandleOrder(ctx, hub.NewOrder(wire.ActionRelease, time.Minute))
			rec.mu.Lock()
			last := rec.got[len(rec.got)-1]
			rec.mu.Unlock()
			if len(last.Notes) == 0 {
				t.Fatalf("%s: no notes with %+v", tt.name, last)
			}
			var codes, texts []string
			for _, n := range last.Notes {
				codes = append(codes, n.Code)
				texts = append(texts, NoteText(n))
			}
			if !strings.Contains(strings.Join(codes, ","), tt.want) {
				t.Errorf("codes %v, want %s", codes, tt.want)
			}
			if got := strings.Join(texts, "; "); got != last.Message {
				t.Errorf("the notes read %q, the message %q", got, last.Message)
			}
		})
	}
}

// TestPolicyGate_RefusalCode: a refused policy's kind goes with its
// words, and both clear once one is taken.
func TestPolicyGate_RefusalCode(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{wire.ErrPolicyUnsigned, wire.PolicyRefusedUnsigned},
		{wire.ErrPolicyBadSignature, wire.PolicyRefusedBadSignature},
		{wire.ErrPolicyExpired, wire.PolicyRefusedExpired},
		{wire.ErrPolicyNotYetValid, wire.PolicyRefusedFuture},
		{errPolicyRental, wire.PolicyRefusedRental},
		{errPolicyOlder, wire.PolicyRefusedOlder},
	} {
		if got := refusalCode(tt.err); got != tt.want {
			t.Errorf("refusalCode(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
