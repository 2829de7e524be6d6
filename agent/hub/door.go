package hub

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/internal/clip"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/perf"
)

// The door: a body an agent sends is read, decoded, checked and cleaned
// here, once, before anything else in the hub reads it. What passes is a
// heartbeat or an orderResult, whose every field the hub reads is within
// its bounds: the code after the door trusts what it holds and clips,
// filters or range-checks nothing again (TestDoor_OnlyTheDoorCleans). A
// body that cannot be taken is answered here (413, or 400 with what was
// wrong) and changes nothing.
//
// Text the hub keeps from an agent is made printable, then clipped to its
// bound in bytes (text): shown on cards, in /why and in logs, it must not
// carry a line break, a terminal escape or a bidirectional override.
// Where a person reads it cut short it ends in "…"; an identity (an
// instance ID, a host name, a code) is cut without one. The one
// exception is an order result's message, which may be a command's
// output and keeps its lines.

// Bounds of what the hub keeps from an agent, in bytes unless said.
const (
	maxBootID       = 64
	maxReasons      = 512 // the reasons joined with "; "
	maxCommand      = 200 // a wrapped job's command line
	maxClient       = 64  // a session's client address
	maxUser         = 32  // a session's login
	maxGPUSource    = 16
	maxGPUModel     = 64
	maxCode         = 40 // a policy refusal's code, a note's code, an outcome
	maxMessage      = 500
	maxNoteArgs     = 8 // values per note
	maxNoteArg      = 200
	maxJobSeconds   = 366 * 86400 // a job's duration; longer is no reading
	maxIdleSeconds  = 366 * 86400
	maxSamples      = 100_000
	maxVersionShown = 20 // of a version or verdict refused, in the refusal
)

// heartbeat is a wire.HeartbeatRequest that passed the door
// (readHeartbeat). Every field the hub reads was cleaned in place:
// strings printable and within their bounds, sessions of known kinds
// only, utilisations within 0-100 % or nil, a job's duration within a
// year or zero, instance facts as the hub keys them. What the hub reduces
// a field to is computed here once. Fields the hub does not read are left
// as decoded: whoever starts reading one cleans it in clean first.
type heartbeat struct {
	wire.HeartbeatRequest
	reasons  string          // Reasons joined with "; " (Reasons itself is nil)
	gpu      ledger.GPUFacts // Host's GPUs as the agent's state keeps them
	gpuModel string          // with Instance, the first GPU's display name, as an announced instance keeps it
	key      string          // the instance's key (wire.InstanceFacts.Key), "" without Instance or nothing to key by
}

// orderResult is a wire.OrderResult that passed the door (readResult):
// its outcome and message within their bounds, its notes bounded in
// number and their codes and values printable and clipped.
type orderResult struct{ wire.OrderResult }

// decodeBody reads a JSON body of at most wire.MaxBodyBytes into v. It
// answers 413 or 400 itself and returns false on failure.
func decodeBody(w http.ResponseWriter, r *http.Request, v any) (bool, string) {
	return decodeBodyMax(w, r, v, wire.MaxBodyBytes)
}

// decodeBodyMax is decodeBody for a body of at most most bytes.
func decodeBodyMax(w http.ResponseWriter, r *http.Request, v any, most int64) (bool, string) {
	body := http.MaxBytesReader(w, r.Body, most)
	b, err := io.ReadAll(body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body over %d bytes", most))
			return false, resultTooLarge
		}
		writeError(w, http.StatusBadRequest, "could not read the body")
		return false, resultBadRequest
	}
	if err := json.Unmarshal(b, v); err != nil {
		writeError(w, http.StatusBadRequest, "malformed JSON: "+clip.Bytes(err.Error(), 200, "…"))
		return false, resultBadRequest
	}
	return true, ""
}

// readHeartbeat decodes the heartbeat in the body of r, checks it with
// check (which returns why it cannot be taken, or "") and cleans it. On
// failure it answers 413 or 400 itself and returns nil and the result
// counted.
func readHeartbeat(w http.ResponseWriter, r *http.Request, check func(*wire.HeartbeatRequest) string) (*heartbeat, string) {
	hb := new(heartbeat)
	if ok, res := decodeBody(w, r, &hb.HeartbeatRequest); !ok {
		return nil, res
	}
	if msg := check(&hb.HeartbeatRequest); msg != "" {
		writeError(w, http.StatusBadRequest, msg)
		return nil, resultBadRequest
	}
	hb.clean()
	return hb, ""
}

