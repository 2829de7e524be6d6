package bot_test

import (
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
)

// TestConversation_ReusedName drives a reused name through the real
// Telegram transport and the fake Bot API, which parses every message's
// HTML as Telegram does: the notes with addresses are valid in both
// languages, and a correction by address reaches the older rental.
func TestConversation_ReusedName(t *testing.T) {
	c := newChatWith(t, func(cfg *bot.Config, c *convo) {
		*cfg = bot.Config{AllowedUsers: []int64{alice}, TZ: "Asia/Shanghai"}
	})
	shanghai, _ := time.LoadLocation("Asia/Shanghai")
	start := c.clock()
	c.say(alice, "/rent yolo autodl 4090 2/h")
	c.advance(3 * time.Hour)
	c.say(alice, "/release yolo")
	c.advance(21 * time.Hour)
	day := start.In(shanghai).Format("2006-01-02")
	contains(t, c.say(alice, "/rent yolo autodl 4090 3/h").Text, "yolo@"+day)
	c.advance(time.Hour)
	contains(t, c.say(alice, "/price yolo@"+day+" 2.5/h at "+start.In(shanghai).Format("2006-01-02 15:04:05")).Text, "✓", "yolo@"+day)
	contains(t, c.say(alice, "/spend month").Text, "yolo@"+day+" ¥7.50")
	contains(t, c.say(alice, "/price yolo 3.5/h").Text, "✓", "yolo@"+day)
	c.say(alice, "/lang zh")
	contains(t, c.say(alice, "/price yolo 3.5/h at "+start.In(shanghai).Add(time.Hour).Format("2006-01-02 15:04")).Text, "yolo@"+day)
	b := c.book(alice)
	if len(b.Rentals) != 2 || len(b.Rentals[0].Events) != 3 {
		t.Fatalf("rentals = %v", b.Rentals)
	}
}
