package perf

// Reference is what one card model should deliver: the vendor's
// datasheet peaks and, where this bench was run on a healthy card of the
// model, what it measured there. A figure of zero is not known: no ratio
// is given against it.
//
// Tensor figures are dense (the datasheets' headline "with sparsity" is
// twice the dense rate: TensorSparseTFLOPS keeps it, for the check) and
// with FP32 accumulate, as the bench's mma.sync loops run: GeForce cards
// run FP16 with FP16 accumulate at twice that rate, which the bench does
// not use.
type Reference struct {
	Model string // as a person writes it, e.g. "RTX 4090", "H100 SXM"
	Arch  string // "Hopper", "Ada", "Ampere", "Turing", "Volta", "Blackwell"

	FP32TFLOPS         float64 // non-tensor FP32
	BF16TFLOPS         float64 // dense, 0 where the card has no bf16 tensor cores
	FP16TFLOPS         float64 // dense, FP32 accumulate
	TensorSparseTFLOPS float64 // the datasheet's FP16/BF16 figure with sparsity; 0 where there is none
	MemGBps            float64 // memory bandwidth, GB/s (1e9)
	MemoryGB           float64
	PCIeGen, PCIeWidth int     // the card's host link
	PowerW             float64 // the card's default (board) power
	BoostMHz           int     // rated boost clock

	// Healthy is what this bench measured on a healthy card of the model;
	// zero where it has not been measured.
	Healthy Healthy

	// Source names where each datasheet figure comes from.
	Source string

	names []string // the spellings Lookup matches
}

// Healthy is the bench's own figures on a healthy card of one model,
// with where and when they were measured.
type Healthy struct {
	FP32TFLOPS, BF16TFLOPS, FP16TFLOPS float64
	MemGBps, H2DGBps, D2HGBps          float64
	Source                             string
}

