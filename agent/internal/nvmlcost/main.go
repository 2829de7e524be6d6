//go:build cgo && linux

// Command nvmlcost measures, on a GPU host, what the agent's reads cost:
// the CPU time of each NVML call and host read (user+system time of the
// calling thread, from getrusage(RUSAGE_THREAD), over many calls), what
// loading NVML adds to a process's resident memory, step by step, and how
// an idle GPU's power, read from the cumulative energy counter, moves when
// short bursts of work run between samples.
//
//	nvmlcost rss                 # RSS after each step of NVML start-up
//	nvmlcost calls [-n 2000]     # CPU per call
//	nvmlcost energy [-seconds 60] [-window 5s]
//
// It is a measuring tool for BENCHMARKS.md, built like the agent
// (scripts/agent-build-portable.sh with PKG=./agent/internal/nvmlcost).
package main

/*
#include <malloc.h>
#include <stdlib.h>
*/
import "C"

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gpuledger/gpuledger/agent"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: nvmlcost rss | calls [-n N] | energy [-seconds S] [-window D]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "rss":
		fs := flag.NewFlagSet("rss", flag.ExitOnError)
		flags := fs.Uint("init-flags", 0, "nvmlInitWithFlags flags (2: NVML_INIT_FLAG_NO_ATTACH)")
		fs.Parse(os.Args[2:])
		err = rss(uint32(*flags))
	case "calls":
		fs := flag.NewFlagSet("calls", flag.ExitOnError)
		n := fs.Int("n", 2000, "calls per measured function")
		fs.Parse(os.Args[2:])
		err = calls(*n)
	case "energy":
		fs := flag.NewFlagSet("energy", flag.ExitOnError)
		secs := fs.Int("seconds", 60, "how long to watch")
		win := fs.Duration("window", 5*time.Second, "window between readings")
		fs.Parse(os.Args[2:])
		err = energy(*secs, *win)
	case "tick":
		fs := flag.NewFlagSet("tick", flag.ExitOnError)
		secs := fs.Int("seconds", 60, "how long to tick")
		every := fs.Duration("every", 5*time.Second, "tick period")
		read := fs.Bool("nvml", false, "read utilisation (one cgo call) at each tick")
		fs.Parse(os.Args[2:])
		err = tick(*secs, *every, *read)
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "nvmlcost:", err)
		os.Exit(1)
	}
}

func check(what string, r nvml.Return) error {
	if r != nvml.SUCCESS {
		return fmt.Errorf("%s: %s", what, nvml.ErrorString(r))
	}
	return nil
}

// memLine returns VmRSS, RssAnon and RssFile (KiB) and the biggest mappings.
func memLine() string {
	b, _ := os.ReadFile("/proc/self/status")
	var parts []string
	for _, l := range strings.Split(string(b), "\n") {
		for _, k := range []string{"VmRSS:", "RssAnon:", "RssFile:"} {
			if strings.HasPrefix(l, k) {
				var kb int
				fmt.Sscan(strings.TrimSpace(strings.TrimPrefix(l, k)), &kb)
				parts = append(parts, fmt.Sprintf("%s %.1f MiB", strings.TrimSuffix(k, ":"), float64(kb)/1024))
			}
		}
	}
	sm, _ := os.ReadFile("/proc/self/smaps")
	maps := map[string]int{}
	name := ""
	for _, l := range strings.Split(string(sm), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		if strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			name = "[anon]"
			if len(f) > 5 {
				name = f[5]
			}
		} else if f[0] == "Rss:" && len(f) > 1 {
			var kb int
			fmt.Sscan(f[1], &kb)
			maps[name] += kb
		}
	}
	type kv struct {
		k string
		v int
	}
	var all []kv
	for k, v := range maps {
		all = append(all, kv{k, v})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v > all[j].v })
	var top []string
	for i := 0; i < len(all) && i < 6; i++ {
		n := all[i].k
		if j := strings.LastIndex(n, "/"); j >= 0 {
			n = n[j+1:]
		}
		top = append(top, fmt.Sprintf("%s %.1f", n, float64(all[i].v)/1024))
	}
	return strings.Join(parts, ", ") + " | " + strings.Join(top, ", ")
}

