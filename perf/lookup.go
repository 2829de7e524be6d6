package perf

import "strings"

// Lookup returns the reference for a GPU, named as NVML names it ("NVIDIA
// H100 80GB HBM3", "NVIDIA GeForce RTX 4090") or as a person writes it
// ("H100 SXM", "RTX 4090", "4090"). A name matches only a row's own
// spellings, compared without case, vendor words or punctuation: "H100"
// alone, "RTX 6000" alone (a Turing Quadro or an Ada card) or a card not
// in the table gives false, never the nearest row.
func Lookup(name string) (Reference, bool) {
	i, ok := byName[lookupKey(name)]
	if !ok {
		return Reference{}, false
	}
	return references[i], true
}

// lookupGPU finds a bench GPU's reference by its NVML name, else by its
// model.
func lookupGPU(g GPU) (Reference, bool) {
	if r, ok := Lookup(g.Name); ok {
		return r, true
	}
	return Lookup(g.Model)
}

// lookupKey is a name reduced for the table: lower case, vendor and
// brand words dropped, "-", "_" and "/" as spaces, "rtx" parted from a
// number glued to it, spaces collapsed.
func lookupKey(s string) string {
	s = strings.ToLower(s)
	s = strings.NewReplacer("-", " ", "_", " ", "/", " ", "(tm)", " ", "(r)", " ").Replace(s)
	f := strings.Fields(s)
	out := f[:0]
	for _, w := range f {
		switch w {
		case "nvidia", "geforce", "tesla", "quadro":
			continue
		}
		// "RTX4090" is how many write "RTX 4090": the brand glued to
		// the number is the same spelling, not a guess.
		if rest, ok := strings.CutPrefix(w, "rtx"); ok && rest != "" {
			out = append(out, "rtx", rest)
			continue
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}

// byName maps each row's spellings, reduced by lookupKey, to its index.
var byName = func() map[string]int {
	m := make(map[string]int)
	for i, r := range references {
		for _, n := range r.names {
			k := lookupKey(n)
			if j, dup := m[k]; dup && j != i {
				panic("perf: " + n + " names two references")
			}
			m[k] = i
		}
	}
	return m
}()

// References returns a copy of the reference table, one row per model.
func References() []Reference {
	out := make([]Reference, len(references))
	copy(out, references)
	for i := range out {
		out[i].names = append([]string(nil), out[i].names...)
	}
	return out
}

// Names returns the spellings Lookup matches for the reference.
func (r Reference) Names() []string { return append([]string(nil), r.names...) }

// pcieGBps is the theoretical rate of a PCIe link in one direction, in
// GB/s (1e9), after line coding: 2.5 and 5 GT/s with 8b/10b, 8, 16 and
// 32 GT/s with 128b/130b. 0 for a generation it does not know.
func pcieGBps(gen, width int) float64 {
	var perLane float64 // GB/s per lane
	switch gen {
	case 1:
		perLane = 2.5 * 8 / 10 / 8
	case 2:
		perLane = 5.0 * 8 / 10 / 8
	case 3:
		perLane = 8.0 * 128 / 130 / 8
	case 4:
		perLane = 16.0 * 128 / 130 / 8
	case 5:
		perLane = 32.0 * 128 / 130 / 8
	default:
		return 0
	}
	if width <= 0 || width > 32 {
		return 0
	}
	return perLane * float64(width)
}

// expect returns, for one figure of a GPU of this model, the datasheet
// figure, what this bench gives on a healthy card (0 unknown) and
// whether that healthy figure is derived from the datasheet.
func (r *Reference) expect(name string) (datasheet, healthy float64, derived bool) {
	switch name {
	case "fp32_tflops":
		return r.FP32TFLOPS, r.Healthy.FP32TFLOPS, false
	case "bf16_tflops":
		return r.BF16TFLOPS, r.Healthy.BF16TFLOPS, false
	case "fp16_tflops":
		return r.FP16TFLOPS, r.Healthy.FP16TFLOPS, false
	case "mem_gbps":
		if r.Healthy.MemGBps > 0 {
			return r.MemGBps, r.Healthy.MemGBps, false
		}
		return r.MemGBps, r.MemGBps * derivedMemFraction, r.MemGBps > 0
	case "h2d_gbps", "d2h_gbps":
		ds := pcieGBps(r.PCIeGen, r.PCIeWidth)
		h := r.Healthy.H2DGBps
		if name == "d2h_gbps" {
			h = r.Healthy.D2HGBps
		}
		if h > 0 {
			return ds, h, false
		}
		return ds, ds * derivedCopyFraction, ds > 0
	}
	return 0, 0, false
}