// checkHeartbeat rejects a heartbeat that is not one: a wrong version or
// verdict, counts that cannot be, more GPUs or sessions than an agent
// sends.
func checkHeartbeat(hb *wire.HeartbeatRequest) string {
	if msg := checkVersion(hb); msg != "" {
		return msg
	}
	switch hb.Verdict {
	case wire.VerdictBusy, wire.VerdictIdle, wire.VerdictUnknown:
	default:
		return fmt.Sprintf("verdict %q must be busy, idle or unknown", clip.Bytes(string(hb.Verdict), maxVersionShown, "…"))
	}
	if hb.Samples < 0 || hb.BusySamples < 0 || hb.IdleSamples < 0 || hb.UnknownSamples < 0 ||
		hb.BusySamples+hb.IdleSamples+hb.UnknownSamples > hb.Samples || hb.Samples > maxSamples {
		return "sample counts are inconsistent"
	}
	if hb.IdleSeconds < 0 || hb.IdleSeconds > maxIdleSeconds {
		return "idle_seconds out of range"
	}
	if msg := checkGPUs(hb); msg != "" {
		return msg
	}
	if len(hb.Sessions) > wire.MaxSessions {
		return fmt.Sprintf("more than %d sessions", wire.MaxSessions)
	}
	return ""
}

// checkEnrolHeartbeat rejects an enrolment heartbeat that cannot be
// taken: a wrong version, no instance facts, too many GPUs. Its samples
// are not looked at: nothing of them is recorded.
func checkEnrolHeartbeat(hb *wire.HeartbeatRequest) string {
	if msg := checkVersion(hb); msg != "" {
		return msg
	}
	if hb.Instance == nil {
		return msgEnrolNoFacts
	}
	return checkGPUs(hb)
}

func checkVersion(hb *wire.HeartbeatRequest) string {
	if hb.Version != "" && hb.Version != wire.Version {
		return fmt.Sprintf("unsupported protocol version %q: this server speaks %s", clip.Bytes(hb.Version, maxVersionShown, "…"), wire.Version)
	}
	return ""
}

func checkGPUs(hb *wire.HeartbeatRequest) string {
	if len(hb.GPUs) > wire.MaxGPUs || len(hb.Host.GPUs) > wire.MaxGPUs {
		return fmt.Sprintf("more than %d GPUs", wire.MaxGPUs)
	}
	return ""
}

// clean makes a checked heartbeat, as decoded, one the hub can trust
// (see heartbeat). It changes what the decoder made in place.
func (hb *heartbeat) clean() {
	hb.BootID = text(hb.BootID, maxBootID, "…")
	hb.reasons, hb.Reasons = text(strings.Join(hb.Reasons, "; "), maxReasons, "…"), nil
	hb.Work = text(hb.Work, wire.MaxStrLen, "…")
	hb.PolicyRefused = text(hb.PolicyRefused, wire.MaxStrLen, "…")
	hb.PolicyRefusedCode = text(hb.PolicyRefusedCode, maxCode, "")

	hb.Host.Hostname = text(hb.Host.Hostname, wire.MaxStrLen, "")
	hb.Host.GPUSource = text(hb.Host.GPUSource, maxGPUSource, "…")
	hb.gpu = ledger.GPUFacts{Source: hb.Host.GPUSource, Count: len(hb.Host.GPUs)}
	if len(hb.Host.GPUs) > 0 {
		name := text(hb.Host.GPUs[0].Name, wire.MaxStrLen, "")
		hb.gpu.Model = clip.Bytes(name, maxGPUModel, "…")
		if hb.Instance != nil {
			hb.gpuModel = clip.Bytes(ledger.GPUDisplayName(name), maxGPUModel, "")
		}
	}
	for i := range hb.GPUs {
		g := &hb.GPUs[i]
		g.UtilMean, g.UtilMax = percent(g.UtilMean), percent(g.UtilMax)
	}

	if j := hb.Job; j != nil {
		j.Command = text(j.Command, maxCommand, "…")
		if !ledger.ValidLabel(j.Label) {
			j.Label = "" // an invalid label is dropped, not stored
		}
		if math.IsNaN(j.DurationSeconds) || j.DurationSeconds < 0 || j.DurationSeconds > maxJobSeconds {
			j.DurationSeconds = 0
		}
	}

	// Kinds this server does not know (a newer agent's) are left out, so
	// they hold nothing.
	people := hb.Sessions[:0]
	for _, s := range hb.Sessions {
		switch s.Kind {
		case wire.SessionSSH, wire.SessionJupyter, wire.SessionVSCode:
		default:
			continue
		}
		s.Client, s.User = text(s.Client, maxClient, "…"), text(s.User, maxUser, "…")
		people = append(people, s)
	}
	hb.Sessions = people

	if f := hb.Instance; f != nil {
		// The platform only if it names a known profile (its key).
		f.Platform, _ = ledger.CanonicalPlatform(clip.Bytes(f.Platform, wire.MaxStrLen, ""))
		f.PlatformSource = text(f.PlatformSource, wire.MaxStrLen, "…")
		f.ID = text(f.ID, wire.MaxStrLen, "")
		f.MachineID = text(f.MachineID, wire.MaxStrLen, "")
		hb.key = f.Key(hb.Host.Hostname)
	}
}