func rss(flags uint32) error {
	fmt.Println("start             :", memLine())
	lib := nvml.New()
	if err := check("init", lib.InitWithFlags(flags)); err != nil {
		return err
	}
	fmt.Println("after Init        :", memLine())
	anonRegions()
	C.malloc_trim(0)
	fmt.Println("  + malloc_trim   :", memLine())
	n, r := lib.DeviceGetCount()
	if err := check("count", r); err != nil {
		return err
	}
	for i := range n {
		d, r := lib.DeviceGetHandleByIndex(i)
		if err := check("handle", r); err != nil {
			return err
		}
		d.GetName()
		d.GetUUID()
		d.GetMemoryInfo()
		d.GetMaxClockInfo(nvml.CLOCK_SM)
		d.GetUtilizationRates()
		d.GetPowerUsage()
		d.GetTotalEnergyConsumption()
		d.GetTemperature(nvml.TEMPERATURE_GPU)
		d.GetClockInfo(nvml.CLOCK_SM)
		d.GetCurrentClocksEventReasons()
		d.GetComputeRunningProcesses()
		d.GetSamples(nvml.GPU_UTILIZATION_SAMPLES, 0)
	}
	fmt.Println("after reads       :", memLine())
	anonRegions()
	C.malloc_trim(0)
	fmt.Println("  + malloc_trim   :", memLine())
	lib.SystemGetDriverVersion()
	fmt.Println("driver version    :", memLine())
	v, _ := lib.SystemGetCudaDriverVersion()
	fmt.Println("cuda version", v, ":", memLine())
	C.malloc_trim(0)
	fmt.Println("  + malloc_trim   :", memLine())
	lib.Shutdown()
	fmt.Println("after Shutdown    :", memLine())
	return nil
}

// anonRegions prints the anonymous mappings with more than 256 KiB
// resident: their size says whether they are heaps, stacks or driver maps.
func anonRegions() {
	sm, _ := os.ReadFile("/proc/self/smaps")
	head, prev, anon := "", "", false
	for _, l := range strings.Split(string(sm), "\n") {
		f := strings.Fields(l)
		if len(f) == 0 {
			continue
		}
		if strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			if head != "" {
				prev = head
			}
			head, anon = l, len(f) <= 5 || strings.HasPrefix(f[5], "[")
			continue
		}
		if anon && f[0] == "Rss:" && len(f) > 1 {
			var kb int
			fmt.Sscan(f[1], &kb)
			if kb > 256 {
				fmt.Printf("    anon %6d KiB resident: %s\n        after: %s\n", kb, head, prev)
			}
		}
	}
}

// tick measures the floor: a process with one P that wakes on a ticker and
// does nothing (or one NVML read), as the agent does between samples. It
// prints each thread's CPU and how often it ran.
func tick(secs int, every time.Duration, read bool) error {
	runtime.GOMAXPROCS(1)
	var d nvml.Device
	if read {
		lib := nvml.New()
		if err := check("init", lib.Init()); err != nil {
			return err
		}
		defer lib.Shutdown()
		var r nvml.Return
		if d, r = lib.DeviceGetHandleByIndex(0); r != nvml.SUCCESS {
			return check("handle", r)
		}
	}
	sched := func() map[string][2]int64 {
		out := map[string][2]int64{}
		ents, _ := os.ReadDir("/proc/self/task")
		for _, e := range ents {
			b, err := os.ReadFile("/proc/self/task/" + e.Name() + "/schedstat")
			if err != nil {
				continue
			}
			var ns, wait, runs int64
			fmt.Sscan(string(b), &ns, &wait, &runs)
			out[e.Name()] = [2]int64{ns, runs}
		}
		return out
	}
	t := time.NewTicker(every)
	defer t.Stop()
	before := sched()
	end := time.Now().Add(time.Duration(secs) * time.Second)
	n := 0
	for time.Now().Before(end) {
		<-t.C
		if read {
			d.GetUtilizationRates()
		}
		n++
	}
	after := sched()
	var total int64
	var parts []string
	for id, a := range after {
		b := before[id]
		total += a[0] - b[0]
		parts = append(parts, fmt.Sprintf("%s: %.0f µs/%d runs", id, float64(a[0]-b[0])/1e3, a[1]-b[1]))
	}
	sort.Strings(parts)
	fmt.Printf("tick every %s, nvml %v: %d ticks, %.1f µs CPU per tick; threads %s\n", every, read, n,
		float64(total)/1e3/float64(n), strings.Join(parts, ", "))
	return nil
}

