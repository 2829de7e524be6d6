package bot_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
	"github.com/gpuledger/gpuledger/ledger"
)

// issuer hands out agent tokens for the group tests and counts them.
type issuer struct {
	mu     sync.Mutex
	issued []string
}

func (i *issuer) IssueBy(_ context.Context, userID, _ int64, rental string) (string, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	tok := fmt.Sprintf("SECRETtoken%d%s%04d", userID, rental, len(i.issued))
	i.issued = append(i.issued, tok)
	return tok, nil
}

func (i *issuer) count() int {
	i.mu.Lock()
	defer i.mu.Unlock()
	return len(i.issued)
}

// inGroup sends text from user in group and returns the new messages of
// the group and of the user's private chat.
func (c *convo) inGroup(user, group int64, text string) (groupMsgs, private []tgfake.Message) {
	c.t.Helper()
	before := len(c.fake.Messages(user))
	groupMsgs = c.send(group, func() int { return c.fake.SendText(user, group, text) })
	return groupMsgs, c.fake.Messages(user)[before:]
}

// noSecrets fails when a group message holds an agent token, an install
// command or an amount of money.
func noSecrets(t *testing.T, what string, msgs []tgfake.Message) {
	t.Helper()
	for _, m := range msgs {
		for _, bad := range []string{"SECRETtoken", "curl", "install.sh", "¥", "$", "1.88", "12.00"} {
			if strings.Contains(m.Text, bad) {
				t.Errorf("%s: the group saw %q: %q", what, bad, m.Text)
			}
		}
		if m.Document != nil || m.Photo != nil {
			t.Errorf("%s: the group got a file: %+v", what, m)
		}
	}
}

// TestConversation_GroupKeepsSecretsPrivate drives the core through the
// real Telegram transport with group updates: the agent token, the
// install line, the status, the export and every amount go to the
// sender's private chat, and the group only hears that they were sent
// there, or that the sender must open a private chat first.
func TestConversation_GroupKeepsSecretsPrivate(t *testing.T) {
	const group = -500
	tokens := &issuer{}
	c := newChat(t, bot.Config{AllowedUsers: []int64{alice, bob}, AgentTokens: tokens, PublicURL: "https://ledger.example"})
	c.fake.SetUser(alice, "alice", "en")
	c.fake.SetUser(bob, "bob", "en")
	contains(t, c.say(alice, "/rent box1 autodl 4090 1.88/h").Text, "box1")
	contains(t, c.say(bob, "/rent gbox runpod 4090 0.4/h").Text, "gbox")
	c.advance(time.Hour)

	t.Run("Agent", func(t *testing.T) {
		g, p := c.inGroup(alice, group, "/agent@"+tgfake.BotUsername+" box1")
		noSecrets(t, "/agent", g)
		if len(g) != 1 || !strings.Contains(g[0].Text, "privately") || !strings.Contains(g[0].Text, "@alice") {
			t.Fatalf("group after /agent: %+v; want one note that it was sent privately", g)
		}
		if len(p) == 0 || !strings.Contains(p[len(p)-1].Text, "SECRETtoken") || !strings.Contains(p[len(p)-1].Text, "https://ledger.example/agent/install.sh?token=") {
			t.Fatalf("private chat after /agent: %+v; want the install command", p)
		}
	})
	t.Run("Status", func(t *testing.T) {
		g, p := c.inGroup(alice, group, "/status")
		noSecrets(t, "/status", g)
		if len(g) != 1 || !strings.Contains(g[0].Text, "privately") {
			t.Fatalf("group after /status: %+v", g)
		}
		if len(p) != 1 || !strings.Contains(p[0].Text, "box1") || !strings.Contains(p[0].Text, "¥") {
			t.Fatalf("private chat after /status: %+v", p)
		}
	})
	t.Run("Export", func(t *testing.T) {
		g, p := c.inGroup(alice, group, "/export")
		noSecrets(t, "/export", g)
		if len(g) != 1 || !strings.Contains(g[0].Text, "privately") {
			t.Fatalf("group after /export: %+v", g)
		}
		if len(p) != 1 || p[0].Document == nil || !strings.Contains(string(p[0].Document.Data), "box1") {
			t.Fatalf("private chat after /export: %+v", p)
		}
	})
	t.Run("ErrorGoesPrivate", func(t *testing.T) {
		g, p := c.inGroup(alice, group, "/why nosuch")
		noSecrets(t, "/why", g)
		if len(g) != 1 || !strings.Contains(g[0].Text, "privately") || len(p) != 1 || !strings.Contains(p[0].Text, "nosuch") {
			t.Fatalf("/why of an unknown rental: group %+v, private %+v", g, p)
		}
	})
	t.Run("WriteNotRun", func(t *testing.T) {
		g, p := c.inGroup(alice, group, "/charge box1 12 disk")
		noSecrets(t, "/charge", g)
		if len(g) != 1 || !strings.Contains(g[0].Text, "private chat") || !strings.Contains(g[0].Text, "nothing was recorded") {
			t.Fatalf("group after /charge: %+v; want a pointer to the private chat", g)
		}
		if len(p) != 0 {
			t.Errorf("private chat after a group /charge: %+v", p)
		}
		if b := c.book(alice); len(b.Charges) != 0 {
			t.Fatalf("a /charge sent in a group was recorded: %+v", b.Charges)
		}
		g, _ = c.inGroup(bob, group, "/stop gbox")
		if len(g) != 1 || c.state(bob, "gbox") != ledger.Running {
			t.Fatalf("/stop in a group: %+v, state %s; want a pointer and no change", g, c.state(bob, "gbox"))
		}
	})
	t.Run("HelpInGroup", func(t *testing.T) {
		g, p := c.inGroup(alice, group, "/help")
		if len(g) != 1 || !strings.Contains(g[0].Text, "/rent") || len(p) != 0 {
			t.Fatalf("/help in a group: group %+v, private %+v", g, p)
		}
	})
	t.Run("PrivateChatClosed", func(t *testing.T) {
		c.fake.ClosePrivate(bob)
		before := tokens.count()
		for _, cmd := range []string{"/agent gbox", "/status"} {
			g, p := c.inGroup(bob, group, cmd)
			noSecrets(t, cmd, g)
			if len(g) != 1 || !strings.Contains(g[0].Text, "open a private chat with me") || !strings.Contains(g[0].Text, "/start") {
				t.Fatalf("%s with bob's private chat closed: group %+v; want the /start hint", cmd, g)
			}
			if len(p) != 0 {
				t.Fatalf("%s: bob's closed chat got %+v", cmd, p)
			}
		}
		if n := tokens.count(); n != before {
			t.Fatalf("%d agent tokens issued that bob could not receive (issuing one revokes the one his agent runs on)", n-before)
		}
		// Once bob writes to the bot privately, the group command works.
		contains(t, c.say(bob, "/start").Text, "/rent")
		g, p := c.inGroup(bob, group, "/agent gbox")
		noSecrets(t, "/agent after /start", g)
		if len(g) != 1 || !strings.Contains(g[0].Text, "privately") || len(p) == 0 || !strings.Contains(p[len(p)-1].Text, "SECRETtoken") {
			t.Fatalf("/agent after bob opened the chat: group %+v, private %+v", g, p)
		}
	})
}
