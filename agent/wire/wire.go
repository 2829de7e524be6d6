// Package wire holds the JSON messages exchanged between gpuledger-agent and
// the gpuledger server's agent hub, and the signing of orders.
//
// Both binaries import this package. It imports only the standard library so
// that the server, built with CGO_ENABLED=0, links nothing from the agent's
// GPU code.
//
// The protocol is versioned by URL prefix (/v1). Within v1, fields are only
// ever added; a reader ignores fields it does not know (encoding/json's
// default) and treats missing ones as their zero value.
package wire

import (
	"net/url"
	"time"
)

// Version is the protocol version carried in every heartbeat.
const Version = "v1"

// HTTP paths of the agent hub.
const (
	// PathHeartbeat receives a HeartbeatRequest and answers a HeartbeatResponse.
	PathHeartbeat = "/v1/agent/heartbeat"
	// PathOrderResultPattern is the net/http ServeMux pattern of the order
	// result endpoint; the order id is the {id} wildcard.
	PathOrderResultPattern = "POST /v1/agent/orders/{id}/result"
)

// PathOrderResult returns the URL path on which the agent reports the
// outcome of the order with the given id. The id is path-escaped.
func PathOrderResult(id string) string {
	return "/v1/agent/orders/" + url.PathEscape(id) + "/result"
}

// MaxBodyBytes is the largest request or response body either side accepts
// (64 KiB). Readers must enforce it with io.LimitReader or
// http.MaxBytesReader; writers keep well under it (see the Max* caps).
const MaxBodyBytes = 64 << 10

// Caps that keep a heartbeat well under MaxBodyBytes whatever the host.
const (
	MaxGPUs      = 16 // GPUs reported per heartbeat
	MaxProcesses = 8  // processes reported per GPU
	MaxWatches   = 16 // watched files reported
	MaxSessions  = 16 // people connected (Sessions) reported
	MaxStrLen    = 256
)

// Verdict is the agent's judgement of whether the host is doing work.
type Verdict string

// The verdicts. Unknown is never idle: it means a reading failed or was
// implausible, and it forbids any release just as busy does.
const (
	VerdictBusy    Verdict = "busy"
	VerdictIdle    Verdict = "idle"
	VerdictUnknown Verdict = "unknown"
)

// HeartbeatRequest is the body of POST /v1/agent/heartbeat, sent with
// "Authorization: Bearer TOKEN". It summarises the samples taken since the
// previous heartbeat (WindowStart to WindowEnd).
type HeartbeatRequest struct {
	Version      string    `json:"version"`       // protocol version, Version
	AgentVersion string    `json:"agent_version"` // e.g. "0.1.0"
	Seq          uint64    `json:"seq"`           // increases by one per heartbeat cut, starting at 1 per agent start
	BootID       string    `json:"boot_id"`       // random per agent start, so the server can tell restarts
	SentAt       time.Time `json:"sent_at"`       // wall clock when (re)sent
	WindowStart  time.Time `json:"window_start"`  // wall clock of the first sample summarised
	WindowEnd    time.Time `json:"window_end"`    // wall clock of the last sample summarised
	Dropped      uint64    `json:"dropped"`       // heartbeats dropped unsent (server unreachable, queue full) since start

	Host      HostFacts    `json:"host"`
	GPUs      []GPUSummary `json:"gpus"`
	HostStats HostSummary  `json:"host_stats"`
	Watches   []WatchState `json:"watches,omitempty"`
	Job       *JobState    `json:"job,omitempty"`

	Verdict     Verdict    `json:"verdict"`                // of the last sample in the window
	Reasons     []string   `json:"reasons,omitempty"`      // why, e.g. "gpu0 util 87%", "nvml: gpu is lost"
	IdleSince   *time.Time `json:"idle_since,omitempty"`   // wall clock of the start of the current idle streak
	IdleSeconds int64      `json:"idle_seconds,omitempty"` // length of the idle streak, measured on the agent's monotonic clock
	Samples     int        `json:"samples"`                // samples in the window
	BusySamples int        `json:"busy_samples"`
	IdleSamples int        `json:"idle_samples"`
	// UnknownSamples counts samples whose verdict was unknown.
	UnknownSamples int `json:"unknown_samples"`
	// Work is what the agent saw the host working at beyond the GPU, CPU
	// and network, in the sample that decided a busy verdict: a transfer
	// or install running, disk I/O above its threshold ("rsync running",
	// "pip install running; disk 180 MB/s"). At most MaxStrLen bytes;
	// empty otherwise, and from agents too old to look.
	Work string `json:"work,omitempty"`

	LeaseUntil *time.Time `json:"lease_until,omitempty"` // the local lease deadline in force, if any
	CanRelease bool       `json:"can_release"`           // a release command is configured
	// PolicyRefused says why the agent did not take the policy of a
	// recent answer (unsigned, bad signature, expired, for another rental,
	// older than one accepted, state not writable); empty once one is
	// taken. The agent then keeps its own settings.
	PolicyRefused string `json:"policy_refused,omitempty"`
	// PolicyRefusedCode is PolicyRefused's kind (PolicyRefused*), so the
	// server can say it in its user's language; empty from agents too old
	// to send it, whose PolicyRefused is then shown as their own words.
	PolicyRefusedCode string `json:"policy_refused_code,omitempty"`

	// Sessions are the people connected to the host when the window's
	// first sample was taken (read once per heartbeat): open SSH
	// sessions, clients of a Jupyter or VS Code server. At most
	// MaxSessions. While one is connected the server holds automatic
	// stops and releases (unless the rental's wait_for says otherwise).
	// Empty, with SessionsError empty, means nobody; an agent too old to
	// look sends neither.
	Sessions []Session `json:"sessions,omitempty"`
	// SessionsError says why the agent could not tell who is connected
	// (then nothing is held on its account).
	SessionsError string `json:"sessions_error,omitempty"`

	// Instance is what the agent found about the instance it runs on
	// (platform, the platform's ID, boot time). Required with an
	// enrolment token; an agent too old to look sends none.
	Instance *InstanceFacts `json:"instance,omitempty"`
	// Shutdown is set on the last heartbeat of an agent stopping on a
	// signal.
	Shutdown *Shutdown `json:"shutdown,omitempty"`
}

