// Package platform tells the agent which instance it runs on: the
// platform (RunPod, Vast.ai, AutoDL, AWS, GCP, Azure), the platform's own
// ID of the instance, a hash of the machine-id and when the instance last
// started. docs/platforms.md ("What an instance knows about itself") gives
// the sources of every name read here.
//
// Everything read is a claim (an environment variable or a file can be set
// by whoever built the image); what nothing names stays unknown, never
// guessed. The package reads plain files and environment variables, so it
// builds and runs everywhere; off Linux the files are missing and the
// facts unknown.
//
// The server's platforms are listed once, as connector.Spec values in a
// connector.Registry (cmd/gpuledger); this package keeps its own table of
// what names a platform from inside an instance, and does not read that
// list. The connectors import the ledger, and the agent must not link it
// (internal/boundary): the agent ships small to rented machines, with no
// storage or chat of its own. The two meet only in the profile key
// ("runpod") the agent reports and the ledger stores. Nor do they cover
// the same platforms: AWS, Google Cloud and Azure are detected here but
// have no connector, and Lambda has a connector but nothing to detect.
package platform

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/internal/clip"
)

// Env is what Detect reads, injectable so that a test can pose as any
// platform. The zero value reads nothing; OS returns the real one.
type Env struct {
	// Getenv reads one environment variable; nil reads none.
	Getenv func(string) string
	// Environ lists the environment as KEY=VALUE, for "any AutoDL*
	// variable"; nil lists none.
	Environ func() []string
	// Root is where absolute paths are read from ("" is "/").
	Root string
	// Client asks the metadata services; nil uses one that bypasses any
	// proxy (Azure requires it) with the Timeout.
	Client *http.Client
	// MetadataURL replaces every cloud's metadata address (tests, and
	// GPULEDGER_AGENT_METADATA_URL); "" uses the real ones.
	MetadataURL string
	// Timeout bounds all metadata requests of one Detect together;
	// default 1 s, so a slow or absent service delays the agent's start
	// by no more than that.
	Timeout time.Duration
	// NoProbe reads the environment and files but neither DMI nor the
	// metadata services (--simulate: the host's firmware is not the one
	// a test poses as).
	NoProbe bool
}

// OS returns the Env of this process: its environment, the root file
// system and the real metadata addresses.
func OS() Env {
	return Env{Getenv: os.Getenv, Environ: os.Environ, Root: "/"}
}

// DefaultTimeout bounds the metadata requests of one Detect.
const DefaultTimeout = time.Second

// maxFile bounds what is read of any one file.
const maxFile = 64 << 10

func (e Env) getenv(k string) string {
	if e.Getenv == nil {
		return ""
	}
	return strings.TrimSpace(e.Getenv(k))
}

// read returns the file at the absolute path p below Root, or nil.
func (e Env) read(p string) []byte {
	root := e.Root
	if root == "" {
		root = "/"
	}
	f, err := os.Open(filepath.Join(root, p))
	if err != nil {
		return nil
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFile))
	if err != nil {
		return nil
	}
	return b
}

func (e Env) exists(p string) bool {
	root := e.Root
	if root == "" {
		root = "/"
	}
	_, err := os.Stat(filepath.Join(root, p))
	return err == nil
}

// Detect reads the facts of the instance it runs on. Order: the
// platforms' environment variables, the AutoDL help file, then (on a VM,
// never in a container, whose DMI is the host's) the firmware strings,
// then only the metadata service of the cloud the firmware named. It
// never fails: what it cannot read stays empty.
func Detect(ctx context.Context, env Env) wire.InstanceFacts {
	var f wire.InstanceFacts
	f.Platform, f.PlatformSource, f.ID = fromEnv(env)
	if f.Platform == "" {
		f.Platform, f.PlatformSource, f.ID = fromFiles(env)
	}
	if f.Platform == "" && !env.NoProbe && !inContainer(env) {
		f.Platform, f.PlatformSource, f.ID = fromDMI(ctx, env)
	}
	f.Platform = clip.Bytes(f.Platform, wire.MaxStrLen, "")
	f.PlatformSource = clip.Bytes(f.PlatformSource, wire.MaxStrLen, "")
	f.ID = clip.Bytes(f.ID, wire.MaxStrLen, "")
	if id := bytes.TrimSpace(env.read("/etc/machine-id")); len(id) > 0 {
		h := sha256.Sum256(id)
		f.MachineID = hex.EncodeToString(h[:])
	}
	f.BootedAt = bootTime(env.read("/proc/stat"), env.read("/proc/1/stat"))
	return f
}