// percent returns p if it is a utilisation (0 to 100), else nil: no
// reading.
func percent(p *float64) *float64 {
	if p == nil || !(*p >= 0 && *p <= 100) {
		return nil
	}
	return p
}

// readResult decodes the order result in the body of r and cleans it. On
// failure it answers 413 or 400 itself and returns nil.
func readResult(w http.ResponseWriter, r *http.Request) *orderResult {
	var in wire.OrderResult
	if ok, _ := decodeBody(w, r, &in); !ok {
		return nil
	}
	res := &orderResult{OrderResult: in}
	// Clipped, never made printable: an outcome is compared whole with
	// the known ones, and one this long is none of them.
	res.Outcome = clip.Bytes(res.Outcome, maxCode, "…")
	res.Message = clip.Bytes(res.Message, maxMessage, "…")
	// At most wire.MaxNotes notes of at most maxNoteArgs values; the
	// rest are dropped.
	res.Notes = res.Notes[:min(len(res.Notes), wire.MaxNotes)]
	for i := range res.Notes {
		n := &res.Notes[i]
		n.Code = text(n.Code, maxCode, "")
		n.Args = n.Args[:min(len(n.Args), maxNoteArgs)]
		for j := range n.Args {
			n.Args[j] = text(n.Args[j], maxNoteArg, "…")
		}
	}
	return res
}

// text returns s printable and clipped to most bytes, ending in tail
// where it was cut.
func text(s string, most int, tail string) string {
	return clip.Bytes(printable(s), most, tail)
}

// printable returns s without the characters that are not text a person
// reads: control characters (a newline in a host name breaks a card into
// lines; an escape sequence is obeyed by a terminal showing the log),
// format characters (a right-to-left override reorders what follows it,
// so a forged name can read as another) and invalid UTF-8 (which the JSON
// decoder turned into U+FFFD). What an agent claims is shown on cards and
// in logs; only its printable part is kept. It stops reading after 4 KiB:
// what is kept is clipped far shorter.
func printable(s string) string {
	const most = 4 << 10
	if len(s) > most {
		s = clip.Bytes(s, most, "")
	}
	if strings.IndexFunc(s, unprintable) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unprintable(r) {
			return -1
		}
		return r
	}, s)
}

func unprintable(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError
}

// benchReport is a wire.BenchReport that passed the door (readBench):
// its ID usable as a key, its bench bounded by perf.Bound (a figure out
// of any card's range is zeroed, as not measured, and named in bounded),
// its text printable and clipped, each GPU's Model filled from its name
// where the agent left it empty. The rest of the hub stores it as it is.
type benchReport struct {
	wire.BenchReport
	bounded []string
}