// threadCPU returns the calling thread's CPU time, all of it and the
// system part.
func threadCPU() (all, sys time.Duration) {
	var ru syscall.Rusage
	syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), time.Duration(ru.Stime.Nano())
}

// measure runs f n times on one locked thread and prints CPU and wall time
// per call.
func measure(name string, n int, f func()) {
	f() // warm
	c0, s0 := threadCPU()
	t0 := time.Now()
	for range n {
		f()
	}
	wall := time.Since(t0)
	c1, s1 := threadCPU()
	cpu, sys := c1-c0, s1-s0
	fmt.Printf("%-44s %9.1f µs CPU/call (%3.0f%% system) %9.1f µs wall/call  n=%d\n", name,
		float64(cpu.Nanoseconds())/1e3/float64(n), 100*float64(sys)/float64(max(cpu, 1)),
		float64(wall.Nanoseconds())/1e3/float64(n), n)
}

func calls(n int) error {
	runtime.GOMAXPROCS(1) // as the agent runs
	runtime.LockOSThread()
	lib := nvml.New()
	if err := check("init", lib.Init()); err != nil {
		return err
	}
	defer lib.Shutdown()
	d, r := lib.DeviceGetHandleByIndex(0)
	if err := check("handle", r); err != nil {
		return err
	}
	name, _ := d.GetName()
	drv, _ := lib.SystemGetDriverVersion()
	fmt.Printf("GPU 0: %s, driver %s\n", name, drv)
	measure("GetUtilizationRates", n, func() { d.GetUtilizationRates() })
	measure("GetTotalEnergyConsumption", n, func() { d.GetTotalEnergyConsumption() })
	measure("GetPowerUsage", n, func() { d.GetPowerUsage() })
	measure("GetTemperature", n, func() { d.GetTemperature(nvml.TEMPERATURE_GPU) })
	measure("GetClockInfo(SM)", n, func() { d.GetClockInfo(nvml.CLOCK_SM) })
	measure("GetPerformanceState", n, func() { d.GetPerformanceState() })
	measure("GetMemoryInfo", n, func() { d.GetMemoryInfo() })
	measure("GetCurrentClocksEventReasons", n, func() { d.GetCurrentClocksEventReasons() })
	measure("GetComputeRunningProcesses", n, func() { d.GetComputeRunningProcesses() })
	var last uint64
	measure("GetSamples(GPU_UTIL, since last)", max(n/20, 10), func() {
		_, s, r := d.GetSamples(nvml.GPU_UTILIZATION_SAMPLES, last)
		if r == nvml.SUCCESS {
			for _, x := range s {
				last = max(last, x.TimeStamp)
			}
		}
	})
	measure("GetSamples(GPU_UTIL, 0)", max(n/20, 10), func() { d.GetSamples(nvml.GPU_UTILIZATION_SAMPLES, 0) })

	h := agent.HostReader{}.Cached()
	defer h.Close()
	measure("host ReadCPU (cached files)", n, func() { h.ReadCPU() })
	measure("host ReadNet (/proc/net/dev)", n, func() { h.ReadNet() })
	measure("host ReadMemory", n, func() { h.ReadMemory() })
	measure("host ReadDisk (statfs)", n, func() { h.ReadDisk() })

	// Whole agent sample cycles over the real library (watchdog hand-off
	// included: those hop threads, so the thread's own CPU would miss part
	// of it; process CPU is used instead).
	src, err := agent.OpenNVML(context.Background(), 10*time.Second)
	if err != nil {
		return err
	}
	defer src.Close()
	s := &agent.Sampler{GPU: src, Host: h, Thresholds: agent.DefaultThresholds}
	for _, lv := range []struct {
		name string
		l    agent.ReadLevel
	}{{"Sampler ReadFast", agent.ReadFast}, {"Sampler ReadFull", agent.ReadFull}} {
		ctx := context.Background()
		s.SampleLevel(ctx, lv.l)
		var p0, p1 syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &p0)
		t0 := time.Now()
		m := max(n/10, 10)
		for range m {
			s.SampleLevel(ctx, lv.l)
		}
		wall := time.Since(t0)
		syscall.Getrusage(syscall.RUSAGE_SELF, &p1)
		cpu := time.Duration(p1.Utime.Nano() + p1.Stime.Nano() - p0.Utime.Nano() - p0.Stime.Nano())
		fmt.Printf("%-44s %9.1f µs CPU/call (process)    %9.1f µs wall/call  n=%d\n", lv.name,
			float64(cpu.Nanoseconds())/1e3/float64(m), float64(wall.Nanoseconds())/1e3/float64(m), m)
	}
	return nil
}