// Session kinds.
const (
	SessionSSH     = "ssh"
	SessionJupyter = "jupyter"
	SessionVSCode  = "vscode"
)

// Session is one person connected to the host. Strings are at most
// MaxStrLen bytes.
type Session struct {
	Kind   string     `json:"kind"`            // SessionSSH, SessionJupyter or SessionVSCode
	Client string     `json:"client"`          // the client's address, e.g. "1.2.3.4"; "local" through a proxy on the host
	User   string     `json:"user,omitempty"`  // the SSH login, where known
	Since  *time.Time `json:"since,omitempty"` // when the agent first saw the connection

	// ActiveAt is when the person last did something the agent can see:
	// typed in the SSH session's terminal (its tty's access time, as w(1)
	// reads IDLE), ran a Jupyter cell (a kernel's last activity, a busy
	// kernel is now; without Jupyter's API, its kernels' CPU time). Absent
	// where the agent cannot tell (a notty SSH session, VS Code, an agent
	// too old to look): such a session holds as it always did.
	ActiveAt *time.Time `json:"active_at,omitempty"`
}

// HostFacts are the slowly changing facts about the host.
type HostFacts struct {
	Hostname          string    `json:"hostname"`
	GPUSource         string    `json:"gpu_source"` // "nvml", "simulate" or "none"
	DriverVersion     string    `json:"driver_version,omitempty"`
	CUDADriverVersion string    `json:"cuda_driver_version,omitempty"` // e.g. "12.4"
	GPUs              []GPUFact `json:"gpus"`
	CPUCores          float64   `json:"cpu_cores"` // usable cores (cgroup quota if any)
	MemoryTotalBytes  uint64    `json:"memory_total_bytes"`
}

// GPUFact identifies one GPU.
type GPUFact struct {
	Index          int    `json:"index"`
	Name           string `json:"name"`
	UUID           string `json:"uuid"`
	MemoryTotalMiB uint64 `json:"memory_total_mib"`
	SMClockMaxMHz  uint32 `json:"sm_clock_max_mhz,omitempty"`
}

