package bot_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/agent/hub"
	"github.com/gpuledger/gpuledger/bot"
)

// TestCore_AgentWithoutBinary: when the server has no agent binary to
// hand out, /agent still issues the token (the binary can be put in place
// later, and the token then works) but says, in the user's language, that
// the install command's download fails and how to fix it. Once the binary
// is there, the warning is gone.
func TestCore_AgentWithoutBinary(t *testing.T) {
	db := openStore(t)
	h, err := hub.New(hub.Config{Store: db})
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "gpuledger-agent")
	dl, err := hub.NewDownloads(hub.DownloadConfig{Binary: bin, PublicURL: "http://hub", Tokens: h.Tokens()})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, bot.Config{Store: db, AllowedUsers: []int64{alice}, AgentTokens: h.Tokens(), AgentDownloads: dl, PublicURL: "http://hub"})
	e.say(alice, "/rent box1 autodl 4090 1.88/h")

	out := e.say(alice, "/agent box1")
	contains(t, out, "install.sh?token=", "no agent binary", bin, "GPULEDGER_AGENT_BINARY", "scripts/agent-build-portable.sh", "Docker image", "503")
	e.say(alice, "/settings lang=zh")
	out = e.say(alice, "/agent box1")
	contains(t, out, "install.sh?token=", "没有可下载的代理程序", bin, "GPULEDGER_AGENT_BINARY", "scripts/agent-build-portable.sh", "Docker")

	if err := os.WriteFile(bin, []byte("\x7fELF agent"), 0o755); err != nil {
		t.Fatal(err)
	}
	out = e.say(alice, "/agent box1")
	contains(t, out, "install.sh?token=")
	if strings.Contains(out, "没有可下载的代理程序") || strings.Contains(out, "GPULEDGER_AGENT_BINARY") {
		t.Errorf("the binary is in place, yet /agent warns:\n%s", out)
	}
}
