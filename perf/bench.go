// Package perf says what a rented GPU delivered: the figures a bench
// measured on it (Bench), what a healthy card of the same model gives
// (the reference table), and how the two compare. It is a leaf: the
// agent fills a Bench, the hub bounds it, the ledger stores it and the
// chat, dashboard and export show it, and none of them needs the others
// to do so.
//
// A figure of zero is a figure not measured; Skipped says why.
package perf

import "time"

// Bench is one run of the bench on one host: every GPU it measured and
// the host around them. It is also the agent's wire body (inside
// wire.BenchReport), so its JSON names are a contract (docs/design.md,
// the export's "bench" object).
type Bench struct {
	StartedAt time.Time `json:"started_at"` // agent's wall clock
	// WallSeconds is the bench's whole run, JIT and host tests included;
	// GPUSeconds the time kernels and copies kept a GPU busy (summed).
	WallSeconds float64 `json:"wall_s"`
	GPUSeconds  float64 `json:"gpu_s"`
	// Source is "cuda" (the driver API), "simulate" (a --simulate file)
	// or "none" (no GPU could be opened: only host figures and Skipped).
	Source        string    `json:"source"`
	DriverVersion string    `json:"driver_version,omitempty"`      // e.g. "580.159.04"
	CUDADriver    string    `json:"cuda_driver_version,omitempty"` // e.g. "13.0"
	GPUs          []GPU     `json:"gpus"`
	Host          Host      `json:"host"`
	Skipped       []Skip    `json:"skipped,omitempty"` // what was not measured, and why
	Torch         *TorchRun `json:"torch,omitempty"`   // a PyTorch probe reported beside the bench, never instead
}

// GPU is what the bench measured on one GPU.
type GPU struct {
	Index int    `json:"index"`
	Name  string `json:"name"`  // as NVML or the driver names it, e.g. "NVIDIA H200"
	Model string `json:"model"` // normalised like ledger.NormalizeGPU, e.g. "H200"; the reference table's key
	UUID  string `json:"uuid,omitempty"`
	// ComputeCap is the compute capability, e.g. "9.0".
	ComputeCap string `json:"compute_capability,omitempty"`
	MIG        bool   `json:"mig,omitempty"` // a MIG slice: figures are the slice's, never compared with a whole card

	// Throughput, measured through the driver API.
	FP32TFLOPS float64 `json:"fp32_tflops,omitempty"` // FP32 FMA loop
	BF16TFLOPS float64 `json:"bf16_tflops,omitempty"` // bf16 mma.sync loop, dense
	FP16TFLOPS float64 `json:"fp16_tflops,omitempty"` // fp16 mma.sync loop, dense
	MemGBps    float64 `json:"mem_gbps,omitempty"`    // device-to-device copy, read plus write, GB/s (1e9)
	H2DGBps    float64 `json:"h2d_gbps,omitempty"`    // pinned host to device
	D2HGBps    float64 `json:"d2h_gbps,omitempty"`    // device to pinned host

	// Facts read from NVML before the bench ran.
	MemoryTotalMiB uint64  `json:"memory_total_mib,omitempty"`
	MemoryUsedMiB  uint64  `json:"memory_used_mib,omitempty"` // in use by others before the bench
	UtilPercent    float64 `json:"util_percent,omitempty"`    // before the bench
	OtherProcs     int     `json:"other_processes,omitempty"` // compute processes not the bench's (may be unreadable in containers)
	PCIeGen        int     `json:"pcie_gen,omitempty"`        // current link generation
	PCIeGenMax     int     `json:"pcie_gen_max,omitempty"`    // what the card and slot can do
	PCIeWidth      int     `json:"pcie_width,omitempty"`      // current lanes
	PCIeWidthMax   int     `json:"pcie_width_max,omitempty"`
	PowerLimitW    float64 `json:"power_limit_w,omitempty"`   // enforced limit
	PowerDefaultW  float64 `json:"power_default_w,omitempty"` // the card's default limit
	SMClockMaxMHz  int     `json:"sm_clock_max_mhz,omitempty"`
	// SMClockBenchMHz is the highest SM clock seen while the bench ran;
	// ClockReasons the NVML clock-event reason bits seen meanwhile (OR).
	SMClockBenchMHz int    `json:"sm_clock_bench_mhz,omitempty"`
	ClockReasons    uint64 `json:"clock_event_reasons,omitempty"`
	ECC             *bool  `json:"ecc,omitempty"`             // ECC enabled; nil unknown or not supported
	ECCUncorrected  uint64 `json:"ecc_uncorrected,omitempty"` // volatile uncorrected errors
	RetiredPages    int    `json:"retired_pages,omitempty"`   // retired or pending pages (row remapping failures on newer cards)
	TemperatureC    int    `json:"temperature_c,omitempty"`   // highest seen while the bench ran
}

// Host is what the bench measured around the GPUs.
type Host struct {
	CPUCores      float64 `json:"cpu_cores,omitempty"`       // usable: the cgroup quota if one is set
	CPUModel      string  `json:"cpu_model,omitempty"`       // /proc/cpuinfo "model name"
	MemoryMiB     uint64  `json:"memory_mib,omitempty"`      // usable: the cgroup limit if one is set
	DiskPath      string  `json:"disk_path,omitempty"`       // the directory written
	DiskWriteMBps float64 `json:"disk_write_mbps,omitempty"` // O_DIRECT, MB/s (1e6)
	DiskReadMBps  float64 `json:"disk_read_mbps,omitempty"`
	DownloadURL   string  `json:"download_url,omitempty"` // the URL the user set; "" none
	DownloadMBps  float64 `json:"download_mbps,omitempty"`
}

// Skip is one figure the bench could not measure: What names it (a JSON
// field name such as "bf16_tflops", or "gpu" for all of a GPU's, or
// "host" ...), GPU the index or -1 for the host, Why a sentence a user can
// act on ("no CUDA driver: libcuda.so.1 not found").
type Skip struct {
	What string `json:"what"`
	GPU  int    `json:"gpu"`
	Why  string `json:"why"`
}

// TorchRun is a PyTorch matmul probe run beside the bench where the image
// has PyTorch.
type TorchRun struct {
	Version    string  `json:"version,omitempty"`
	BF16TFLOPS float64 `json:"bf16_tflops,omitempty"`
}