// GPUSummary summarises one GPU over the heartbeat window. Pointer fields are
// nil when no valid reading was had in the window.
type GPUSummary struct {
	Index          int      `json:"index"`
	UUID           string   `json:"uuid"`
	Samples        int      `json:"samples"`         // samples with a valid utilisation
	FailedSamples  int      `json:"failed_samples"`  // samples whose reading failed or was implausible
	UtilMean       *float64 `json:"util_mean"`       // percent, 0-100
	UtilMax        *float64 `json:"util_max"`        // percent
	MemoryUsedMiB  *uint64  `json:"memory_used_mib"` // at the last valid sample
	MemoryMaxMiB   *uint64  `json:"memory_max_mib"`  // highest in the window
	PowerMeanW     *float64 `json:"power_mean_w,omitempty"`
	PowerMaxW      *float64 `json:"power_max_w,omitempty"`
	TemperatureC   *uint32  `json:"temperature_c,omitempty"`     // highest in the window
	SMClockMHz     *uint32  `json:"sm_clock_mhz,omitempty"`      // at the last valid sample
	ClockReasons   uint64   `json:"clock_event_reasons"`         // NVML clock-event reason bits, OR of the window
	ClockReasonTxt []string `json:"clock_event_names,omitempty"` // names of the bits
	Processes      []Proc   `json:"processes,omitempty"`         // at the last sample; reported, never used to decide
	LastError      string   `json:"last_error,omitempty"`
}

// Proc is a compute process seen by NVML. Inside containers the PID is the
// host's, or the list is empty.
type Proc struct {
	PID           uint32 `json:"pid"`
	UsedMemoryMiB uint64 `json:"used_memory_mib"`
}

// HostSummary summarises host readings over the window.
type HostSummary struct {
	CPUPercentMean *float64 `json:"cpu_percent_mean"` // percent of one core (200 = two cores busy)
	CPUPercentMax  *float64 `json:"cpu_percent_max"`
	CPUSource      string   `json:"cpu_source,omitempty"` // "cgroup2", "cgroup1", "proc" or "simulate"
	MemoryUsedB    *uint64  `json:"memory_used_bytes,omitempty"`
	NetRxBytes     uint64   `json:"net_rx_bytes"` // bytes received in the window (all interfaces but lo)
	NetTxBytes     uint64   `json:"net_tx_bytes"` // bytes sent in the window
	NetRxTotal     uint64   `json:"net_rx_total"` // counters since boot, for the traffic meter
	NetTxTotal     uint64   `json:"net_tx_total"`
	NetBytesPerS   *float64 `json:"net_bytes_per_s_max,omitempty"`
	DiskPath       string   `json:"disk_path,omitempty"`
	DiskTotalBytes uint64   `json:"disk_total_bytes,omitempty"`
	DiskFreeBytes  uint64   `json:"disk_free_bytes,omitempty"`
	Errors         []string `json:"errors,omitempty"`

	// DiskIOBytesPerS is the highest disk rate (bytes read and written a
	// second by this container) of the window's samples; absent where no
	// disk counter could be read.
	DiskIOBytesPerS *float64 `json:"disk_io_bytes_per_s_max,omitempty"`
}

// WatchState is the progress of one watched file.
type WatchState struct {
	Path      string     `json:"path"`
	Exists    bool       `json:"exists"`
	SizeBytes int64      `json:"size_bytes"`
	GrewBytes int64      `json:"grew_bytes"` // growth in the window
	ModTime   *time.Time `json:"mod_time,omitempty"`
	Error     string     `json:"error,omitempty"`
}

// JobState is the state of the job the agent wraps (run ... -- COMMAND).
type JobState struct {
	Command string `json:"command"`
	// Label is the name the user gave the job (run --label yolo-epoch):
	// runs with the same label are the user's own benchmark (/compare).
	// "" unlabelled. At most MaxLabelLen bytes of [A-Za-z0-9._-].
	Label           string     `json:"label,omitempty"`
	Running         bool       `json:"running"`
	PID             int        `json:"pid,omitempty"`
	StartedAt       time.Time  `json:"started_at"`
	Exited          bool       `json:"exited"`
	ExitCode        *int       `json:"exit_code,omitempty"`
	EndedAt         *time.Time `json:"ended_at,omitempty"`
	DurationSeconds float64    `json:"duration_s"`
	Error           string     `json:"error,omitempty"` // e.g. the command could not be started
}

