package main

import (
	"slices"
	"strings"
	"testing"
)

const testToken = "tok_ABCdef-0123456789abcdefghijklmnopqrstuv"

func envMap(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestParseInstallArgs(t *testing.T) {
	env := envMap(map[string]string{"HOME": "/home/u", "GPULEDGER_AGENT_TOKEN": testToken})
	t.Run("OK", func(t *testing.T) {
		o, err := parseInstallArgs([]string{
			"--server", "https://l.example", "--token=" + testToken, "-release-cmd", "shutdown -h now",
			"--init", "nohup", "--interval=10s", "--no-start", "--dir", "/x", "--watch", "/w",
		}, envMap(map[string]string{"HOME": "/home/u"}))
		if err != nil {
			t.Fatal(err)
		}
		wantRun := []string{"--server", "https://l.example", "--release-cmd", "shutdown -h now", "--interval", "10s", "--watch", "/w"}
		if !slices.Equal(o.RunArgs, wantRun) || o.Token != testToken || o.Init != "nohup" || !o.NoStart || o.Dir != "/x" {
			t.Fatalf("got %+v", o)
		}
	})
	t.Run("Defaults", func(t *testing.T) {
		o, err := parseInstallArgs([]string{"--server", "http://s:8477"}, env)
		if err != nil || o.Dir != "/home/u/.gpuledger" || o.Init != "auto" || o.Root != "/" || o.NoStart || o.Token != testToken {
			t.Fatalf("%+v %v", o, err)
		}
	})
	t.Run("RootImpliesNoStart", func(t *testing.T) {
		o, err := parseInstallArgs([]string{"--server", "http://s", "--root", "/tmp/r"}, env)
		if err != nil || !o.NoStart {
			t.Fatalf("%+v %v", o, err)
		}
	})
	for _, c := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"ErrNoServer", []string{}, map[string]string{"HOME": "/h", "GPULEDGER_AGENT_TOKEN": testToken}, "--server is required"},
		{"ErrNoToken", []string{"--server", "http://s"}, map[string]string{"HOME": "/h"}, "no token"},
		{"ErrBadToken", []string{"--server", "http://s", "--token", "a b;c"}, map[string]string{"HOME": "/h"}, "characters"},
		{"ErrInit", []string{"--server", "http://s", "--init", "upstart"}, map[string]string{"HOME": "/h", "GPULEDGER_AGENT_TOKEN": testToken}, "--init \"upstart\""},
		{"ErrJob", []string{"--server", "http://s", "--", "python", "train.py"}, map[string]string{"HOME": "/h", "GPULEDGER_AGENT_TOKEN": testToken}, "does not wrap a job"},
		{"ErrPositional", []string{"http://s"}, map[string]string{"HOME": "/h"}, "unexpected argument"},
		{"ErrMissingValue", []string{"--server"}, map[string]string{"HOME": "/h"}, "needs a value"},
		{"ErrNoHome", []string{"--server", "http://s"}, map[string]string{"GPULEDGER_AGENT_TOKEN": testToken}, "--dir is required"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseInstallArgs(c.args, envMap(c.env))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}
