package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/agent/bench"
	"github.com/gpuledger/gpuledger/perf"
)

// maxBenchTimeout bounds --timeout: the daemon's watchdog gives a child
// 30 s, and a bench is meant to take seconds.
const maxBenchTimeout = 5 * time.Minute

// runBench is "gpuledger-agent bench": it measures the GPUs and the host
// (agent/bench) and prints the figures with perf's references, ratios
// and warnings, or the perf.Bench as JSON (what the daemon reads). Exit
// 0 when anything was measured, 1 when nothing could be, 2 on a usage
// error.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("gpuledger-agent bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o bench.Options
	var asJSON bool
	fs.BoolVar(&asJSON, "json", false, "print the bench as JSON (the body the agent sends) instead of text")
	fs.StringVar(&o.Simulate, "simulate", "", `return the "bench" of this simulate file, touching no GPU and no disk`)
	fs.StringVar(&o.DownloadURL, "download-url", getenv("GPULEDGER_BENCH_URL"), "an http(s) URL to time a download from, bounded in bytes and time (default $GPULEDGER_BENCH_URL; none when unset)")
	fs.DurationVar(&o.Timeout, "timeout", bench.DefaultTimeout, "the bench's whole wall time: the GPUs first, the host in what is left")
	fs.StringVar(&o.Dir, "dir", ".", "the directory whose disk is timed (a file of a few hundred MB, removed after)")
	fs.BoolVar(&o.FactsOnly, "facts-only", false, "read facts only: no load on the GPUs and no disk test (a GPU busy with someone's work)")
	fs.BoolVar(&o.Torch, "torch", false, "also time a PyTorch bf16 matmul where python3 has torch (beside the bench, beyond --timeout)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(stderr, usageHint, "bench")
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "gpuledger-agent bench: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if o.Timeout <= 0 || o.Timeout > maxBenchTimeout {
		fmt.Fprintf(stderr, "gpuledger-agent bench: --timeout %s: want more than 0 and at most %s\n", o.Timeout, maxBenchTimeout)
		return exitUsage
	}
	if o.DownloadURL != "" {
		if u, err := url.Parse(o.DownloadURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			fmt.Fprintln(stderr, "gpuledger-agent bench: --download-url (or $GPULEDGER_BENCH_URL): want an http:// or https:// URL with a host")
			return exitUsage
		}
	}
	b := bench.Run(ctx, o)
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(b); err != nil {
			fmt.Fprintln(stderr, "gpuledger-agent bench:", err)
			return exitFailure
		}
	} else {
		printBench(stdout, b)
	}
	if !bench.Measured(b) {
		if !asJSON {
			fmt.Fprintln(stderr, "gpuledger-agent bench: nothing could be measured (see skipped above)")
		}
		return exitFailure
	}
	return exitOK
}

