package main

import (
	"debug/elf"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPortableBinary_GLIBC checks the portable agent (built by
// scripts/agent-build-portable.sh) needs no glibc symbol newer than 2.17 and
// no shared library but glibc's own. It runs when the binary exists at
// dist/gpuledger-agent-linux-amd64 or at $GPULEDGER_AGENT_PORTABLE_BIN.
func TestPortableBinary_GLIBC(t *testing.T) {
	bin := os.Getenv("GPULEDGER_AGENT_PORTABLE_BIN")
	if bin == "" {
		bin = filepath.Join("..", "..", "dist", "gpuledger-agent-linux-amd64")
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Skipf("no portable binary at %s (%v): run scripts/agent-build-portable.sh or set GPULEDGER_AGENT_PORTABLE_BIN", bin, err)
	}
	defer f.Close()
	syms, err := f.ImportedSymbols()
	if err != nil {
		t.Fatal(err)
	}
	newest := "0"
	for _, s := range syms {
		v, ok := strings.CutPrefix(s.Version, "GLIBC_")
		if !ok {
			continue
		}
		if versionLess(newest, v) {
			newest = v
		}
		if versionLess("2.17", v) {
			t.Errorf("%s needs %s@GLIBC_%s, newer than 2.17", bin, s.Name, v)
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range libs {
		switch l {
		case "libc.so.6", "libpthread.so.0", "libdl.so.2", "libresolv.so.2", "librt.so.1", "libm.so.6":
		default:
			t.Errorf("%s links %s at load time", bin, l)
		}
	}
	t.Logf("%s: newest GLIBC_%s, libraries %v", bin, newest, libs)
}

func versionLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < max(len(as), len(bs)); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}

func TestVersionLess(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{{"2.17", "2.3.2", false}, {"2.3.2", "2.17", true}, {"2.17", "2.17", false}, {"2.17", "2.34", true}, {"2.2.5", "2.3", true}} {
		if got := versionLess(c.a, c.b); got != c.want {
			t.Errorf("versionLess(%s, %s) = %v", c.a, c.b, got)
		}
	}
}