// Bounds of a bench report's text the hub keeps, in bytes.
const (
	maxReportID   = 64
	maxBenchShort = 64  // versions, a compute capability, a model, a skip's name
	maxBenchName  = 128 // a GPU's name and UUID, a CPU model
	maxBenchPath  = 256 // the disk path, the download URL, a skip's why
	// maxBoundedNames and maxBoundedBytes bound the names of the figures
	// perf.Bound changed that a report keeps: a forged bench with every
	// figure of 16 GPUs and 64 skips wrong has hundreds (about 10 KB),
	// more than the store keeps with a bench (4 KiB of JSON) and more
	// than anyone reads. The first ones are kept, then one "…+N" for the
	// N left out, which reads the same in every language.
	maxBoundedNames = 64
	maxBoundedBytes = 2 << 10
)

// readBench decodes the bench report in the body of r (at most
// wire.MaxBenchBodyBytes), checks that it is one and cleans it. On
// failure it answers 413 or 400 itself (with what was wrong) and returns
// nil and the result counted.
func readBench(w http.ResponseWriter, r *http.Request) (*benchReport, string) {
	var in wire.BenchReport
	if ok, res := decodeBodyMax(w, r, &in, wire.MaxBenchBodyBytes); !ok {
		return nil, res
	}
	if msg := checkBench(&in); msg != "" {
		writeError(w, http.StatusBadRequest, msg)
		return nil, resultBadRequest
	}
	rep := &benchReport{BenchReport: in}
	rep.clean()
	return rep, ""
}

// checkBench rejects a body that is not a bench report: a wrong version,
// no usable ID (the key a retry is recognised by), an unknown source.
// Unknown fields were ignored by the decoder: a newer agent's are fine.
func checkBench(in *wire.BenchReport) string {
	if in.Version != "" && in.Version != wire.Version {
		return fmt.Sprintf("unsupported protocol version %q: this server speaks %s", clip.Bytes(in.Version, maxVersionShown, "…"), wire.Version)
	}
	if in.ID == "" || len(in.ID) > maxReportID || printable(in.ID) != in.ID || strings.ContainsRune(in.ID, ' ') {
		return fmt.Sprintf("a bench report needs an id of 1 to %d printable bytes without spaces", maxReportID)
	}
	switch in.Bench.Source {
	case "cuda", "simulate", "none":
	default:
		return fmt.Sprintf("bench source %q must be cuda, simulate or none", clip.Bytes(printable(in.Bench.Source), maxVersionShown, "…"))
	}
	return ""
}

// clean bounds the report's figures (perf.Bound) and makes its text
// printable and clipped, in place.
func (rep *benchReport) clean() {
	rep.AgentVersion = text(rep.AgentVersion, maxBenchShort, "…")
	rep.BootID = text(rep.BootID, maxBootID, "…")
	b, bounded := perf.Bound(rep.Bench)
	b.DriverVersion = text(b.DriverVersion, maxBenchShort, "…")
	b.CUDADriver = text(b.CUDADriver, maxBenchShort, "…")
	for i := range b.GPUs {
		g := &b.GPUs[i]
		g.Name = text(g.Name, maxBenchName, "…")
		g.UUID = text(g.UUID, maxBenchName, "")
		g.ComputeCap = text(g.ComputeCap, maxBenchShort, "")
		g.Model = text(g.Model, maxBenchShort, "…")
		if g.Model == "" {
			g.Model = clip.Bytes(perf.DisplayName(g.Name), maxBenchShort, "…")
		}
	}
	b.Host.CPUModel = text(b.Host.CPUModel, maxBenchName, "…")
	b.Host.DiskPath = text(b.Host.DiskPath, maxBenchPath, "…")
	b.Host.DownloadURL = text(b.Host.DownloadURL, maxBenchPath, "…")
	for i := range b.Skipped {
		s := &b.Skipped[i]
		s.What = text(s.What, maxBenchShort, "…")
		s.Why = text(s.Why, maxBenchPath, "…")
	}
	if b.Torch != nil {
		b.Torch.Version = text(b.Torch.Version, maxBenchShort, "…")
	}
	rep.Bench, rep.bounded = b, capBounded(bounded)
}

// capBounded returns the first of names that fit maxBoundedNames and
// maxBoundedBytes (each counted as a JSON string, quoted, with its
// comma), then "…+N" for the N left out; names itself when all fit.
func capBounded(names []string) []string {
	used := 0
	for i, n := range names {
		used += len(n) + 3
		if i == maxBoundedNames || used > maxBoundedBytes {
			return append(names[:i:i], "…+"+strconv.Itoa(len(names)-i))
		}
	}
	return names
}
