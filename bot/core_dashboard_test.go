package bot_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/internal/testkit"
)

// links is a hand-made bot.DashboardLinks: each link holds a fresh code,
// valid for five minutes from the clock it is given.
type links struct {
	mu      sync.Mutex
	app     string
	base    string // the links' address; "" for https://ledger.example
	now     func() time.Time
	codes   []string
	revoked []string // the links given back to Revoke
	err     error
}

func (l *links) Link(_ context.Context, userID int64) (string, time.Time, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return "", time.Time{}, l.err
	}
	code := fmt.Sprintf("ONETIMEcode%d x%02d", userID, len(l.codes))
	code = strings.ReplaceAll(code, " ", "")
	l.codes = append(l.codes, code)
	base := l.base
	if base == "" {
		base = "https://ledger.example"
	}
	return base + "/app/login?code=" + code, l.now().Add(5 * time.Minute), nil
}

func (l *links) AppURL() string { return l.app }

func (l *links) Revoke(_ context.Context, link string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.revoked = append(l.revoked, link)
}

func (l *links) revokedLinks() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.revoked...)
}

func (l *links) issued() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.codes...)
}

// dashEnv is an env whose core has a dashboard and logs at debug level.
func dashEnv(t *testing.T, app string) (*env, *links) {
	t.Helper()
	l := &links{app: app}
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice, bob}, Dashboard: l})
	l.now = func() time.Time { return e.now }
	// Rebuild the core with a debug logger, so that nothing escapes the check.
	core, err := bot.New(context.Background(), bot.Config{Store: e.db, AllowedUsers: []int64{alice, bob}, Dashboard: l, TZ: "Asia/Shanghai",
		Now: func() time.Time { return e.now }, AutoPolicies: e.db, TokenRecords: e.db,
		Logger: slog.New(slog.NewTextHandler(&syncWriter{b: e.logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	e.core = core
	return e, l
}

func webApps(out chat.Outgoing) []string {
	var urls []string
	for _, row := range out.Buttons {
		for _, b := range row {
			if b.WebApp != "" {
				urls = append(urls, b.WebApp)
			}
		}
	}
	return urls
}

const appURL = "https://ledger.example/app/"

func TestCore_Dashboard(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		e, l := dashEnv(t, appURL)
		out := e.handle(e.update(alice, "/dashboard"))
		if len(out) != 1 {
			t.Fatalf("replies = %+v", out)
		}
		m := out[0].Out
		codes := l.issued()
		if len(codes) != 1 {
			t.Fatalf("links made = %v, want 1", codes)
		}
		// 10:00 in Shanghai, valid five minutes: the expiry in local time.
		contains(t, m.Text, "https://ledger.example/app/login?code="+codes[0], "until 10:05", "forward")
		if got := webApps(m); len(got) != 1 || got[0] != appURL {
			t.Errorf("web-app buttons = %v, want one to %s", got, appURL)
		}
		if strings.Contains(e.logs.String(), codes[0]) {
			t.Errorf("the log holds the one-time code: %s", e.logs.String())
		}
	})
	t.Run("Chinese", func(t *testing.T) {
		e, l := dashEnv(t, appURL)
		u := e.update(alice, "/仪表盘")
		u.LangCode = "zh-hans"
		out := e.handle(u)
		if len(out) != 1 {
			t.Fatalf("replies = %+v", out)
		}
		contains(t, out[0].Out.Text, "你的仪表盘", l.issued()[0], "10:05 前有效", "请勿转发")
		if b := out[0].Out.Buttons; len(b) != 1 || b[0][0].Text != "📊 打开仪表盘" {
			t.Errorf("buttons = %+v, want the Chinese label", b)
		}
	})
	t.Run("NoHTTPS", func(t *testing.T) {
		e, l := dashEnv(t, "")
		m := e.say(alice, "/dashboard")
		contains(t, m, l.issued()[0], "until 10:05")
		if out := e.rec.Sent(); len(out[len(out)-1].Buttons) != 0 {
			t.Errorf("buttons without a Mini App URL: %+v", out[len(out)-1].Buttons)
		}
	})
	t.Run("Off", func(t *testing.T) {
		e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
		contains(t, e.say(alice, "/dashboard"), "dashboard is off", "without its hub", "GPULEDGER_PUBLIC_URL")
		u := e.update(alice, "/dashboard")
		u.LangCode = "zh"
		e2 := newEnv(t, bot.Config{AllowedUsers: []int64{bob}})
		u = e2.update(bob, "/dashboard")
		u.LangCode = "zh"
		contains(t, e2.handle(u)[0].Out.Text, "没有开启仪表盘")
	})
	t.Run("ExtraWords", func(t *testing.T) {
		e, l := dashEnv(t, appURL)
		contains(t, e.say(alice, "/dashboard please now"), "✗", "please", "/dashboard")
		if n := len(l.issued()); n != 0 {
			t.Errorf("%d links made for a bad command", n)
		}
	})
	t.Run("Stranger", func(t *testing.T) {
		e, l := dashEnv(t, appURL)
		got := e.say(mallory, "/dashboard")
		contains(t, got, "private bot")
		if strings.Contains(got, "http") || len(l.issued()) != 0 {
			t.Errorf("a stranger got %q, links made %v", got, l.issued())
		}
	})
	t.Run("LinkFails", func(t *testing.T) {
		e, l := dashEnv(t, appURL)
		l.err = errors.New("dashboard: too many live codes")
		got := e.say(alice, "/dashboard")
		if strings.Contains(got, "http") {
			t.Errorf("a failed link answered %q", got)
		}
		contains(t, got, "✗")
	})
	t.Run("Redelivered", func(t *testing.T) {
		e, l := dashEnv(t, appURL)
		u := e.update(alice, "/dashboard")
		e.handle(u)
		if out := e.handle(u); len(out) != 0 || len(l.issued()) != 1 {
			t.Errorf("a second delivery answered %+v, links %d; want nothing", out, len(l.issued()))
		}
		u.Redelivered = true
		if out := e.handle(u); len(out) != 1 || len(l.issued()) != 2 {
			t.Errorf("a redelivery whose answer may be lost answered %+v, links %d; want a new link", out, len(l.issued()))
		}
	})
}

func TestCore_DashboardRate(t *testing.T) {
	e, l := dashEnv(t, appURL)
	for i := range bot.DashboardLinksPerWindow {
		e.now = t0.Add(time.Duration(i) * time.Minute)
		contains(t, e.say(alice, "/dashboard"), "login?code=")
	}
	e.now = t0.Add(7 * time.Minute)
	got := e.say(alice, "/dashboard")
	contains(t, got, "✗", "5 dashboard links", "10m", "try again at 10:10", "in 3m")
	if strings.Contains(got, "code=") || len(l.issued()) != bot.DashboardLinksPerWindow {
		t.Fatalf("refusal %q; links made %d", got, len(l.issued()))
	}
	// Another user has a window of their own.
	contains(t, e.say(bob, "/dashboard"), "login?code=")
	// Once the first link of the window is ten minutes old, one more.
	e.now = t0.Add(10 * time.Minute)
	contains(t, e.say(alice, "/dashboard"), "login?code=")
	contains(t, e.say(alice, "/dashboard"), "try again at 10:11")
}

// TestCore_DashboardButtons checks the "Open dashboard" row under the
// replies that show money, beside the buttons already there, and that it
// is left out without a Mini App URL.
func TestCore_DashboardButtons(t *testing.T) {
	e, _ := dashEnv(t, appURL)
	e.say(alice, "/rent box1 autodl 4090 1.88/h")
	e.now = t0.Add(time.Hour)
	for _, cmd := range []string{"/status", "/spend", "/spend today", "/spend yesterday", "/spend week", "/spend month", "/spend last-month", "/spend 2026-10", "/summary"} {
		out := e.handle(e.update(alice, cmd))
		if len(out) == 0 {
			t.Fatalf("%s: no reply", cmd)
		}
		if got := webApps(out[0].Out); len(got) != 1 || got[0] != appURL {
			t.Errorf("%s: web-app buttons %v, want one to %s", cmd, got, appURL)
		}
	}
	// Replies without money get none.
	for _, cmd := range []string{"/help", "/settings"} {
		for _, s := range e.handle(e.update(alice, cmd)) {
			if got := webApps(s.Out); len(got) != 0 {
				t.Errorf("%s: web-app buttons %v", cmd, got)
			}
		}
	}

	// A multi-line message's replies are merged into one answer, which
	// has no buttons.
	out := e.handle(e.update(alice, "/status\n/spend"))
	if len(out) != 1 || len(out[0].Out.Buttons) != 0 || !strings.Contains(out[0].Out.Text, "box1") {
		t.Errorf("multi-line answer = %+v, want one merged answer without buttons", out)
	}

	off, _ := dashEnv(t, "")
	off.say(alice, "/rent box1 autodl 4090 1.88/h")
	for _, cmd := range []string{"/status", "/spend", "/summary"} {
		for _, s := range off.handle(off.update(alice, cmd)) {
			if len(s.Out.Buttons) != 0 {
				t.Errorf("%s without a Mini App URL: buttons %+v", cmd, s.Out.Buttons)
			}
		}
	}
}

// TestCore_DashboardInGroup: the group hears only that the link was sent
// privately; the link and its button land in the private chat.
func TestCore_DashboardInGroup(t *testing.T) {
	const group = -500
	e, l := dashEnv(t, appURL)
	u := e.update(alice, "/dashboard")
	u.ChatID, u.ChatType, u.Username = group, chat.ChatGroup, "alice"
	out := e.handle(u)
	var inGroup, private []chat.Outgoing
	for _, s := range out {
		if s.Out.ChatID == group {
			inGroup = append(inGroup, s.Out)
		} else if s.Out.ChatID == alice {
			private = append(private, s.Out)
		}
	}
	if len(l.issued()) != 1 {
		t.Fatalf("links made %v", l.issued())
	}
	if len(inGroup) != 1 || !strings.Contains(inGroup[0].Text, "privately") || strings.Contains(inGroup[0].Text, "code=") || len(inGroup[0].Buttons) != 0 {
		t.Errorf("group got %+v, want one note that it was sent privately", inGroup)
	}
	if len(private) != 1 || !strings.Contains(private[0].Text, l.issued()[0]) {
		t.Errorf("private chat got %+v, want the link", private)
	}

	t.Run("StatusButtonGoesPrivate", func(t *testing.T) {
		u := e.update(alice, "/status")
		u.ChatID, u.ChatType = group, chat.ChatSupergroup
		for _, s := range e.handle(u) {
			if s.Out.ChatID == group && len(s.Out.Buttons) != 0 {
				t.Errorf("the group got buttons: %+v", s.Out)
			}
		}
	})

	t.Run("PrivateChatClosed", func(t *testing.T) {
		// More tries than the links a user may have in a window: a link
		// that went nowhere is revoked and does not count against them.
		for i := range bot.DashboardLinksPerWindow + 2 {
			rec := &closedPrivate{}
			u := e.update(alice, "/dashboard")
			u.ChatID, u.ChatType = group, chat.ChatGroup
			if err := e.core.Handle(context.Background(), u, rec); err != nil {
				t.Fatal(err)
			}
			sent := rec.Sent()
			if len(sent) != 1 || sent[0].ChatID != group || !strings.Contains(sent[0].Text, "open a private chat") || strings.Contains(sent[0].Text, "code=") {
				t.Fatalf("try %d: sent %+v, want one group note to open a private chat first", i+1, sent)
			}
			issued, revoked := l.issued(), l.revokedLinks()
			if len(revoked) != i+1 || !strings.HasSuffix(revoked[i], "code="+issued[len(issued)-1]) {
				t.Fatalf("try %d: revoked %v, want the link just made (%s)", i+1, revoked, issued[len(issued)-1])
			}
		}
		// Once the chat is open, the link comes: the tries cost nothing.
		out := e.handle(e.update(alice, "/dashboard"))
		if len(out) != 1 || !strings.Contains(out[0].Out.Text, l.issued()[len(l.issued())-1]) {
			t.Errorf("after the closed tries, /dashboard answered %+v, want a link", out)
		}
	})
}

// closedPrivate is a sender whose private chats are closed to the bot.
type closedPrivate struct{ testkit.Sender }

func (s *closedPrivate) Send(ctx context.Context, m chat.Outgoing) (int, error) {
	if m.ChatID > 0 {
		return 0, fmt.Errorf("telegram: 403: %w", chat.ErrNoPrivateChat)
	}
	return s.Sender.Send(ctx, m)
}