// printBench prints every figure with the reference for its card and
// the ratio (perf.Assess: only against references in perf's table), the
// warnings, the host, and what was skipped and why.
func printBench(w io.Writer, b perf.Bench) {
	fmt.Fprintf(w, "bench: %s, %.1f s wall, %.2f s on the GPUs", b.Source, b.WallSeconds, b.GPUSeconds)
	if b.DriverVersion != "" {
		fmt.Fprintf(w, ", driver %s", b.DriverVersion)
	}
	if b.CUDADriver != "" {
		fmt.Fprintf(w, ", CUDA %s", b.CUDADriver)
	}
	fmt.Fprintln(w)
	a := perf.Assess(b)
	for _, g := range b.GPUs {
		fmt.Fprintf(w, "GPU %d: %s", g.Index, cmpOrStr(g.Name, "(unnamed)"))
		if g.ComputeCap != "" {
			fmt.Fprintf(w, ", compute %s", g.ComputeCap)
		}
		if g.MemoryTotalMiB > 0 {
			fmt.Fprintf(w, ", %d MiB", g.MemoryTotalMiB)
		}
		if g.MIG {
			fmt.Fprint(w, ", a MIG slice (figures are the slice's)")
		}
		fmt.Fprintln(w)
		// A card not in perf's table, or a MIG slice, gets its figures
		// without ratios; the warnings below say why.
		var check *perf.GPUCheck
		for j := range a.GPUs {
			if a.GPUs[j].Index == g.Index {
				check = &a.GPUs[j]
				break
			}
		}
		for _, f := range figuresOf(g, check) {
			fmt.Fprintf(w, "  %s\n", f)
		}
		fmt.Fprintf(w, "  %s\n", gpuFacts(g))
	}
	h := b.Host
	fmt.Fprintf(w, "host: %s cores", trimFloat(h.CPUCores))
	if h.CPUModel != "" {
		fmt.Fprintf(w, " (%s)", h.CPUModel)
	}
	if h.MemoryMiB > 0 {
		fmt.Fprintf(w, ", %d MiB memory", h.MemoryMiB)
	}
	fmt.Fprintln(w)
	if h.DiskWriteMBps > 0 || h.DiskReadMBps > 0 {
		fmt.Fprintf(w, "  disk %s: write %.0f MB/s, read %.0f MB/s\n", h.DiskPath, h.DiskWriteMBps, h.DiskReadMBps)
	}
	if h.DownloadMBps > 0 {
		fmt.Fprintf(w, "  download %s: %.1f MB/s\n", h.DownloadURL, h.DownloadMBps)
	}
	if t := b.Torch; t != nil {
		fmt.Fprintf(w, "torch %s (beside the bench): bf16 matmul %.1f TFLOPS\n", t.Version, t.BF16TFLOPS)
	}
	if len(a.Warnings) > 0 {
		fmt.Fprintln(w, "warnings:")
		for _, x := range a.Warnings {
			fmt.Fprintf(w, "  %s\n", x)
		}
	}
	if len(b.Skipped) > 0 {
		fmt.Fprintln(w, "skipped:")
		for _, s := range b.Skipped {
			if s.GPU >= 0 {
				fmt.Fprintf(w, "  GPU %d %s: %s\n", s.GPU, s.What, s.Why)
			} else {
				fmt.Fprintf(w, "  %s: %s\n", s.What, s.Why)
			}
		}
	}
}

// figuresOf returns g's measured figures, with their references when
// perf assessed them.
func figuresOf(g perf.GPU, c *perf.GPUCheck) []perf.Figure {
	if c != nil && len(c.Figures) > 0 {
		return c.Figures
	}
	var out []perf.Figure
	for _, f := range []perf.Figure{
		{Name: "fp32_tflops", Value: g.FP32TFLOPS}, {Name: "bf16_tflops", Value: g.BF16TFLOPS},
		{Name: "fp16_tflops", Value: g.FP16TFLOPS}, {Name: "mem_gbps", Value: g.MemGBps},
		{Name: "h2d_gbps", Value: g.H2DGBps}, {Name: "d2h_gbps", Value: g.D2HGBps},
	} {
		if f.Value > 0 {
			out = append(out, f)
		}
	}
	return out
}

// gpuFacts is one line of g's NVML facts.
func gpuFacts(g perf.GPU) string {
	var p []string
	if g.PCIeGen > 0 || g.PCIeWidth > 0 {
		p = append(p, fmt.Sprintf("PCIe gen %d of %d, x%d of x%d", g.PCIeGen, g.PCIeGenMax, g.PCIeWidth, g.PCIeWidthMax))
	}
	if g.PowerLimitW > 0 {
		p = append(p, fmt.Sprintf("power limit %.0f of %.0f W", g.PowerLimitW, g.PowerDefaultW))
	}
	if g.SMClockMaxMHz > 0 {
		s := fmt.Sprintf("SM clock max %d MHz", g.SMClockMaxMHz)
		if g.SMClockBenchMHz > 0 {
			s += fmt.Sprintf(" (%d under the bench)", g.SMClockBenchMHz)
		}
		p = append(p, s)
	}
	if g.ECC != nil {
		if *g.ECC {
			p = append(p, fmt.Sprintf("ECC on, %d uncorrected", g.ECCUncorrected))
		} else {
			p = append(p, "ECC off")
		}
	}
	if g.RetiredPages > 0 {
		p = append(p, fmt.Sprintf("%d retired pages", g.RetiredPages))
	}
	p = append(p, fmt.Sprintf("before the bench: %d other processes, %d MiB in use, %.0f %% busy", g.OtherProcs, g.MemoryUsedMiB, g.UtilPercent))
	return strings.Join(p, "; ")
}

func trimFloat(v float64) string { return strings.TrimSuffix(fmt.Sprintf("%.1f", v), ".0") }

func cmpOrStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