// HeartbeatResponse answers a heartbeat.
type HeartbeatResponse struct {
	Rental string  `json:"rental,omitempty"` // name of the rental the token belongs to
	Orders []Order `json:"orders,omitempty"`
	Policy Policy  `json:"policy"`
	// Enrolment answers a heartbeat sent with an enrolment token (and only
	// such a heartbeat): Orders and Policy are then empty.
	Enrolment *EnrolmentAnswer `json:"enrolment,omitempty"`
	// BenchWanted asks the agent for its bench (POST PathBench): the
	// server has none for this rental and the user has not turned
	// receipts off. Never set on an enrolment heartbeat's answer, so an
	// agent benches only once it reports for a rental. An agent run with
	// --no-bench ignores it. Unsigned on purpose: the worst a forged
	// answer can do is make an agent bench once more or not at all.
	BenchWanted bool `json:"bench_wanted,omitempty"`
}

// Policy is what the server wants the agent to apply locally. Zero fields
// mean "keep the agent's own setting".
//
// A policy can lead to a release (a lease deadline, a threshold), so the
// agent takes one only when it is signed like an order (CanonicalPolicy,
// VerifyPolicy): for its rental, unexpired, and not older than the newest
// policy it accepted. Even then a threshold may only lower the agent's own
// --util-threshold (more samples count as busy), never raise it. An
// unsigned policy that carries a threshold or a lease is refused and the
// refusal reported in HeartbeatRequest.PolicyRefused.
type Policy struct {
	UtilThreshold   float64    `json:"util_threshold,omitempty"` // percent; applied only if below the agent's own
	SampleSeconds   int        `json:"sample_s,omitempty"`       // hint; the agent keeps its flags
	IntervalSeconds int        `json:"interval_s,omitempty"`     // hint
	LeaseUntil      *time.Time `json:"lease_until,omitempty"`    // replaces the local lease deadline; absent in a signed policy: back to the local one

	Rental    string    `json:"rental,omitempty"`    // the rental the policy is for
	IssuedAt  time.Time `json:"issued_at,omitzero"`  // server clock; a policy older than the newest accepted is refused
	ExpiresAt time.Time `json:"expires_at,omitzero"` // at most MaxPolicyLifetime after IssuedAt
	Signature string    `json:"signature,omitempty"` // lowercase hex HMAC-SHA256, see CanonicalPolicy
}

// Actions an order may carry. Both run the host's release command; the
// server prefers stop.
const (
	ActionStop    = "stop"
	ActionRelease = "release"
)

// Order is an instruction from the server, signed with the rental's token.
type Order struct {
	ID        string    `json:"id"`
	Rental    string    `json:"rental"`
	Action    string    `json:"action"` // ActionStop or ActionRelease
	IssuedAt  time.Time `json:"issued_at"`
	ExpiresAt time.Time `json:"expires_at"`
	Nonce     string    `json:"nonce"`
	// WaitFor, on an automatic order only, names the session kinds
	// (SessionSSH, SessionJupyter, SessionVSCode) that make the agent
	// refuse it (OutcomeRefusedPeople) when its fresh sample sees one
	// connected: the server decided on a heartbeat up to an interval old.
	// Empty on an order the user asked for, and where the rental's
	// /autorelease says wait_for=none. Signed (see CanonicalOrder).
	WaitFor []string `json:"wait_for,omitempty"`
	// IdlePeopleSeconds, on an automatic order with WaitFor, bounds the
	// hold: a session whose person has done nothing for this long
	// (Session.ActiveAt) no longer refuses it: a Jupyter tab left open
	// overnight is not a person at work. 0: no bound (every session of
	// those kinds holds, as before the field existed). Signed.
	IdlePeopleSeconds int64  `json:"idle_people_s,omitempty"`
	Signature         string `json:"signature"` // lowercase hex HMAC-SHA256, see SignOrder
}

// Outcomes reported in OrderResult.
const (
	OutcomeRejectedSignature = "rejected_signature" // unsigned or bad signature
	OutcomeRejectedExpired   = "rejected_expired"   // expired, or issued too far in the future
	OutcomeRejectedReplay    = "rejected_replay"    // nonce already seen, or issued before the agent's replay record began
	OutcomeRejectedRental    = "rejected_rental"    // for another rental
	OutcomeRejectedInvalid   = "rejected_invalid"   // unknown action, missing fields
	OutcomeRefusedNoCommand  = "refused_no_release_cmd"
	OutcomeRefusedJob        = "refused_job_running"
	OutcomeRefusedBusy       = "refused_busy"
	OutcomeRefusedUnknown    = "refused_unknown"          // the fresh sample could not tell
	OutcomeRefusedState      = "refused_state"            // the agent could not record the nonce (state file not writable): fail safe
	OutcomeRefusedPeople     = "refused_people_connected" // an automatic order, and someone is connected (Order.WaitFor)
	OutcomePreReleaseFailed  = "pre_release_failed"
	OutcomeReleaseStarted    = "release_started"
	OutcomeReleaseFailed     = "release_failed"
	OutcomeDone              = "done"
)

