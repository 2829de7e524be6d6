package bot

import (
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/connector/autodl"
	"github.com/gpuledger/gpuledger/connector/lambda"
	"github.com/gpuledger/gpuledger/connector/runpod"
	"github.com/gpuledger/gpuledger/connector/vast"
)

// TestConnectTexts_Catalog checks that every platform-connection reply is
// in both languages with the same arguments, and that every connectable
// platform says where its key is created.
func TestConnectTexts_Catalog(t *testing.T) {
	for _, err := range connectTexts.Check() {
		t.Error(err)
	}
	for _, p := range command.ConnectPlatforms {
		if _, ok := connectTexts["where_"+p]; !ok {
			t.Errorf("no where_%s: /connect cannot say where a %s key is created", p, p)
		}
	}
}

// TestCheckPlatforms: the server's platforms are served (the chat reads
// each in /connect and has words for where its key is made, around its
// key page where it has one); a platform without words, one /connect
// does not read, and words that disagree with the spec on the key page
// are refused, so New fails at start instead of a user meeting a
// placeholder.
func TestCheckPlatforms(t *testing.T) {
	if err := checkPlatforms(connector.Registry{runpod.Spec, vast.Spec, lambda.Spec, autodl.Spec}); err != nil {
		t.Fatalf("the server's platforms: %v", err)
	}
	noPage := runpod.Spec
	noPage.KeyPage = ""
	page := autodl.Spec
	page.KeyPage = "autodl.com/console"
	for _, c := range []struct {
		spec connector.Spec
		want string
	}{
		{connector.Spec{Key: "aws"}, "/connect does not read aws"},
		{connector.Spec{Key: "aws"}, "no words for where a aws key is made (where_aws)"},
		{noPage, `where_runpod takes a key page: true; runpod's spec names ""`},
		{page, `where_autodl takes a key page: false; autodl's spec names "autodl.com/console"`},
	} {
		err := checkPlatforms(connector.Registry{vast.Spec, c.spec})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.spec.Key, err, c.want)
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