// references is the table: one row per card model. Every figure is the
// one its Source gives; a figure not found there is 0, never an estimate.
var references = []Reference{
	{
		Model: "H200", Arch: "Hopper",
		FP32TFLOPS: 67, BF16TFLOPS: 989.5, FP16TFLOPS: 989.5, TensorSparseTFLOPS: 1979,
		MemGBps: 4800, MemoryGB: 141, PCIeGen: 5, PCIeWidth: 16, PowerW: 700, BoostMHz: 1980,
		// This bench on a rented H200 (PCIe 5.0 x16, 700 of 700 W, 1980
		// MHz under the bench): 5 runs, medians, each within 0.8 % of it.
		// mma.sync reaches 82 % of torch's bf16 matmul there (791 TFLOPS),
		// which is why tensor ratios need this bench's own figure.
		Healthy: Healthy{
			FP32TFLOPS: 62.8, BF16TFLOPS: 648.6, FP16TFLOPS: 653.4,
			MemGBps: 4267.6, H2DGBps: 55.4, D2HGBps: 55.3,
			Source: "this bench on an H200, driver 580.159.04, CUDA 13.0, 2026-12-03, 5 runs, medians (BENCHMARKS.md)",
		},
		Source: "https://www.nvidia.com/en-us/data-center/h200/ (H200 SXM column); boost clock: NVML max SM clock on a rented H200 (FACTS.md)",
		names:  []string{"NVIDIA H200", "H200 SXM", "H200 SXM5", "H200 141GB HBM3e"},
	},
	{
		Model: "H200 NVL", Arch: "Hopper",
		FP32TFLOPS: 60, BF16TFLOPS: 835.5, FP16TFLOPS: 835.5, TensorSparseTFLOPS: 1671,
		MemGBps: 4800, MemoryGB: 141, PCIeGen: 5, PCIeWidth: 16, PowerW: 600,
		Source: "https://www.nvidia.com/en-us/data-center/h200/ (H200 NVL column)",
		names:  []string{"NVIDIA H200 NVL"},
	},
	{
		Model: "H100 SXM", Arch: "Hopper",
		FP32TFLOPS: 67, BF16TFLOPS: 989.5, FP16TFLOPS: 989.5, TensorSparseTFLOPS: 1979,
		MemGBps: 3350, MemoryGB: 80, PCIeGen: 5, PCIeWidth: 16, PowerW: 700, BoostMHz: 1980,
		Source: "https://www.nvidia.com/en-us/data-center/h100/ (H100 SXM column); boost clock: NVIDIA H100 Tensor Core GPU Architecture whitepaper",
		names:  []string{"NVIDIA H100 80GB HBM3", "H100 SXM", "H100 SXM5", "H100 SXM5 80GB", "H100 80GB SXM", "H100 SXM 80GB"},
	},
	{
		Model: "H100 PCIe", Arch: "Hopper",
		FP32TFLOPS: 51, BF16TFLOPS: 756.5, FP16TFLOPS: 756.5, TensorSparseTFLOPS: 1513,
		MemGBps: 2000, MemoryGB: 80, PCIeGen: 5, PCIeWidth: 16, PowerW: 350, BoostMHz: 1755,
		Source: "https://www.nvidia.com/en-us/data-center/h100/ (H100 PCIe column of the H100 datasheet); boost clock: NVIDIA H100 PCIe product brief",
		names:  []string{"NVIDIA H100 PCIe", "H100 80GB PCIe", "H100 PCIe 80GB"},
	},
	{
		Model: "H100 NVL", Arch: "Hopper",
		FP32TFLOPS: 60, BF16TFLOPS: 835.5, FP16TFLOPS: 835.5, TensorSparseTFLOPS: 1671,
		MemGBps: 3900, MemoryGB: 94, PCIeGen: 5, PCIeWidth: 16, PowerW: 400,
		Source: "https://www.nvidia.com/en-us/data-center/h100/ (H100 NVL column: 350-400 W configurable)",
		names:  []string{"NVIDIA H100 NVL"},
	},
	{
		// The H800 is the H100 SXM's silicon with NVLink cut to 400 GB/s
		// and FP64 to about 1 TFLOPS; its low-precision tensor rate and
		// memory are the H100 SXM's. No source found gives its FP32 rate
		// on its own: left 0.
		Model: "H800", Arch: "Hopper",
		BF16TFLOPS: 989.5, FP16TFLOPS: 989.5, TensorSparseTFLOPS: 1979,
		MemGBps: 3350, MemoryGB: 80, PCIeGen: 5, PCIeWidth: 16, PowerW: 700,
		Source: "https://www.philisun.com/technical-analysis/nvidia-h800-vs-h100-a-technical-deep-dive-into-politically-defined-ai-chips/ (H800 against H100: same die, NVLink and FP64 cut) with the H100 SXM figures of https://www.nvidia.com/en-us/data-center/h100/",
		names:  []string{"NVIDIA H800", "NVIDIA H800 80GB HBM3", "H800 SXM", "H800 SXM5"},
	},
	{
		Model: "A100 SXM4 80GB", Arch: "Ampere",
		FP32TFLOPS: 19.5, BF16TFLOPS: 312, FP16TFLOPS: 312, TensorSparseTFLOPS: 624,
		MemGBps: 2039, MemoryGB: 80, PCIeGen: 4, PCIeWidth: 16, PowerW: 400, BoostMHz: 1410,
		Source: "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf (A100 80GB SXM)",
		names:  []string{"NVIDIA A100-SXM4-80GB", "A100 SXM 80GB", "A100 80GB SXM", "A100 80GB SXM4"},
	},
	{
		Model: "A100 SXM4 40GB", Arch: "Ampere",
		FP32TFLOPS: 19.5, BF16TFLOPS: 312, FP16TFLOPS: 312, TensorSparseTFLOPS: 624,
		MemGBps: 1555, MemoryGB: 40, PCIeGen: 4, PCIeWidth: 16, PowerW: 400, BoostMHz: 1410,
		Source: "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf (A100 40GB SXM)",
		names:  []string{"NVIDIA A100-SXM4-40GB", "A100 SXM 40GB", "A100 40GB SXM", "A100 40GB SXM4"},
	},
	{
		Model: "A100 PCIe 80GB", Arch: "Ampere",
		FP32TFLOPS: 19.5, BF16TFLOPS: 312, FP16TFLOPS: 312, TensorSparseTFLOPS: 624,
		MemGBps: 1935, MemoryGB: 80, PCIeGen: 4, PCIeWidth: 16, PowerW: 300, BoostMHz: 1410,
		Source: "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf (A100 80GB PCIe)",
		names:  []string{"NVIDIA A100 80GB PCIe", "A100 PCIe 80GB", "A100-PCIE-80GB"},
	},
	{
		Model: "A100 PCIe 40GB", Arch: "Ampere",
		FP32TFLOPS: 19.5, BF16TFLOPS: 312, FP16TFLOPS: 312, TensorSparseTFLOPS: 624,
		MemGBps: 1555, MemoryGB: 40, PCIeGen: 4, PCIeWidth: 16, PowerW: 250, BoostMHz: 1410,
		Source: "https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/a100-80gb-datasheet-update-nvidia-us-1521051-r2-web.pdf and the A100 40GB PCIe product brief",
		names:  []string{"NVIDIA A100-PCIE-40GB", "A100 PCIe 40GB", "A100 40GB PCIe"},
	},
	{
		// The A800 is the A100 with NVLink cut to 400 GB/s; NVIDIA lists
		// the A100's figures and power for it.
		Model: "A800 SXM4 80GB", Arch: "Ampere",
		FP32TFLOPS: 19.5, BF16TFLOPS: 312, FP16TFLOPS: 312, TensorSparseTFLOPS: 624,
		MemGBps: 2039, MemoryGB: 80, PCIeGen: 4, PCIeWidth: 16, PowerW: 400, BoostMHz: 1410,
		Source: "https://tweakers.net/nieuws/203182/nvidia-introduceert-a800-gpu-voor-china-die-niet-onder-exportrestricties-vs-valt.html (A800: the A100's figures, NVLink 400 GB/s, 400 W SXM) with the A100 80GB SXM figures of https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf",
		names:  []string{"NVIDIA A800-SXM4-80GB", "A800 SXM 80GB", "A800 80GB SXM", "A800 80GB SXM4"},
	},
	{
		Model: "A800 PCIe 80GB", Arch: "Ampere",
		FP32TFLOPS: 19.5, BF16TFLOPS: 312, FP16TFLOPS: 312, TensorSparseTFLOPS: 624,
		MemGBps: 1935, MemoryGB: 80, PCIeGen: 4, PCIeWidth: 16, PowerW: 300, BoostMHz: 1410,
		Source: "https://tweakers.net/nieuws/203182/nvidia-introduceert-a800-gpu-voor-china-die-niet-onder-exportrestricties-vs-valt.html (A800: the A100's figures, 300 W PCIe) with the A100 80GB PCIe figures of https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf",
		names:  []string{"NVIDIA A800 80GB PCIe", "A800 PCIe 80GB", "A800-PCIE-80GB"},
	},
	{
		Model: "L40S", Arch: "Ada",
		FP32TFLOPS: 91.6, BF16TFLOPS: 362.05, FP16TFLOPS: 362.05, TensorSparseTFLOPS: 733,
		MemGBps: 864, MemoryGB: 48, PCIeGen: 4, PCIeWidth: 16, PowerW: 350, BoostMHz: 2520,
		Source: "https://www.nvidia.com/en-us/data-center/l40s/ (L40S datasheet)",
		names:  []string{"NVIDIA L40S"},
	},
	{
		Model: "L40", Arch: "Ada",
		FP32TFLOPS: 90.5, BF16TFLOPS: 181.05, FP16TFLOPS: 181.05, TensorSparseTFLOPS: 362.1,
		MemGBps: 864, MemoryGB: 48, PCIeGen: 4, PCIeWidth: 16, PowerW: 300, BoostMHz: 2490,
		Source: "https://www.nvidia.com/en-us/data-center/l40/ (L40 datasheet); NVIDIA Ada GPU Architecture whitepaper v2.01 (L40 column)",
		names:  []string{"NVIDIA L40"},
	},
	{
		Model: "L4", Arch: "Ada",
		FP32TFLOPS: 30.3, BF16TFLOPS: 121, FP16TFLOPS: 121, TensorSparseTFLOPS: 242,
		MemGBps: 300, MemoryGB: 24, PCIeGen: 4, PCIeWidth: 16, PowerW: 72, BoostMHz: 2040,
		Source: "https://www.nvidia.com/en-us/data-center/l4/ (L4 datasheet); NVIDIA Ada GPU Architecture whitepaper v2.01 (L4 column)",
		names:  []string{"NVIDIA L4"},
	},
	{
		Model: "A10", Arch: "Ampere",
		FP32TFLOPS: 31.2, BF16TFLOPS: 125, FP16TFLOPS: 125, TensorSparseTFLOPS: 250,
		MemGBps: 600, MemoryGB: 24, PCIeGen: 4, PCIeWidth: 16, PowerW: 150, BoostMHz: 1695,
		Source: "https://www.nvidia.com/en-us/data-center/products/a10-gpu/ (A10 datasheet)",
		names:  []string{"NVIDIA A10"},
	},
	{
		Model: "A40", Arch: "Ampere",
		FP32TFLOPS: 37.4, BF16TFLOPS: 149.7, FP16TFLOPS: 149.7, TensorSparseTFLOPS: 299.4,
		MemGBps: 696, MemoryGB: 48, PCIeGen: 4, PCIeWidth: 16, PowerW: 300, BoostMHz: 1740,
		Source: "https://www.nvidia.com/en-us/data-center/a40/ (A40 datasheet)",
		names:  []string{"NVIDIA A40"},
	},
	{
		Model: "RTX A6000", Arch: "Ampere",
		FP32TFLOPS: 38.7, BF16TFLOPS: 154.8, FP16TFLOPS: 154.8, TensorSparseTFLOPS: 309.7,
		MemGBps: 768, MemoryGB: 48, PCIeGen: 4, PCIeWidth: 16, PowerW: 300, BoostMHz: 1800,
		Source: "https://www.nvidia.com/en-us/design-visualization/rtx-a6000/ (RTX A6000 datasheet); NVIDIA Ampere GA102 GPU Architecture whitepaper V2.0, appendix C (RTX A6000)",
		names:  []string{"NVIDIA RTX A6000", "A6000"},
	},
	{
		Model: "RTX 6000 Ada", Arch: "Ada",
		FP32TFLOPS: 91.1, BF16TFLOPS: 364.2, FP16TFLOPS: 364.2, TensorSparseTFLOPS: 728.5,
		MemGBps: 960, MemoryGB: 48, PCIeGen: 4, PCIeWidth: 16, PowerW: 300, BoostMHz: 2505,
		Source: "https://www.nvidia.com/en-us/design-visualization/rtx-6000/ (RTX 6000 Ada datasheet); NVIDIA Ada GPU Architecture whitepaper v2.01 (RTX 6000 Ada column)",
		names:  []string{"NVIDIA RTX 6000 Ada Generation", "RTX 6000 Ada", "6000 Ada"},
	},
	{
		Model: "RTX 4090", Arch: "Ada",
		FP32TFLOPS: 82.6, BF16TFLOPS: 165.2, FP16TFLOPS: 165.2, TensorSparseTFLOPS: 330.3,
		MemGBps: 1008, MemoryGB: 24, PCIeGen: 4, PCIeWidth: 16, PowerW: 450, BoostMHz: 2520,
		Source: "NVIDIA Ada GPU Architecture whitepaper v2.01, appendix A (GeForce RTX 4090 column: FP16 and BF16 tensor with FP32 accumulate 165.2/330.3)",
		names:  []string{"NVIDIA GeForce RTX 4090", "4090"},
	},
	{
		// The China-market 4090 D: 114 of the 4090's 128 SMs at the same
		// clocks.
		Model: "RTX 4090 D", Arch: "Ada",
		FP32TFLOPS: 73.54, BF16TFLOPS: 147.09, FP16TFLOPS: 147.09, TensorSparseTFLOPS: 294.17,
		MemGBps: 1008, MemoryGB: 24, PCIeGen: 4, PCIeWidth: 16, PowerW: 425, BoostMHz: 2520,
		Source: "https://www.nvidia.cn/geforce/graphics-cards/40-series/rtx-4090-d/ (14,592 CUDA cores, 2.52 GHz boost, 425 W); dense figures with FP32 accumulate as listed by https://hmc-tech.com/gpu/nvidia-geforce-rtx-4090-d",
		names:  []string{"NVIDIA GeForce RTX 4090 D", "4090 D", "4090D", "RTX 4090D"},
	},
	{
		Model: "RTX 4080", Arch: "Ada",
		FP32TFLOPS: 48.7, BF16TFLOPS: 97.5, FP16TFLOPS: 97.5, TensorSparseTFLOPS: 194.9,
		MemGBps: 716.8, MemoryGB: 16, PCIeGen: 4, PCIeWidth: 16, PowerW: 320, BoostMHz: 2505,
		Source: "NVIDIA Ada GPU Architecture whitepaper v2.01, appendix A (GeForce RTX 4080 16GB column)",
		names:  []string{"NVIDIA GeForce RTX 4080", "4080"},
	},
	{
		Model: "RTX 3090", Arch: "Ampere",
		FP32TFLOPS: 35.6, BF16TFLOPS: 71, FP16TFLOPS: 71, TensorSparseTFLOPS: 142,
		MemGBps: 936, MemoryGB: 24, PCIeGen: 4, PCIeWidth: 16, PowerW: 350, BoostMHz: 1695,
		Source: "NVIDIA Ampere GA102 GPU Architecture whitepaper V2.0, appendix A (GeForce RTX 3090 column: FP16 and BF16 tensor with FP32 accumulate 71/142)",
		names:  []string{"NVIDIA GeForce RTX 3090", "3090"},
	},
	{
		Model: "RTX 3080", Arch: "Ampere",
		FP32TFLOPS: 29.8, BF16TFLOPS: 59.5, FP16TFLOPS: 59.5, TensorSparseTFLOPS: 119,
		MemGBps: 760, MemoryGB: 10, PCIeGen: 4, PCIeWidth: 16, PowerW: 320, BoostMHz: 1710,
		Source: "NVIDIA Ampere GA102 GPU Architecture whitepaper V2.0, the GeForce RTX 3080 against RTX 2080 Super specification table (RTX 3080 10GB column; appendix A holds only the 3090 and 3070)",
		names:  []string{"NVIDIA GeForce RTX 3080", "3080"},
	},
	{
		// Tensor figures: NVIDIA gives only sparse ones without saying the
		// accumulate, and a cuBLAS bf16 run has been reported at 254
		// TFLOPS, above what a half-rate FP32 accumulate would allow: left
		// 0 rather than guessed. FP32 is 21,760 cores x 2 x 2.407 GHz.
		Model: "RTX 5090", Arch: "Blackwell",
		FP32TFLOPS: 104.8, MemGBps: 1792, MemoryGB: 32, PCIeGen: 5, PCIeWidth: 16, PowerW: 575, BoostMHz: 2407,
		Source: "https://www.nvidia.com/en-us/geforce/graphics-cards/50-series/rtx-5090/ (21,760 CUDA cores, 2.41 GHz boost, 32 GB GDDR7 on 512 bits at 28 Gbps, PCIe 5.0, 575 W)",
		names:  []string{"NVIDIA GeForce RTX 5090", "5090"},
	},
	{
		Model: "T4", Arch: "Turing",
		FP32TFLOPS: 8.1, FP16TFLOPS: 65,
		MemGBps: 320, MemoryGB: 16, PCIeGen: 3, PCIeWidth: 16, PowerW: 70, BoostMHz: 1590,
		Source: "https://www.nvidia.com/en-us/data-center/tesla-t4/ (T4 datasheet: mixed precision FP16/FP32 65 TFLOPS; no bf16)",
		names:  []string{"Tesla T4", "NVIDIA T4"},
	},
	{
		Model: "V100 SXM2", Arch: "Volta",
		FP32TFLOPS: 15.7, FP16TFLOPS: 125,
		MemGBps: 900, PCIeGen: 3, PCIeWidth: 16, PowerW: 300, BoostMHz: 1530,
		Source: "https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf (V100 SXM2)",
		names:  []string{"Tesla V100-SXM2-16GB", "Tesla V100-SXM2-32GB", "V100 SXM2", "V100 SXM2 16GB", "V100 SXM2 32GB"},
	},
	{
		Model: "V100 PCIe", Arch: "Volta",
		FP32TFLOPS: 14, FP16TFLOPS: 112,
		MemGBps: 900, PCIeGen: 3, PCIeWidth: 16, PowerW: 250, BoostMHz: 1380,
		Source: "https://images.nvidia.com/content/technologies/volta/pdf/volta-v100-datasheet-update-us-1165301-r5.pdf (V100 PCIe)",
		names:  []string{"Tesla V100-PCIE-16GB", "Tesla V100-PCIE-32GB", "V100 PCIe", "V100 PCIe 16GB", "V100 PCIe 32GB"},
	},
}