// energy prints, per window: average power from the energy counter, the
// instantaneous power and utilisation at the window's end, and the mean,
// max and count of NVML's utilisation samples within the window.
func energy(secs int, win time.Duration) error {
	lib := nvml.New()
	if err := check("init", lib.Init()); err != nil {
		return err
	}
	defer lib.Shutdown()
	d, r := lib.DeviceGetHandleByIndex(0)
	if err := check("handle", r); err != nil {
		return err
	}
	e0, r := d.GetTotalEnergyConsumption()
	if err := check("energy", r); err != nil {
		return err
	}
	var last uint64
	if _, s, r := d.GetSamples(nvml.GPU_UTILIZATION_SAMPLES, 0); r == nvml.SUCCESS {
		for _, x := range s {
			last = max(last, x.TimeStamp)
		}
	}
	t0 := time.Now()
	start := t0
	fmt.Printf("start %.2f (unix)\n", float64(start.UnixNano())/1e9)
	fmt.Println("    t(s)  avgW  instW  util  hist_mean hist_max n  sm_MHz reasons")
	for time.Since(start) < time.Duration(secs)*time.Second {
		time.Sleep(win - time.Since(t0)%win)
		e1, _ := d.GetTotalEnergyConsumption()
		t1 := time.Now()
		p, _ := d.GetPowerUsage()
		u, _ := d.GetUtilizationRates()
		clk, _ := d.GetClockInfo(nvml.CLOCK_SM)
		rs, _ := d.GetCurrentClocksEventReasons()
		vt, s, _ := d.GetSamples(nvml.GPU_UTILIZATION_SAMPLES, last)
		var sum, mx float64
		cnt := 0
		since := last
		for _, x := range s {
			if x.TimeStamp <= since {
				continue
			}
			last = max(last, x.TimeStamp)
			v, ok := agent.SampleValue(vt, x.SampleValue)
			if !ok {
				continue
			}
			sum += v
			mx = max(mx, v)
			cnt++
		}
		mean := 0.0
		if cnt > 0 {
			mean = sum / float64(cnt)
		}
		w := float64(e1-e0) / t1.Sub(t0).Seconds() / 1000
		fmt.Printf("%8.1f %6.1f %6.1f %4d %9.1f %8.0f %2d %6d %#x\n", time.Since(start).Seconds(), w, float64(p)/1000, u.Gpu, mean, mx, cnt, clk, rs)
		e0, t0 = e1, t1
	}
	return nil
}
