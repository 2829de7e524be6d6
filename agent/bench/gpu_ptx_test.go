package bench

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestPTX_WellFormed checks what can be checked of the embedded PTX
// without a driver: the oldest ISA and target that have its instructions
// (a newer .version is refused by older drivers), the entry the Go side
// loads, its two parameters, balanced braces, and that the loop holds the
// operations the Go side counts as flops.
func TestPTX_WellFormed(t *testing.T) {
	for _, c := range []struct {
		k      kernel
		isa    string
		target string
		op     string // the counted instruction
		ops    int    // of them per loop iteration
		flops  float64
	}{
		// FP32 FMA: 2 flops each, 64 per thread and iteration.
		{kFP32, "4.0", "sm_50", "fma.rn.f32", 64, 64 * 2},
		// mma.sync m16n8k16: 2·16·8·16 flops per warp, 16 per iteration.
		{kBF16, "7.0", "sm_80", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 16, 16 * 2 * 16 * 8 * 16},
		{kFP16, "7.0", "sm_80", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 16, 16 * 2 * 16 * 8 * 16},
		// Turing's m16n8k8: 2·16·8·8 flops per warp.
		{kFP16SM75, "6.5", "sm_75", "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32", 16, 16 * 2 * 16 * 8 * 8},
	} {
		t.Run(c.k.entry, func(t *testing.T) {
			src := string(c.k.ptx)
			isa, target := ptxHeader(c.k.ptx)
			if isa != c.isa || target != c.target {
				t.Errorf(".version %s .target %s, want %s %s", isa, target, c.isa, c.target)
			}
			sm, _ := strconv.Atoi(strings.TrimPrefix(target, "sm_"))
			if sm != c.k.minCC {
				t.Errorf("target %s but the Go side loads it from compute %d", target, c.k.minCC)
			}
			if !strings.Contains(src, "\n.address_size 64\n") {
				t.Error("no .address_size 64")
			}
			entries := regexp.MustCompile(`\.visible \.entry (\w+)\(`).FindAllStringSubmatch(src, -1)
			if len(entries) != 1 || entries[0][1] != c.k.entry {
				t.Errorf("entries %v, want one %s", entries, c.k.entry)
			}
			if n := strings.Count(src, ".param "); n != 2 {
				t.Errorf("%d parameters, the launch passes 2", n)
			}
			if strings.Count(src, "{") != strings.Count(src, "}") {
				t.Error("unbalanced braces")
			}
			loop := src[strings.Index(src, "$Lloop:"):strings.Index(src, "bra \t$Lloop;")]
			if n := strings.Count(loop, c.op+" "); n != c.ops || strings.Count(loop, "\n\t") != c.ops+3 {
				t.Errorf("loop holds %d %s of %d instructions, want %d and the counter's add, setp and branch", n, c.op, strings.Count(loop, "\n\t"), c.ops)
			}
			if c.k.flopsPerIter != c.flops {
				t.Errorf("Go counts %v flops per iteration, the PTX does %v", c.k.flopsPerIter, c.flops)
			}
			if !bytes.HasSuffix(bytes.TrimSpace(c.k.ptx), []byte("}")) {
				t.Error("does not end with the entry's body")
			}
			// Every register used is declared (%r<16> declares %r0-%r15).
			decl := map[string]int{}
			for _, m := range regexp.MustCompile(`\.reg \.\w+\s+%(\w+?)<(\d+)>;`).FindAllStringSubmatch(src, -1) {
				decl[m[1]], _ = strconv.Atoi(m[2])
			}
			for _, m := range regexp.MustCompile(`%(p|r|f|rd)(\d+)\b`).FindAllStringSubmatch(src, -1) {
				n, _ := strconv.Atoi(m[2])
				if lim, ok := decl[m[1]]; !ok || n >= lim {
					t.Errorf("register %%%s%s not declared (%s<%d>)", m[1], m[2], m[1], lim)
					break
				}
			}
		})
	}
}