// fromEnv reads the variables RunPod, Vast.ai and AutoDL set. RunPod is
// named only by RUNPOD_POD_ID: RUNPOD_API_KEY and the like are also set
// on users' own machines for runpodctl. Vast.ai's CONTAINER_ID is a
// common name, so it counts only with a variable of Vast's own.
func fromEnv(env Env) (platform, source, id string) {
	if v := env.getenv("RUNPOD_POD_ID"); v != "" {
		return "runpod", "env RUNPOD_POD_ID", v
	}
	if v := env.getenv("CONTAINER_ID"); v != "" {
		for _, k := range []string{"VAST_CONTAINERLABEL", "VAST_TCP_PORT_22"} {
			if env.getenv(k) != "" {
				return "vast", "env CONTAINER_ID+" + k, v
			}
		}
	}
	if v := env.getenv("AutoDLContainerUUID"); v != "" {
		return "autodl", "env AutoDLContainerUUID", v
	}
	if env.Environ != nil {
		var names []string
		for _, kv := range env.Environ() {
			k, v, _ := strings.Cut(kv, "=")
			if strings.HasPrefix(k, "AutoDL") && strings.TrimSpace(v) != "" {
				names = append(names, k)
			}
		}
		if len(names) > 0 {
			// The first name in sort order, so that the source reads
			// the same at every start.
			first := names[0]
			for _, n := range names[1:] {
				if n < first {
					first = n
				}
			}
			return "autodl", "env " + first, ""
		}
	}
	return "", "", ""
}

// autodlHelp is the file AutoDL instances carry with export lines of
// their variables (community knowledge: a fallback for a shell that lacks
// them).
const autodlHelp = "/init/others/help"

func fromFiles(env Env) (platform, source, id string) {
	b := env.read(autodlHelp)
	if b == nil {
		return "", "", ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		rest, ok := strings.CutPrefix(line, "export AutoDLContainerUUID=")
		if !ok {
			continue
		}
		v := strings.Trim(strings.TrimSpace(rest), `"'`)
		if v != "" {
			return "autodl", "file " + autodlHelp, v
		}
	}
	return "", "", ""
}

// inContainer reports whether the agent runs in a container, where
// /sys/class/dmi/id describes the host's firmware, not the instance's.
func inContainer(env Env) bool {
	if env.exists("/.dockerenv") || env.exists("/run/.containerenv") {
		return true
	}
	cg := string(env.read("/proc/1/cgroup"))
	for _, w := range []string{"docker", "kubepods", "containerd", "lxc", "libpod", "crio"} {
		if strings.Contains(cg, w) {
			return true
		}
	}
	for _, kv := range bytes.Split(env.read("/proc/1/environ"), []byte{0}) {
		if bytes.HasPrefix(kv, []byte("container=")) {
			return true
		}
	}
	return false
}

// Azure's chassis asset tag, the same on every Azure VM.
const azureAssetTag = "7783-7084-3265-9085-8269-3286-77"

func (e Env) dmi(name string) string {
	return strings.TrimSpace(string(e.read("/sys/class/dmi/id/" + name)))
}

