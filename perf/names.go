package perf

import "strings"

// DisplayName is a GPU name as NVML reports it, as a person writes it:
// the vendor and brand words dropped ("NVIDIA GeForce RTX 4090" is
// "RTX 4090", "NVIDIA H100 80GB HBM3" is "H100 80GB HBM3"), spaces
// collapsed. It is what a rental logged from an announcement shows and
// what the bench puts in GPU.Model; ModelKey compares it with others.
func DisplayName(s string) string {
	f := strings.Fields(s)
	out := f[:0]
	for _, w := range f {
		switch strings.ToLower(w) {
		case "nvidia", "geforce", "tesla", "quadro":
			continue
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

// ModelKey reduces a GPU name as NVML reports it ("NVIDIA GeForce RTX
// 4090", "NVIDIA H100 80GB HBM3") to a coarse comparable key ("4090",
// "h100"): lower case, vendor and marketing words dropped, the first
// word kept. It says whether two names are the same family of card (the
// agent's GPU against the rental as logged); it is too coarse to pick a
// reference ("H100 PCIe" and "H100 80GB HBM3" share "h100"): Lookup does
// that.
func ModelKey(s string) string {
	s = strings.ToLower(s)
	for _, w := range []string{"nvidia", "geforce", "tesla", "quadro", "rtx", "gtx", "-", "_"} {
		s = strings.ReplaceAll(s, w, " ")
	}
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}
