package bot

import (
	"strings"
	"testing"
)

// TestConnectTexts_Catalog checks that every platform-connection reply is
// in both languages with the same arguments, and that every connectable
// platform says where its key is created.
func TestConnectTexts_Catalog(t *testing.T) {
	for _, err := range connectTexts.Check() {
		t.Error(err)
	}
	for _, p := range ConnectPlatforms {
		if _, ok := connectTexts["where_"+p]; !ok {
			t.Errorf("no where_%s: /connect cannot say where a %s key is created", p, p)
		}
	}
}

func TestRedactSecrets(t *testing.T) {
	for in, want := range map[string]string{
		"/connect runpod rpa_SECRET":           "/connect runpod <key removed>",
		"/status\n/连接 vast SECRET":             "/status\n/连接 vast <key removed>",
		"/connect@fake_bot SECRET":             "/connect@fake_bot <key removed>",
		"/connect SECRET runpod extra":         "/connect <key removed> runpod",
		"/connect":                             "/connect",
		"/rent box1 runpod 4090 SECRET 0.69/h": "/rent box1 runpod 4090 SECRET 0.69/h",
	} {
		got := redactSecrets(in)
		if got != want {
			t.Errorf("redactSecrets(%q) = %q, want %q", in, got, want)
		}
		if (strings.Contains(in, "/connect") || strings.Contains(in, "/连接")) && strings.Contains(got, "SECRET") {
			t.Errorf("redactSecrets(%q) keeps the key: %q", in, got)
		}
	}
}
