package ledger

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestAutoDecide(t *testing.T) {
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	running := &Rental{Name: "box1", Events: []Event{{Kind: EventStart, At: now.Add(-5 * time.Hour)}}}
	stopped := &Rental{Name: "box1", Events: []Event{{Kind: EventStart, At: now.Add(-5 * time.Hour)}, {Kind: EventStop, At: now.Add(-time.Hour)}}}
	idle := func() *AgentState {
		return &AgentState{LastSeen: now.Add(-20 * time.Second), Verdict: VerdictIdle, IdleSince: now.Add(-90 * time.Minute)}
	}
	base := func() AutoInput {
		return AutoInput{Now: now, Rental: running, Policy: AutoPolicy{Action: AutoStop, After: 30 * time.Minute},
			Agent: idle(), WarnedAt: now.Add(-40 * time.Minute), FreshWithin: 2 * time.Minute}
	}
	tests := []struct {
		name string
		mut  func(*AutoInput)
		want OrderAction
		key  string // of the reason or the evidence
	}{
		{"OK/stop", nil, "stop", AutoEvidence},
		{"OK/release", func(in *AutoInput) { in.Policy.Action = AutoRelease }, "release", AutoEvidence},
		{"NotifyOnly", func(in *AutoInput) { in.Policy.Action = AutoNotify }, "", AutoNoPolicy},
		{"Off", func(in *AutoInput) { in.Policy.Action = AutoOff }, "", AutoNoPolicy},
		{"NotRunning", func(in *AutoInput) { in.Rental = stopped }, "", AutoNotRunning},
		{"NoAgent", func(in *AutoInput) { in.Agent = nil }, "", AutoNoAgent},
		{"NoWarning", func(in *AutoInput) { in.WarnedAt = time.Time{} }, "", AutoNoWarning},
		{"InGrace", func(in *AutoInput) { in.WarnedAt = now.Add(-29 * time.Minute) }, "", AutoGrace},
		{"Snoozed", func(in *AutoInput) { in.SnoozeUntil = now.Add(time.Minute) }, "", AutoSnoozed},
		{"Kept", func(in *AutoInput) { in.Kept = true }, "", AutoKept},
		{"StaleHeartbeat", func(in *AutoInput) { in.Agent.LastSeen = now.Add(-3 * time.Minute) }, "", AutoStale},
		{"FutureHeartbeat", func(in *AutoInput) { in.Agent.LastSeen = now.Add(time.Hour) }, "", AutoStale},
		{"JobRunning", func(in *AutoInput) { in.Agent.Job.Running = true }, "", AutoJob},
		{"Busy", func(in *AutoInput) { in.Agent.Verdict = VerdictBusy }, "", AutoBusy},
		{"Unknown", func(in *AutoInput) { in.Agent.Verdict = VerdictUnknown }, "", AutoNotIdle},
		{"OrderInFlight", func(in *AutoInput) { in.OpenOrder = true }, "", AutoOrderOpen},
		{"PeopleConnected", func(in *AutoInput) {
			in.Agent.Sessions = []Session{{Kind: SessionSSH, Client: "1.2.3.4", User: "root"}, {Kind: SessionJupyter, Client: "local"}}
		}, "", AutoPeopleHeld},
		{"PeopleConnected/WaitForNone", func(in *AutoInput) {
			in.Agent.Sessions = []Session{{Kind: SessionSSH, Client: "1.2.3.4"}}
			in.Policy.WaitFor = WaitNone
		}, "stop", AutoEvidence},
		{"PeopleConnected/OtherKind", func(in *AutoInput) {
			in.Agent.Sessions = []Session{{Kind: SessionVSCode, Client: "5.6.7.8"}}
			in.Policy.WaitFor = "ssh,jupyter"
		}, "stop", AutoEvidence},
		// A connection holds while its person was active within the bound
		// (idle_people, default DefaultIdlePeople): a Jupyter tab open
		// overnight with nothing run holds nothing.
		{"PeopleIdle/JupyterNothingRunFor3h", func(in *AutoInput) {
			in.Agent.Sessions = []Session{{Kind: SessionJupyter, Client: "local", ActiveAt: now.Add(-3 * time.Hour)}}
		}, "stop", AutoEvidence},
		{"PeopleIdle/JupyterRanAnHourAgo", func(in *AutoInput) {
			in.Agent.Sessions = []Session{{Kind: SessionJupyter, Client: "local", ActiveAt: now.Add(-time.Hour)}}
		}, "", AutoPeopleHeld},
		{"PeopleIdle/BoundSetTo4h", func(in *AutoInput) {
			in.Agent.Sessions = []Session{{Kind: SessionSSH, Client: "1.2.3.4", ActiveAt: now.Add(-3 * time.Hour)}}
			in.Policy.IdlePeople = 4 * time.Hour
		}, "", AutoPeopleHeld},
		{"PeopleIdle/NoBound", func(in *AutoInput) {
			in.Agent.Sessions = []Session{{Kind: SessionSSH, Client: "1.2.3.4", ActiveAt: now.Add(-30 * time.Hour)}}
			in.Policy.IdlePeople = IdlePeopleNever
		}, "", AutoPeopleHeld},
		{"PeopleIdle/ActivityUnknownHolds", func(in *AutoInput) {
			in.Agent.Sessions = []Session{{Kind: SessionVSCode, Client: "5.6.7.8", Since: now.Add(-30 * time.Hour)}}
		}, "", AutoPeopleHeld},
		{"PeopleRefusedRecently", func(in *AutoInput) { in.PeopleRefusedAt = now.Add(-10 * time.Second) }, "", AutoPeopleRefused},
		{"PeopleRefusedBefore", func(in *AutoInput) { in.PeopleRefusedAt = now.Add(-time.Minute) }, "stop", AutoEvidence},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := base()
			if tt.mut != nil {
				tt.mut(&in)
			}
			got, why := AutoDecide(in)
			if got != tt.want || why.Key != tt.key {
				t.Fatalf("AutoDecide = %q, %v; want %q with %s", got, why, tt.want, tt.key)
			}
		})
	}
}

