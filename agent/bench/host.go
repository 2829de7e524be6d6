package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/agent"
	"github.com/gpuledger/gpuledger/perf"
)

// Host test bounds.
const (
	// diskSize is what the disk test writes at most: a few hundred MB,
	// past any drive's write cache burst at the sizes rented hosts have,
	// yet a fraction of a second on NVMe.
	diskSize = 256 << 20
	// diskChunk is one write or read; a multiple of every logical block
	// size, as O_DIRECT wants.
	diskChunk = 4 << 20
	// diskMin is the least free space worth a test: under it the figure
	// would be the cache's.
	diskMin = 16 << 20
	// downloadMax bounds the bytes one download test reads.
	downloadMax = 512 << 20
	// hostMinTime is the least time left worth starting a disk or
	// download test in.
	hostMinTime = 200 * time.Millisecond
)

// measureHost reads the host's cores, CPU model and memory, then tests
// the disk and the download URL until deadline (the disk first, with
// half of the time left when there is a download to do).
func measureHost(ctx context.Context, o Options, deadline time.Time) (perf.Host, []perf.Skip) {
	var h perf.Host
	var skips []perf.Skip
	hr := o.Host
	h.CPUCores = hr.CPUCores()
	if m, err := hr.ReadMemory(); err == nil {
		h.MemoryMiB = m.TotalBytes >> 20
	} else {
		skips = append(skips, hostSkip("memory_mib", "cannot read the memory size: %v", err))
	}
	h.CPUModel = cpuModel(hr.ProcRoot)

	h.DiskPath = absDir(o.Dir)
	if o.FactsOnly {
		skips = append(skips, hostSkip("disk_write_mbps", "facts only: the GPU was busy with someone's work, so no disk test"))
	} else {
		diskBy := deadline
		if o.DownloadURL != "" {
			diskBy = time.Now().Add(time.Until(deadline) / 2)
		}
		w, r, ds := diskTest(ctx, h.DiskPath, diskBy, o.disk)
		h.DiskWriteMBps, h.DiskReadMBps = w, r
		skips = append(skips, ds...)
	}

	if o.DownloadURL != "" {
		var s *perf.Skip
		h.DownloadURL, h.DownloadMBps, s = download(ctx, o.DownloadURL, deadline, o.download)
		if s != nil {
			skips = append(skips, *s)
		}
	}
	return h, skips
}

func hostSkip(what, format string, args ...any) perf.Skip {
	return perf.Skip{What: what, GPU: -1, Why: fmt.Sprintf(format, args...)}
}

// cpuModel returns the first "model name" of /proc/cpuinfo under
// procRoot (default /proc), "" when there is none (some ARM kernels).
func cpuModel(procRoot string) string {
	if procRoot == "" {
		procRoot = "/proc"
	}
	f, err := os.Open(procRoot + "/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 64<<10))
	for len(b) > 0 {
		var line []byte
		line, b, _ = bytes.Cut(b, []byte("\n"))
		k, v, ok := bytes.Cut(line, []byte(":"))
		if ok && string(bytes.TrimSpace(k)) == "model name" {
			return clipString(strings.Join(strings.Fields(string(v)), " "), 128)
		}
	}
	return ""
}

// clipString cuts s to at most n bytes on a rune boundary.
func clipString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// diskOptions are the disk test's knobs; the zero value is the real test.
type diskOptions struct {
	size  int64 // default diskSize
	chunk int   // default diskChunk
	// open replaces os.OpenFile (tests refuse O_DIRECT or writing).
	open func(name string, flag int, perm os.FileMode) (*os.File, error)
	// free replaces the free space of the directory's filesystem.
	free func(dir string) (uint64, error)
	// flush replaces fdatasync, which the fallback (no O_DIRECT) calls
	// after every chunk (tests make it as slow as a cloud disk).
	flush func(f *os.File) error
}

// downloadOptions are the download test's knobs; the zero value is the
// real test.
type downloadOptions struct {
	max    int64 // default downloadMax
	client *http.Client
}

// download fetches rawURL until it ends, max bytes were read or deadline
// passes, and returns the URL as reported (no user, password or query:
// they may hold a secret), and the speed of the body in MB/s (1e6).
func download(ctx context.Context, rawURL string, deadline time.Time, o downloadOptions) (string, float64, *perf.Skip) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		s := hostSkip("download_mbps", "the download URL must be http:// or https:// with a host")
		return "", 0, &s
	}
	shown := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
	if time.Until(deadline) < hostMinTime {
		s := hostSkip("download_mbps", "no time left for the download within the bench's timeout")
		return shown, 0, &s
	}
	max := o.max
	if max <= 0 {
		max = downloadMax
	}
	client := o.client
	if client == nil {
		client = &http.Client{}
	}
	c := *client
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return fmt.Errorf("redirected to a %s: URL; only http and https are followed", req.URL.Scheme)
		}
		if len(via) >= 5 {
			return errors.New("more than 5 redirects")
		}
		return nil
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		s := hostSkip("download_mbps", "download %s: %v", shown, err)
		return shown, 0, &s
	}
	req.Header.Set("User-Agent", "gpuledger-agent-bench/"+agent.Version)
	res, err := c.Do(req)
	if err != nil {
		s := hostSkip("download_mbps", "download %s: %s", shown, urlErr(err, rawURL, shown))
		return shown, 0, &s
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		s := hostSkip("download_mbps", "download %s: the server answered %s", shown, res.Status)
		return shown, 0, &s
	}
	t0 := time.Now()
	n, err := io.Copy(io.Discard, io.LimitReader(res.Body, max))
	el := time.Since(t0)
	if n == 0 || el <= 0 {
		why := "no data"
		if err != nil {
			why = urlErr(err, rawURL, shown)
		}
		s := hostSkip("download_mbps", "download %s: %s within the bench's timeout", shown, why)
		return shown, 0, &s
	}
	// A body cut by the deadline or the byte bound still timed what it
	// read.
	return shown, float64(n) / el.Seconds() / 1e6, nil
}

// urlErr is err's text with the URL as the user gave it replaced by the
// shown one (no password or query in a Skip).
func urlErr(err error, raw, shown string) string {
	return strings.ReplaceAll(err.Error(), raw, shown)
}
