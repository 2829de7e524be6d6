package bot_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
)

// TestConversation_Dashboard drives /dashboard through the real Telegram
// transport and the fake Bot API: in a private chat the link and the
// web-app button; in a group only a note, the link privately; a closed
// private chat gets the group told to open it first, and the link that
// could not reach it revoked. Neither the core's
// nor the transport's log (at debug level) ever holds a code.
func TestConversation_Dashboard(t *testing.T) {
	const group = -100500
	logs := &strings.Builder{}
	l := &links{app: appURL}
	c := newChatWith(t, func(cfg *bot.Config, c *convo) {
		*cfg = bot.Config{AllowedUsers: []int64{alice, bob}, Dashboard: l, TZ: "Asia/Shanghai",
			Logger: slog.New(slog.NewTextHandler(&syncWriter{b: logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))}
		l.now = c.clock
	})
	c.fake.SetUser(alice, "alice", "en")
	c.fake.SetUser(bob, "bob", "en")

	t.Run("Private", func(t *testing.T) {
		m := c.say(alice, "/dashboard")
		code := l.issued()[len(l.issued())-1]
		contains(t, m.Text, "login?code="+code, "until 10:05", "forward")
		if len(m.Buttons) != 1 || m.Buttons[0][0].WebApp != appURL {
			t.Errorf("buttons = %+v, want the web-app button", m.Buttons)
		}
		if !m.NoPreview {
			t.Error("the link was sent with a preview, which would fetch (and spend) it")
		}
		s := c.say(alice, "/status")
		if len(s.Buttons) != 1 || s.Buttons[0][0].WebApp != appURL {
			t.Errorf("/status buttons = %+v", s.Buttons)
		}
	})
	t.Run("Group", func(t *testing.T) {
		n := len(l.issued())
		g, p := c.inGroup(alice, group, "/dashboard@"+tgfake.BotUsername)
		if len(l.issued()) != n+1 {
			t.Fatalf("links made: %d, want one more", len(l.issued())-n)
		}
		code := l.issued()[n]
		if len(g) != 1 || !strings.Contains(g[0].Text, "privately") || strings.Contains(g[0].Text, code) || g[0].Buttons != nil {
			t.Errorf("group saw %+v, want one note without the link", g)
		}
		if len(p) != 1 || !strings.Contains(p[0].Text, code) {
			t.Errorf("private chat got %+v, want the link", p)
		}
		gs, _ := c.inGroup(alice, group, "/status")
		for _, m := range gs {
			if m.Buttons != nil {
				t.Errorf("the group got buttons: %+v", m)
			}
		}
	})
	t.Run("PrivateClosed", func(t *testing.T) {
		c.fake.ClosePrivate(bob)
		g, p := c.inGroup(bob, group, "/dashboard")
		if len(g) != 1 || !strings.Contains(g[0].Text, "open a private chat") || strings.Contains(g[0].Text, "code=") {
			t.Errorf("group saw %+v, want to be told to open a private chat first", g)
		}
		if len(p) != 0 {
			t.Errorf("bob's closed private chat got %+v", p)
		}
		// The link that went nowhere is revoked.
		issued, revoked := l.issued(), l.revokedLinks()
		if len(revoked) != 1 || !strings.HasSuffix(revoked[0], "code="+issued[len(issued)-1]) {
			t.Errorf("revoked %v, want bob's undelivered link (code %s)", revoked, issued[len(issued)-1])
		}
	})
	t.Run("Stranger", func(t *testing.T) {
		n := len(l.issued())
		m := c.say(mallory, "/dashboard")
		if strings.Contains(m.Text, "http") || len(l.issued()) != n {
			t.Errorf("a stranger got %q", m.Text)
		}
	})
	c.advance(time.Minute)
	if len(l.issued()) == 0 {
		t.Fatal("no link made: the log check proves nothing")
	}
	out := logs.String()
	if !strings.Contains(out, "level=") {
		t.Fatal("nothing was logged: the check proves nothing")
	}
	for _, code := range l.issued() {
		if strings.Contains(out, code) {
			t.Errorf("the log holds the one-time code %s:\n%s", code, out)
		}
	}
}
