package main

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestParseConfig_ListenDefault checks where the agent hub listens when
// nothing says: on loopback in the terminal console (no agent on another
// host can be expected to reach a laptop, and nobody else should reach
// its ledger), on all interfaces with a Telegram token (agents on rented
// hosts must reach the server). An address given in GPULEDGER_LISTEN or
// -listen is kept as given in both modes.
func TestParseConfig_ListenDefault(t *testing.T) {
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"ConsoleDefault", nil, nil, "127.0.0.1:8477"},
		{"TelegramDefault", map[string]string{"TELEGRAM_BOT_TOKEN": "1:T"}, nil, ":8477"},
		{"TelegramTokenFlag", nil, []string{"-telegram-token", "1:T"}, ":8477"},
		{"ConsoleEnvAllInterfaces", map[string]string{"GPULEDGER_LISTEN": ":8477"}, nil, ":8477"},
		{"ConsoleFlagAllInterfaces", nil, []string{"-listen", "0.0.0.0:9000"}, "0.0.0.0:9000"},
		{"ConsoleEnvPort", map[string]string{"GPULEDGER_LISTEN": "127.0.0.1:9000"}, nil, "127.0.0.1:9000"},
		{"TelegramFlagLoopback", map[string]string{"TELEGRAM_BOT_TOKEN": "1:T"}, []string{"-listen", "127.0.0.1:8477"}, "127.0.0.1:8477"},
	} {
		t.Run(c.name, func(t *testing.T) {
			getenv := func(k string) string { return c.env[k] }
			cfg, _, err := parseConfig("serve", c.args, getenv, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Listen != c.want {
				t.Errorf("Listen = %q, want %q", cfg.Listen, c.want)
			}
			if want := "http://127.0.0.1:"; !strings.HasPrefix(cfg.publicURL(), want) && !strings.Contains(c.want, "0.0.0.0") {
				t.Errorf("publicURL() = %q, want it on %s", cfg.publicURL(), want)
			}
		})
	}
}

// TestParseConfig_ErrListen: a listen address that is not host:port is
// refused with the variable's name, in both modes.
func TestParseConfig_ErrListen(t *testing.T) {
	for _, env := range []map[string]string{
		{"GPULEDGER_LISTEN": "8477"},
		{"GPULEDGER_LISTEN": "8477", "TELEGRAM_BOT_TOKEN": "1:T"},
	} {
		_, _, err := parseConfig("serve", nil, func(k string) string { return env[k] }, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "GPULEDGER_LISTEN") {
			t.Errorf("env %v: err = %v, want one naming GPULEDGER_LISTEN", env, err)
		}
	}
}

// TestParseConfig_ErrPublicURL: a public URL that is not http(s) would
// hand agents an install command that cannot work; it is refused at
// start with the variable's name, and a good one is kept.
func TestParseConfig_ErrPublicURL(t *testing.T) {
	for _, bad := range []string{"ledger.example.com", "ledger.example.com:8477", "ftp://ledger.example.com", "https://", "http//x", "https://ledger.example.com/?a=1", "https://example.com/ledger#x"} {
		env := map[string]string{"GPULEDGER_PUBLIC_URL": bad}
		_, _, err := parseConfig("serve", nil, func(k string) string { return env[k] }, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "GPULEDGER_PUBLIC_URL") || !strings.Contains(err.Error(), "https://") {
			t.Errorf("GPULEDGER_PUBLIC_URL=%q: err = %v, want one naming the variable with an example", bad, err)
		}
	}
	for in, want := range map[string]string{
		"https://ledger.example.com/": "https://ledger.example.com",
		// A reverse proxy's prefix (docs/deploy.md).
		"https://example.com/ledger/": "https://example.com/ledger",
	} {
		env := map[string]string{"GPULEDGER_PUBLIC_URL": in}
		cfg, _, err := parseConfig("serve", nil, func(k string) string { return env[k] }, io.Discard)
		if err != nil || cfg.publicURL() != want {
			t.Errorf("good URL %q: %q, %v", in, cfg.publicURL(), err)
		}
	}
}

