package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestHelp_ListsCommands checks that the agent's --help names every
// command with an example and exits 0, and that an unknown command exits
// 2 with a pointer to --help.
func TestHelp_ListsCommands(t *testing.T) {
	env := func(string) string { return "" }
	for _, args := range [][]string{{"--help"}, {"-h"}, {"-help"}, {"help"}} {
		var out, errb bytes.Buffer
		if code := run(t.Context(), args, &out, &errb, env); code != exitOK {
			t.Errorf("%v: exit %d, want 0; stderr %q", args, code, errb.String())
		}
		for _, want := range []string{"run ", "check", "install", "version", "e.g. gpuledger-agent run --server", "e.g. gpuledger-agent install --server"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%v: the help lacks %q:\n%s", args, want, out.String())
			}
		}
	}
	var out, errb bytes.Buffer
	if code := run(t.Context(), []string{"frobnicate"}, &out, &errb, env); code != exitUsage || !strings.Contains(errb.String(), "--help") {
		t.Errorf("unknown command: exit %d stderr %q, want 2 and a pointer to --help", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := run(t.Context(), []string{"run", "--nosuch"}, &out, &errb, env); code != exitUsage || !strings.Contains(errb.String(), "--help") {
		t.Errorf("unknown flag: exit %d stderr %q, want 2 and a pointer to --help", code, errb.String())
	}
}

// TestHelp_NetThresholdDefault checks that run's flag help prints the
// network threshold's default as a whole number of bytes.
func TestHelp_NetThresholdDefault(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(t.Context(), []string{"run", "--help"}, &out, &errb, func(string) string { return "" }); code != exitOK {
		t.Fatalf("run --help: exit %d", code)
	}
	help := out.String() + errb.String()
	if !strings.Contains(help, "(default 1048576)") || strings.Contains(help, "e+06") {
		t.Errorf("want --net-threshold's default as 1048576:\n%s", help)
	}
}

// TestPlainFloat checks the flag value behind --net-threshold.
func TestPlainFloat(t *testing.T) {
	var v float64
	f := (*plainFloat)(&v)
	for _, c := range []struct {
		in   string
		want float64
		ok   bool
	}{{"1048576", 1048576, true}, {"1e6", 1e6, true}, {"0", 0, true}, {"2.5", 2.5, true}, {"lots", 0, false}} {
		v = -1
		err := f.Set(c.in)
		if (err == nil) != c.ok || (c.ok && v != c.want) {
			t.Errorf("Set(%q): %v, %v", c.in, v, err)
		}
	}
	v = 1 << 20
	if s := f.String(); s != "1048576" {
		t.Errorf("String() = %q", s)
	}
}
