package bot_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
)

// TestConversation_UnpricedAndZone: through the real Telegram library and
// the fake Bot API, an UNPRICED volume's reply and /spend carry the
// pricing command as code, which, sent back, prices the volume; a RunPod
// volume's correction names the stopped rate it replaced; a refusal in
// Chinese shows its times in the user's zone, never as UTC stamps.
func TestConversation_UnpricedAndZone(t *testing.T) {
	c := newChat(t, bot.Config{AllowedUsers: []int64{alice, bob}, TZ: "Asia/Shanghai"})
	c.fake.SetUser(bob, "bob", "zh-CN")
	c.say(alice, "/rent v3 vast 4090 0.40/h")
	got := c.say(alice, "/storage vd3 50GB rental=v3").Text
	contains(t, got, "UNPRICED", "<code>/storage vd3 price=0.10/GB/month</code>")
	c.advance(time.Hour)
	spend := c.say(alice, "/spend today").Text
	cmds := offered(spend)
	if len(cmds) != 1 || cmds[0] != "/storage vd3 price=0.10/GB/month" {
		t.Fatalf("/spend offers %q:\n%s", cmds, spend)
	}
	contains(t, c.say(alice, cmds[0]).Text, "✓")
	if b := c.book(alice); len(b.Volumes) != 1 || !b.Volumes[0].Priced {
		t.Fatalf("the offered command did not price vd3: %+v", b.Volumes)
	}

	c.say(alice, "/rent p1 runpod 4090 0.69/h")
	c.say(alice, "/storage pv 100GB rental=p1")
	contains(t, c.say(alice, "/storage pv price=0.12/GB/month").Text, "$0.20/GB/month", "<code>/storage pv price=0.12/GB/month stopped=0.2/GB/month</code>")

	c.say(bob, "/rent yolo autodl 4090 1.88/h")
	c.advance(72 * time.Hour)
	refused := c.say(bob, "/price yolo 2.08/h at 2026-11-01 11:00").Text
	contains(t, refused, "✗", "11月1日 11:00", "11月2日 11:00")
	if m := utcStamp.FindString(refused); m != "" || strings.Contains(refused, "&lt;") {
		t.Errorf("refusal shows %q or escaped markup: %s", m, refused)
	}
}