// TestParseConfig_ErrPlatformURL: a platform's API base that is not an
// http(s) URL with a host is refused at start, naming the variable and
// giving its documented base as the example, so a typo shows then and not
// as a failed /connect; one that is unset is the documented base.
func TestParseConfig_ErrPlatformURL(t *testing.T) {
	defaults := map[string]string{
		"GPULEDGER_RUNPOD_URL":         "https://rest.runpod.io/v1",
		"GPULEDGER_RUNPOD_GRAPHQL_URL": "https://api.runpod.io/graphql",
		"GPULEDGER_VAST_URL":           "https://console.vast.ai/api/v0",
		"GPULEDGER_LAMBDA_URL":         "https://cloud.lambda.ai/api/v1",
		"GPULEDGER_AUTODL_URL":         "https://api.autodl.com",
	}
	for name, def := range defaults {
		for _, bad := range []string{"rest.runpod.io", "ftp://x", "https://", "https://u:p@x", "https://x/?a=1"} {
			env := map[string]string{name: bad}
			_, _, err := parseConfig("serve", nil, func(k string) string { return env[k] }, io.Discard)
			want := fmt.Sprintf("%s: %q is not an http(s) URL with a host and no query (e.g. %s)", name, bad, def)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s=%q: err = %v, want %q", name, bad, err, want)
			}
		}
	}
}

// TestParseConfig_AppAuthMaxAge: the dashboard's Telegram sign-in age
// defaults to an hour, is read from the environment or the flag, and one
// outside 1m..24h (or not a duration) is refused with the variable's name.
func TestParseConfig_AppAuthMaxAge(t *testing.T) {
	cfg, _, err := parseConfig("serve", nil, func(string) string { return "" }, io.Discard)
	if err != nil || cfg.AppAuthMaxAge.String() != "1h0m0s" {
		t.Fatalf("default: AppAuthMaxAge = %s, err %v; want 1h", cfg.AppAuthMaxAge, err)
	}
	cfg, _, err = parseConfig("serve", []string{"-app-auth-max-age", "5m"}, func(string) string { return "" }, io.Discard)
	if err != nil || cfg.AppAuthMaxAge.String() != "5m0s" {
		t.Fatalf("flag: AppAuthMaxAge = %s, err %v; want 5m", cfg.AppAuthMaxAge, err)
	}
	for _, bad := range []string{"30s", "25h", "soon", "-1h"} {
		env := map[string]string{"GPULEDGER_APP_AUTH_MAX_AGE": bad}
		_, _, err := parseConfig("serve", nil, func(k string) string { return env[k] }, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "GPULEDGER_APP_AUTH_MAX_AGE") {
			t.Errorf("GPULEDGER_APP_AUTH_MAX_AGE=%q: err = %v, want one naming the variable", bad, err)
		}
	}
}

// TestParseConfig_TeamOutsiders: whether a team's invite may admit
// someone outside the allow list is off unless the operator says on (in
// any case, or with the flag, which overrides the variable); anything
// else stops the start with the variable's name and the values it takes.
func TestParseConfig_TeamOutsiders(t *testing.T) {
	for _, c := range []struct {
		env  string
		args []string
		want bool
	}{
		{"", nil, false},
		{"off", nil, false},
		{"on", nil, true},
		{" ON ", nil, true},
		{"Off", nil, false},
		{"", []string{"-team-outsiders", "on"}, true},
		{"on", []string{"-team-outsiders=off"}, false},
		{"maybe", []string{"-team-outsiders", "on"}, true}, // the flag decides
	} {
		env := map[string]string{"GPULEDGER_TEAM_OUTSIDERS": c.env}
		cfg, _, err := parseConfig("serve", c.args, func(k string) string { return env[k] }, io.Discard)
		if err != nil || cfg.TeamOutsiders != c.want {
			t.Errorf("GPULEDGER_TEAM_OUTSIDERS=%q %v: TeamOutsiders = %v, %v; want %v", c.env, c.args, cfg.TeamOutsiders, err, c.want)
		}
	}
	for _, bad := range []struct {
		env  string
		args []string
	}{{"yes", nil}, {"1", nil}, {"true", nil}, {"", []string{"-team-outsiders", "all"}}} {
		env := map[string]string{"GPULEDGER_TEAM_OUTSIDERS": bad.env}
		_, _, err := parseConfig("serve", bad.args, func(k string) string { return env[k] }, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "GPULEDGER_TEAM_OUTSIDERS") || !strings.Contains(err.Error(), "is not on or off") {
			t.Errorf("GPULEDGER_TEAM_OUTSIDERS=%q %v: err = %v, want one naming the variable and on or off", bad.env, bad.args, err)
		}
	}
}