// fromDMI names AWS, GCP or Azure from the VM's firmware strings, then
// asks that cloud's metadata service (only that one) for the ID where the
// firmware does not carry it.
func fromDMI(ctx context.Context, env Env) (platform, source, id string) {
	board := env.dmi("board_asset_tag")
	switch {
	case env.dmi("sys_vendor") == "Amazon EC2" || strings.HasPrefix(board, "i-"):
		source = "dmi sys_vendor"
		if env.dmi("sys_vendor") != "Amazon EC2" {
			source = "dmi board_asset_tag"
		}
		if strings.HasPrefix(board, "i-") {
			return "aws", source, board // Nitro: the instance ID, no network needed
		}
		return "aws", source, metadata(ctx, env, awsID)
	case env.dmi("product_name") == "Google Compute Engine":
		return "gcp", "dmi product_name", metadata(ctx, env, gcpID)
	case env.dmi("chassis_asset_tag") == azureAssetTag:
		return "azure", "dmi chassis_asset_tag", metadata(ctx, env, azureID)
	}
	return "", "", ""
}

// metadata runs ask under the Timeout and returns the ID it read, or "".
func metadata(ctx context.Context, env Env, ask func(context.Context, *http.Client, string) string) string {
	d := env.Timeout
	if d <= 0 {
		d = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	c := env.Client
	if c == nil {
		// Link-local addresses are never reached through a proxy.
		c = &http.Client{Timeout: d, Transport: &http.Transport{Proxy: nil}}
	}
	base := strings.TrimRight(env.MetadataURL, "/")
	if base == "" {
		base = "http://169.254.169.254" // AWS, Azure and GCP all answer here
	}
	return strings.TrimSpace(ask(ctx, c, base))
}

// get does one metadata request and returns the body of a 200, or "".
func get(ctx context.Context, c *http.Client, method, url string, hdr map[string]string) string {
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return ""
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := c.Do(req)
	if err != nil {
		return ""
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 4096))
	if err != nil || res.StatusCode != http.StatusOK {
		return ""
	}
	return string(b)
}

// awsID asks IMDSv2: a session token first (IMDSv1 may be off), then the
// instance ID with it.
func awsID(ctx context.Context, c *http.Client, base string) string {
	tok := strings.TrimSpace(get(ctx, c, http.MethodPut, base+"/latest/api/token",
		map[string]string{"X-aws-ec2-metadata-token-ttl-seconds": "60"}))
	if tok == "" {
		return ""
	}
	return get(ctx, c, http.MethodGet, base+"/latest/meta-data/instance-id", map[string]string{"X-aws-ec2-metadata-token": tok})
}

func gcpID(ctx context.Context, c *http.Client, base string) string {
	return get(ctx, c, http.MethodGet, base+"/computeMetadata/v1/instance/id", map[string]string{"Metadata-Flavor": "Google"})
}

func azureID(ctx context.Context, c *http.Client, base string) string {
	return get(ctx, c, http.MethodGet, base+"/metadata/instance/compute/vmId?api-version=2021-02-01&format=text",
		map[string]string{"Metadata": "true"})
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's start time: 100 on
// every Linux architecture the agent is built for.
const clockTicks = 100

// bootTime returns when PID 1 started: the kernel's boot (btime in
// /proc/stat) plus PID 1's start time (field 22 of /proc/1/stat, in clock
// ticks after boot). Inside a container PID 1 is the container's first
// process, so this is the container's start; on a VM, its boot. Zero when
// either is unreadable.
func bootTime(stat, one []byte) time.Time {
	var bt int64 = -1
	for _, line := range strings.Split(string(stat), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err == nil && n > 0 {
				bt = n
			}
		}
	}
	// The command name (field 2) is in parentheses and may hold spaces
	// and parentheses: the fields after it start after the last ')'.
	i := bytes.LastIndexByte(one, ')')
	if bt < 0 || i < 0 {
		return time.Time{}
	}
	fields := strings.Fields(string(one[i+1:]))
	// fields[0] is field 3 (state), so field 22 is fields[19].
	if len(fields) < 20 {
		return time.Time{}
	}
	ticks, err := strconv.ParseUint(fields[19], 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.Unix(bt, 0).Add(time.Duration(ticks) * (time.Second / clockTicks)).UTC()
}