// OrderResult is the body of POST /v1/agent/orders/{id}/result. An order may
// get several results, one per step (release_started, then done).
type OrderResult struct {
	OrderID  string    `json:"order_id"`
	Outcome  string    `json:"outcome"`
	ExitCode *int      `json:"exit_code,omitempty"`
	Message  string    `json:"message,omitempty"`
	Verdict  Verdict   `json:"verdict,omitempty"` // of the fresh sample, when one was taken
	At       time.Time `json:"at"`
	// Notes are Message as codes with their values (at most MaxNotes),
	// so the server words them in its user's language; Message stays
	// for logs and for servers too old to read them. A command's output
	// is not a note: it stays the host's own words.
	Notes []Note `json:"notes,omitempty"`
}

// Note is one reason of an agent, as a code and its values, each value
// already formatted as the agent's English text shows it ("87" for 87 %).
type Note struct {
	Code string   `json:"code"`
	Args []string `json:"args,omitempty"`
}

// MaxNotes bounds OrderResult.Notes; the server drops the rest.
const MaxNotes = 16

// Note codes, with their values and the agent's English words.
const (
	NoteGPUUtil      = "gpu_util"       // index, util %: "gpu0 util 87%"
	NoteGPUUtilMean  = "gpu_util_mean"  // index, max %, mean %, samples: "gpu0 util max 87% (mean 41% of 6 samples)"
	NoteJob          = "job"            // pid: "job running (pid 4242)"
	NoteWatchGrew    = "watch_grew"     // path: "watch /data/out grew"
	NoteCPU          = "cpu"            // %: "cpu 64%"
	NoteNet          = "net"            // KiB/s: "net 2048 KiB/s"
	NoteTransfers    = "transfers"      // names: "rsync, tar running"
	NoteDisk         = "disk"           // MB/s: "disk 180 MB/s"
	NoteGPUError     = "gpu_error"      // the library's error: "gpu: nvml: ..."
	NoteNoGPUs       = "no_gpus"        // "no gpus seen"
	NoteGPUNoReading = "gpu_no_reading" // index, why: "gpu0: no utilisation reading"
	NoteCPUNoReading = "cpu_no_reading" // why: "cpu: no reading yet"
	NoteNetNoReading = "net_no_reading" // why: "net: no reading yet"
	NoteNoCommand    = "no_release_cmd" // "no --release-cmd on this host: the agent only reports"
	NoteJobPID       = "job_pid"        // pid: "wrapped job pid 4242 is running"
	NoteConnected    = "connected"      // count: "2 connected:"
	NoteSession      = "session"        // kind, user, client: "ssh alice from 10.0.0.5"
	NoteSessionFrom  = "session_from"   // kind, client (no user known): "jupyter from 10.0.0.5"
)

// Kinds of PolicyRefusedCode.
const (
	PolicyRefusedUnsigned     = "unsigned"
	PolicyRefusedBadSignature = "bad_signature"
	PolicyRefusedExpired      = "expired"       // check the host's clock
	PolicyRefusedFuture       = "not_yet_valid" // issued in the future: check the host's clock
	PolicyRefusedInvalid      = "invalid"
	PolicyRefusedRental       = "other_rental"
	PolicyRefusedOlder        = "older"
	PolicyRefusedState        = "state" // the agent could not record it
)

// EnrolTokenPrefix starts every enrolment token. A rental's own token is
// 43 characters of base64url and never starts with it, so the agent and
// the hub can tell the two apart without a lookup.
//
// An enrolment token is one user's, not one rental's: an agent holding
// it may only announce the instance it runs on (a heartbeat carrying
// Instance) and learn whether the user logged it. It reads nothing of the
// ledger and acts on no rental; once the user logs the instance the hub
// hands the agent that rental's own token in HeartbeatResponse.Enrolment.
const EnrolTokenPrefix = "enrol-"

