package bot

import (
	"errors"
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/chat"
)

// TestTeamSubExamples_Parse checks that each subcommand's example, in
// both languages, is itself a valid /team of that subcommand.
func TestTeamSubExamples_Parse(t *testing.T) {
	for sub, ex := range teamSubExamples {
		for _, in := range ex {
			c, err := command.Parse(in, testNow, shanghai)
			if err != nil {
				t.Errorf("example %q of /team %s: %v", in, sub, err)
				continue
			}
			tc, ok := c.(command.TeamCmd)
			if !ok || tc.Sub != sub {
				t.Errorf("example %q parses to %#v, want /team %s", in, c, sub)
			}
		}
	}
}

// TestTeamParseError_ExampleOfItsSub: a wrong /team SUB is answered with
// an example of that subcommand, in the user's language, not with the
// first team example ("/team new …"), which would lead them astray.
func TestTeamParseError_ExampleOfItsSub(t *testing.T) {
	tests := []struct {
		in     string
		en, zh string
	}{
		{"/team limit rate=1/h", "Example: /team limit @bob rate=10/h", "例如：/team 限额 @bob"},
		{"/team limit @bob rate=abc", "Example: /team limit @bob", "例如：/team 限额 @bob"},
		{"/team role @bob boss", "Example: /team role @bob admin", "例如：/team 角色 @bob 管理员"},
		{"/team join", "Example: /team join k3v9x2mq7p", "例如：/team 加入"},
		{"/team dm maybe", "Example: /team dm on", "例如：/team 私信 开"},
		{"/team new", "Example: /team new gpu-crew", "例如：/team 新建 gpu-crew"},
		{"/team frobnicate", "Example: /help team", "例如：/help team"},
	}
	for _, tt := range tests {
		_, err := command.Parse(tt.in, testNow, shanghai)
		var pe *command.ParseError
		if !errors.As(err, &pe) {
			t.Errorf("Parse(%q) = %v, want a parse error", tt.in, err)
			continue
		}
		if got := ErrorText(err, chat.LangEN); !strings.Contains(got, tt.en) {
			t.Errorf("%q in English: %q, want it to contain %q", tt.in, got, tt.en)
		}
		if got := ErrorText(err, chat.LangZH); !strings.Contains(got, tt.zh) {
			t.Errorf("%q in Chinese: %q, want it to contain %q", tt.in, got, tt.zh)
		}
	}
}