func TestReminderDelay(t *testing.T) {
	for n, want := range map[int]time.Duration{0: time.Hour, 1: time.Hour, 2: 2 * time.Hour, 3: 4 * time.Hour, 5: 16 * time.Hour, 6: 24 * time.Hour, 40: 24 * time.Hour} {
		if got := ReminderDelay(n); got != want {
			t.Errorf("ReminderDelay(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestInQuietHours(t *testing.T) {
	u := &User{TZ: "Asia/Shanghai", Settings: Settings{QuietFrom: 23 * 60, QuietTo: 8 * 60}}
	sh, _ := time.LoadLocation("Asia/Shanghai")
	tests := []struct {
		local   string
		quiet   bool
		endHour int
	}{
		{"2026-11-01 22:59", false, 22},
		{"2026-11-01 23:00", true, 8},
		{"2026-11-02 03:00", true, 8},
		{"2026-11-02 08:00", false, 8},
	}
	for _, tt := range tests {
		lt, _ := time.ParseInLocation("2006-01-02 15:04", tt.local, sh)
		if got := InQuietHours(u, lt.UTC()); got != tt.quiet {
			t.Errorf("InQuietHours(%s) = %v", tt.local, got)
		}
		end := QuietEnd(u, lt.UTC()).In(sh)
		if tt.quiet && (end.Hour() != 8 || !end.After(lt)) {
			t.Errorf("QuietEnd(%s) = %s", tt.local, end)
		}
	}
	if InQuietHours(&User{Settings: DefaultSettings()}, time.Now()) {
		t.Error("default settings have no quiet hours")
	}
}

func TestGPUMismatch(t *testing.T) {
	r := &Rental{GPU: "RTX 4090", GPUCount: 2}
	tests := []struct {
		f    GPUFacts
		want string
	}{
		{GPUFacts{Model: "NVIDIA GeForce RTX 4090", Count: 2, Source: "nvml"}, ""},
		{GPUFacts{Model: "NVIDIA GeForce RTX 4090", Count: 4, Source: "nvml"}, ""},
		{GPUFacts{Model: "NVIDIA GeForce RTX 3090", Count: 2, Source: "nvml"}, "sees NVIDIA GeForce RTX 3090"},
		{GPUFacts{Model: "NVIDIA GeForce RTX 4090", Count: 1, Source: "nvml"}, "only 1 of the 2 GPUs you pay for"},
		{GPUFacts{Source: "none"}, ""},
	}
	for _, tt := range tests {
		got := GPUMismatch(r, tt.f).String()
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("GPUMismatch(%+v) = %q, want %q", tt.f, got, tt.want)
		}
	}
}

func TestParseWaitFor(t *testing.T) {
	tests := []struct {
		in   string
		want WaitFor
		err  bool
	}{
		{"", "", false},
		{"all", "", false},
		{"none", WaitNone, false},
		{"NONE", WaitNone, false},
		{"ssh", "ssh", false},
		{"jupyter,ssh", "ssh,jupyter", false},
		{"code, ssh", "ssh,vscode", false},
		{"ssh,jupyter,vscode", "", false},
		{"ssh,ssh", "ssh", false},
		{"people", "", true},
		{"ssh,", "", true},
	}
	for _, tt := range tests {
		got, err := ParseWaitFor(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseWaitFor(%q) = %q, %v; want %q, err %v", tt.in, got, err, tt.want, tt.err)
		}
		if err != nil && ErrorCode(err) != EINVALID {
			t.Errorf("ParseWaitFor(%q): code %s", tt.in, ErrorCode(err))
		}
	}
	if err := WaitFor("jupyter,ssh").Validate(); err == nil {
		t.Error("non-canonical WaitFor accepted")
	}
	if got := WaitFor("").Kinds(); strings.Join(got, ",") != "ssh,jupyter,vscode" {
		t.Errorf("default kinds %v", got)
	}
	if got := WaitNone.Holding([]Session{{Kind: SessionSSH}}); len(got) != 0 {
		t.Errorf("none holds %v", got)
	}
}

func TestDescribeSessions(t *testing.T) {
	ss := []Session{{Kind: SessionVSCode, Client: "2001:db8::1"}, {Kind: SessionSSH, Client: "1.2.3.4", User: "root"},
		{Kind: SessionSSH, Client: "5.6.7.8"}, {Kind: SessionJupyter, Client: "local"}}
	want := "2 SSH sessions (root from 1.2.3.4, from 5.6.7.8), 1 Jupyter client, 1 VS Code client (from 2001:db8::1)"
	if got := DescribeSessions(ss); got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if got, want := DescribeSessions([]Session{{Kind: SessionSSH, User: "root"}, {Kind: SessionSSH, Client: "local", User: "bob"}}),
		"2 SSH sessions (root, bob from local)"; got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if got := DescribeSessions(nil); got != "" {
		t.Fatalf("nobody: %q", got)
	}
}

// TestAutoPolicy_AfterBounds: a grace from chat lies within MinAfter and
// MaxAfter (0 is the default), and the refusal names both bounds; the
// store alone takes a grace down to MinGrace.
func TestAutoPolicy_AfterBounds(t *testing.T) {
	for _, tt := range []struct {
		after  time.Duration
		chat   bool
		stored bool
	}{
		{0, true, true},
		{MinGrace, false, true},
		{30 * time.Second, false, true},
		{MinAfter, true, true},
		{MaxAfter, true, true},
		{MaxAfter + time.Second, false, false},
	} {
		p := AutoPolicy{Action: AutoStop, After: tt.after}
		err := p.Validate()
		if (err == nil) != tt.chat {
			t.Errorf("Validate(after=%v) = %v, want ok=%v", tt.after, err, tt.chat)
		}
		var le *Error
		if err != nil && errors.As(err, &le) && tt.after > MinGrace {
			if le.Key != "bad_after" || len(le.Args) != 3 || le.Args[1] != MinAfter || le.Args[2] != MaxAfter {
				t.Errorf("Validate(after=%v) = %s %v, want bad_after naming %v and %v", tt.after, le.Key, le.Args, MinAfter, MaxAfter)
			}
		}
		if err := p.ValidateStored(); (err == nil) != tt.stored {
			t.Errorf("ValidateStored(after=%v) = %v, want ok=%v", tt.after, err, tt.stored)
		}
	}
}