// IsEnrolToken reports whether tok is an enrolment token.
func IsEnrolToken(tok string) bool {
	return len(tok) > len(EnrolTokenPrefix) && tok[:len(EnrolTokenPrefix)] == EnrolTokenPrefix
}

// Platform-fact sources: where InstanceFacts.Platform was read.
const (
	SourceEnv      = "env"      // an environment variable the platform sets
	SourceFile     = "file"     // a file the platform puts in the instance
	SourceMetadata = "metadata" // the cloud's link-local metadata service
	SourceDMI      = "dmi"      // the VM's firmware strings
)

// InstanceFacts are what the agent found about the instance it runs on.
// Every field is a claim (an environment variable or a file can be set by
// whoever built the image): the server shows them, keys announcements by
// them and never charges money on them without the user's tap. Unknown
// fields are empty; nothing is guessed. Strings are at most MaxStrLen.
type InstanceFacts struct {
	// Platform is the profile key of the platform ("runpod", "vast",
	// "autodl", "aws", "gcp", "azure", "alibaba", "tencent") or "" when
	// nothing the agent read names one.
	Platform string `json:"platform,omitempty"`
	// PlatformSource says where Platform was read: SourceEnv, SourceFile,
	// SourceMetadata or SourceDMI, and the name read, e.g.
	// "env RUNPOD_POD_ID".
	PlatformSource string `json:"platform_source,omitempty"`
	// ID is the platform's own ID of the instance (RunPod pod ID, Vast.ai
	// CONTAINER_ID, AutoDL container UUID, EC2 instance ID...), or "".
	ID string `json:"id,omitempty"`
	// MachineID is the SHA-256 (hex) of /etc/machine-id, or "" where
	// there is none; it tells VMs apart where the platform gives no ID.
	MachineID string `json:"machine_id,omitempty"`
	// BootedAt is when the instance last started: the start of PID 1 as
	// the kernel counts it, which is the container's start inside a
	// container and the boot of a VM. Zero if unreadable.
	BootedAt time.Time `json:"booted_at,omitzero"`
}

// Key returns the identity the hub keys announcements and bindings by:
// "PLATFORM:ID" when the platform gives an ID, else "machine:MACHINEID",
// else "host:HOSTNAME"; "" when there is nothing to key by.
func (f InstanceFacts) Key(hostname string) string {
	switch {
	case f.ID != "":
		p := f.Platform
		if p == "" {
			p = "unknown"
		}
		return p + ":" + f.ID
	case f.MachineID != "":
		return "machine:" + f.MachineID
	case hostname != "":
		return "host:" + hostname
	}
	return ""
}

// Shutdown is the agent's last word before it stops on a signal.
type Shutdown struct {
	At time.Time `json:"at"` // the agent's clock when the signal came
	// Host is true when the operating system itself is going down
	// (systemd says "stopping"), false when only the agent was stopped.
	Host bool `json:"host"`
}

// Enrolment states in EnrolmentAnswer.State.
const (
	// EnrolWaiting: the user was shown the instance and has not answered.
	EnrolWaiting = "waiting"
	// EnrolIgnored: the user said "Not mine"; the agent slows down to
	// one heartbeat per RetryAfter and announces nothing new.
	EnrolIgnored = "ignored"
	// EnrolBound: the user logged the instance as Rental; Token is that
	// rental's own token, which the agent uses from now on.
	EnrolBound = "bound"
	// EnrolHeld: too many instances wait for the user's answer already;
	// this one is kept back (not stored) until they answer or it retries.
	EnrolHeld = "held"
)

// EnrolmentAnswer is the hub's answer to a heartbeat sent with an
// enrolment token.
type EnrolmentAnswer struct {
	State   string `json:"state"`             // EnrolWaiting, EnrolIgnored, EnrolBound or EnrolHeld
	Message string `json:"message,omitempty"` // for the agent's log
	Rental  string `json:"rental,omitempty"`  // when bound
	// Token is the rental's own agent token, when bound. It is in clear
	// only here and only until the agent has reported with it once.
	Token string `json:"token,omitempty"`
	// RetryAfter asks the agent to wait this many seconds before its
	// next heartbeat (0: its own interval).
	RetryAfter int `json:"retry_after_s,omitempty"`
}
