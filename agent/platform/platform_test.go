package platform

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
)

// fixture is a fake root file system: path (absolute) to content.
type fixture map[string]string

func (f fixture) write(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for p, s := range f {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func envOf(m map[string]string) (func(string) string, func() []string) {
	return func(k string) string { return m[k] }, func() []string {
		var out []string
		for k, v := range m {
			out = append(out, k+"="+v)
		}
		return out
	}
}

// procStat and proc1Stat make a boot time of 2026-12-01 10:00:00 UTC
// plus 123.45 s since boot for PID 1.
const (
	btime     = 1796119200 // 2026-12-01T10:00:00Z
	procStat  = "cpu  1 2 3 4\nintr 5\nbtime 1796119200\nprocesses 99\n"
	proc1Stat = "1 (my init (x)) S 0 1 1 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 12345 1000 10 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n"
)

var bootWant = time.Unix(btime, 0).Add(123450 * time.Millisecond).UTC()

func hashOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// fakeMetadata answers as AWS IMDSv2, the GCP metadata server and Azure
// IMDS do, each only with the header its cloud requires.
func fakeMetadata(t *testing.T, hits *atomic.Int32) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /latest/api/token", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Header.Get("X-aws-ec2-metadata-token-ttl-seconds") == "" {
			http.Error(w, "no ttl", 400)
			return
		}
		w.Write([]byte("imds-token"))
	})
	mux.HandleFunc("GET /latest/meta-data/instance-id", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Header.Get("X-aws-ec2-metadata-token") != "imds-token" {
			http.Error(w, "unauthorized", 401)
			return
		}
		w.Write([]byte("i-0metadata123"))
	})
	mux.HandleFunc("GET /computeMetadata/v1/instance/id", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Header.Get("Metadata-Flavor") != "Google" {
			http.Error(w, "missing flavor", 403)
			return
		}
		w.Header().Set("Metadata-Flavor", "Google")
		w.Write([]byte("4520031799277581759\n"))
	})
	mux.HandleFunc("GET /metadata/instance/compute/vmId", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Header.Get("Metadata") != "true" || r.URL.Query().Get("api-version") == "" || r.URL.Query().Get("format") != "text" {
			http.Error(w, "bad request", 400)
			return
		}
		w.Write([]byte("02aab8a4-74ef-476e-8182-f6d2ba4166a6"))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestDetect_Platforms(t *testing.T) {
	base := fixture{"/proc/stat": procStat, "/proc/1/stat": proc1Stat, "/etc/machine-id": "0123456789abcdef0123456789abcdef\n"}
	with := func(extra fixture) fixture {
		f := fixture{}
		for k, v := range base {
			f[k] = v
		}
		for k, v := range extra {
			f[k] = v
		}
		return f
	}
	docker := fixture{"/.dockerenv": ""}
	dmi := func(vendor, product, board, chassis string) fixture {
		return fixture{"/sys/class/dmi/id/sys_vendor": vendor + "\n", "/sys/class/dmi/id/product_name": product + "\n",
			"/sys/class/dmi/id/board_asset_tag": board + "\n", "/sys/class/dmi/id/chassis_asset_tag": chassis + "\n"}
	}
	merge := func(fs ...fixture) fixture {
		out := fixture{}
		for _, f := range fs {
			for k, v := range f {
				out[k] = v
			}
		}
		return out
	}
	cases := []struct {
		name      string
		env       map[string]string
		files     fixture
		simulate  bool
		want      wire.InstanceFacts
		wantProbe bool // the metadata service is asked
	}{
		{name: "runpod", env: map[string]string{"RUNPOD_POD_ID": "abc123xyz", "RUNPOD_DC_ID": "EU-RO-1"}, files: with(docker),
			want: wire.InstanceFacts{Platform: "runpod", PlatformSource: "env RUNPOD_POD_ID", ID: "abc123xyz"}},
		{name: "runpod api key alone is a laptop, not a pod", env: map[string]string{"RUNPOD_API_KEY": "k"}, files: with(nil),
			want: wire.InstanceFacts{}},
		{name: "vast", env: map[string]string{"CONTAINER_ID": "12345678", "VAST_CONTAINERLABEL": "C.12345678"}, files: with(docker),
			want: wire.InstanceFacts{Platform: "vast", PlatformSource: "env CONTAINER_ID+VAST_CONTAINERLABEL", ID: "12345678"}},
		{name: "vast by ssh port", env: map[string]string{"CONTAINER_ID": "777", "VAST_TCP_PORT_22": "40022"}, files: with(docker),
			want: wire.InstanceFacts{Platform: "vast", PlatformSource: "env CONTAINER_ID+VAST_TCP_PORT_22", ID: "777"}},
		{name: "container id alone names nothing", env: map[string]string{"CONTAINER_ID": "777"}, files: with(docker),
			want: wire.InstanceFacts{}},
		{name: "autodl", env: map[string]string{"AutoDLContainerUUID": "9f2e-4b1c", "AutoDLRegion": "west-B"}, files: with(docker),
			want: wire.InstanceFacts{Platform: "autodl", PlatformSource: "env AutoDLContainerUUID", ID: "9f2e-4b1c"}},
		{name: "autodl without uuid", env: map[string]string{"AutoDLRegion": "west-B"}, files: with(docker),
			want: wire.InstanceFacts{Platform: "autodl", PlatformSource: "env AutoDLRegion"}},
		{name: "autodl help file", files: with(merge(docker, fixture{"/init/others/help": "#!/bin/sh\nexport AutoDLRegion=west-B\nexport AutoDLContainerUUID=\"c0ffee-42\"\n"})),
			want: wire.InstanceFacts{Platform: "autodl", PlatformSource: "file /init/others/help", ID: "c0ffee-42"}},
		{name: "aws nitro board asset tag", files: with(dmi("Amazon EC2", "g5.xlarge", "i-0af01c0123456789a", "Amazon EC2")),
			want: wire.InstanceFacts{Platform: "aws", PlatformSource: "dmi sys_vendor", ID: "i-0af01c0123456789a"}},
		{name: "aws metadata", files: with(dmi("Amazon EC2", "p3.2xlarge", "", "")), wantProbe: true,
			want: wire.InstanceFacts{Platform: "aws", PlatformSource: "dmi sys_vendor", ID: "i-0metadata123"}},
		{name: "gcp", files: with(dmi("Google", "Google Compute Engine", "", "")), wantProbe: true,
			want: wire.InstanceFacts{Platform: "gcp", PlatformSource: "dmi product_name", ID: "4520031799277581759"}},
		{name: "azure", files: with(dmi("Microsoft Corporation", "Virtual Machine", "None", "7783-7084-3265-9085-8269-3286-77")), wantProbe: true,
			want: wire.InstanceFacts{Platform: "azure", PlatformSource: "dmi chassis_asset_tag", ID: "02aab8a4-74ef-476e-8182-f6d2ba4166a6"}},
		{name: "plain vm (lambda and the rest)", files: with(dmi("QEMU", "Standard PC (Q35 + ICH9, 2009)", "", "")),
			want: wire.InstanceFacts{}},
		{name: "container on an ec2 host does not read dmi", files: with(merge(docker, dmi("Amazon EC2", "g5.xlarge", "i-0host", ""))),
			want: wire.InstanceFacts{}},
		{name: "podman container", files: with(merge(fixture{"/run/.containerenv": ""}, dmi("Amazon EC2", "g5.xlarge", "i-0host", ""))),
			want: wire.InstanceFacts{}},
		{name: "cgroup says docker", files: with(merge(fixture{"/proc/1/cgroup": "12:pids:/docker/4f1a\n"}, dmi("Google", "Google Compute Engine", "", ""))),
			want: wire.InstanceFacts{}},
		{name: "pid 1 environ says container", files: with(merge(fixture{"/proc/1/environ": "PATH=/bin\x00container=podman\x00"}, dmi("Google", "Google Compute Engine", "", ""))),
			want: wire.InstanceFacts{}},
		{name: "simulate reads no dmi", simulate: true, files: with(dmi("Amazon EC2", "g5.xlarge", "i-0af01c0123456789a", "")),
			want: wire.InstanceFacts{}},
		{name: "simulate still reads the environment", simulate: true, env: map[string]string{"RUNPOD_POD_ID": "pod9"}, files: with(nil),
			want: wire.InstanceFacts{Platform: "runpod", PlatformSource: "env RUNPOD_POD_ID", ID: "pod9"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var hits atomic.Int32
			md := fakeMetadata(t, &hits)
			getenv, environ := envOf(c.env)
			got := Detect(t.Context(), Env{Getenv: getenv, Environ: environ, Root: c.files.write(t), MetadataURL: md.URL, NoProbe: c.simulate})
			want := c.want
			want.MachineID = hashOf("0123456789abcdef0123456789abcdef")
			want.BootedAt = bootWant
			if got != want {
				t.Errorf("Detect:\n got %+v\nwant %+v", got, want)
			}
			if probed := hits.Load() > 0; probed != c.wantProbe {
				t.Errorf("metadata asked %d times, want asked: %v", hits.Load(), c.wantProbe)
			}
		})
	}
}

// TestDetect_NothingReadable: a container with nothing (no /proc, no
// machine-id, no variables) is all unknown, never guessed.
func TestDetect_NothingReadable(t *testing.T) {
	got := Detect(t.Context(), Env{Getenv: func(string) string { return "" }, Root: fixture{"/.dockerenv": ""}.write(t), MetadataURL: "http://127.0.0.1:1"})
	if got != (wire.InstanceFacts{}) {
		t.Fatalf("got %+v, want all unknown", got)
	}
}

// TestDetect_MetadataHangs: a metadata service that never answers costs
// at most the 1 s timeout; the platform named by DMI stays, the ID is
// unknown.
func TestDetect_MetadataHangs(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	root := fixture{"/sys/class/dmi/id/product_name": "Google Compute Engine\n"}.write(t)
	start := time.Now()
	got := Detect(t.Context(), Env{Getenv: func(string) string { return "" }, Root: root, MetadataURL: srv.URL})
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Fatalf("Detect took %s with a hanging metadata service, want about 1 s at most", d)
	}
	if got.Platform != "gcp" || got.ID != "" {
		t.Fatalf("got %+v, want gcp with no ID", got)
	}
}

// TestDetect_Clipped: a value longer than wire.MaxStrLen is clipped.
func TestDetect_Clipped(t *testing.T) {
	long := strings.Repeat("x", 1000)
	got := Detect(t.Context(), Env{Getenv: func(k string) string {
		if k == "RUNPOD_POD_ID" {
			return long
		}
		return ""
	}, Root: t.TempDir()})
	if len(got.ID) > wire.MaxStrLen || got.Platform != "runpod" {
		t.Fatalf("got ID of %d bytes, platform %q", len(got.ID), got.Platform)
	}
}

func TestBootTime(t *testing.T) {
	cases := []struct {
		name      string
		stat, one string
		want      time.Time
	}{
		{"ok", procStat, proc1Stat, bootWant},
		{"no btime", "cpu 1\n", proc1Stat, time.Time{}},
		{"short pid 1 stat", procStat, "1 (init) S 0 1\n", time.Time{}},
		{"garbage start", procStat, strings.Replace(proc1Stat, " 12345 ", " x ", 1), time.Time{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := bootTime([]byte(c.stat), []byte(c.one)); !got.Equal(c.want) {
				t.Errorf("got %v want %v", got, c.want)
			}
		})
	}
}
