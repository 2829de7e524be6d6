package bot_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
)

// TestTeam_Telegram drives the team commands through the real Telegram
// transport and the fake Bot API: /team invite in a private chat gives the
// code and its t.me link; a second person who opens the link (/start
// join-CODE) joins, and the admin hears of it privately; in a group, the
// invite is refused without a code and /team bind makes it the room.
func TestTeam_Telegram(t *testing.T) {
	const group = -600
	c := newChat(t, bot.Config{AllowedUsers: []int64{alice, bob}})
	c.fake.SetUser(alice, "alice", "en")
	c.fake.SetUser(bob, "bob", "en")
	contains(t, c.say(alice, "/team new crew").Text, "Team crew is made")

	g, _ := c.inGroup(alice, group, "/team@"+tgfake.BotUsername+" invite")
	if len(g) != 1 || !strings.Contains(g[0].Text, "privately") || strings.Contains(g[0].Text, "join-") {
		t.Fatalf("the group after /team invite: %+v; want one note without a code", g)
	}

	inv := c.say(alice, "/team invite").Text
	m := regexp.MustCompile(`https://t\.me/` + tgfake.BotUsername + `\?start=join-([a-z0-9]+)`).FindStringSubmatch(inv)
	if m == nil {
		t.Fatalf("/team invite = %q: no link", inv)
	}
	before := len(c.fake.Messages(alice))
	contains(t, c.say(bob, "/start join-"+m[1]).Text, "joined team crew")
	notices := c.fake.Messages(alice)[before:]
	if len(notices) != 1 || !strings.Contains(notices[0].Text, "@bob joined team crew with @alice's invite") {
		t.Fatalf("alice's notices after bob joined: %+v", notices)
	}
	contains(t, c.say(bob, "/start join-"+m[1]).Text, "✗") // the link works once

	g, _ = c.inGroup(alice, group, "/team@"+tgfake.BotUsername+" bind")
	if len(g) != 1 || !strings.Contains(g[0].Text, "room of team crew") {
		t.Fatalf("the group after /team bind: %+v", g)
	}
	tm, err := c.db.TeamByName(c.ctx, "crew")
	if err != nil || tm.Room != group {
		t.Fatalf("crew after /team bind: %+v %v, want room %d", tm, err, group)
	}
}

// TestTeam_TelegramOutsider: with outsiders on, a person outside the
// allow list who opens the invite link through Telegram joins the team,
// and their /status then answers the team's ledger.
func TestTeam_TelegramOutsider(t *testing.T) {
	c := newChat(t, bot.Config{AllowedUsers: []int64{alice}, TeamOutsiders: true})
	c.fake.SetUser(alice, "alice", "en")
	c.fake.SetUser(mallory, "mallory", "en")
	contains(t, c.say(alice, "/team new crew").Text, "Team crew is made")
	contains(t, c.say(alice, "/rent box1 autodl 4090 1.88/h").Text, "box1")
	inv := c.say(alice, "/team invite").Text
	m := regexp.MustCompile(`start=join-([a-z0-9]+)`).FindStringSubmatch(inv)
	if m == nil {
		t.Fatalf("/team invite = %q: no link", inv)
	}
	contains(t, c.say(mallory, "/start join-"+m[1]).Text, "joined team crew", "no ledger of your own")
	st := c.say(mallory, "/status").Text
	if !strings.HasPrefix(st, "👥 crew") || !strings.Contains(st, "box1") {
		t.Fatalf("the outsider's /status = %q, want the team's", st)
	}
}
