package bot_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
)

// TestConversation_Records lists, corrects, deletes and restores records
// through the real Telegram library against the fake Bot API, in English
// and in Chinese; another user reaches none of them.
func TestConversation_Records(t *testing.T) {
	c := newChat(t, bot.Config{AllowedUsers: []int64{alice, bob}, TZ: "Asia/Shanghai"})
	c.fake.SetUser(bob, "bob", "zh-CN")
	c.say(alice, "/rent box1 autodl 4090 1.88/h")
	c.advance(time.Hour)
	c.say(alice, "/charge box1 5 image fee")
	c.say(alice, "/topup autodl 100")
	list := c.say(alice, "/records").Text
	contains(t, list, "charge", "image fee", "¥5.00", "top-up", "¥100.00", "/fix #N")
	charge, topup := refOf(t, list, "image fee"), refOf(t, list, "¥100.00")

	fixed := c.say(alice, "/fix "+charge+" 7 image fee v2").Text
	contains(t, fixed, "✓ Corrected", charge, "¥7.00", "image fee v2", "was:", "¥5.00", "<b>box1</b>")
	deleted := c.say(alice, "/delete "+topup).Text
	contains(t, deleted, "✓ Deleted", topup, "¥100.00", "/undo", "<b>autodl</b>")
	if strings.Contains(fixed+deleted, "&lt;") {
		t.Errorf("a reply shows its own markup as text: %q, %q", fixed, deleted)
	}
	if b := c.book(alice); len(b.TopUps) != 0 || len(b.Charges) != 1 || b.Charges[0].Amount.String() != "7" {
		t.Fatalf("after /fix and /delete: top-ups %+v, charges %+v", b.TopUps, b.Charges)
	}
	contains(t, c.say(alice, "/undo").Text, "undone", "top-up deletion", topup)
	if b := c.book(alice); len(b.TopUps) != 1 {
		t.Fatalf("/undo did not bring the top-up back: %+v", b.TopUps)
	}

	// Bob writes Chinese, and alice's numbers are not his.
	contains(t, c.say(bob, "/records").Text, "还没有记录")
	contains(t, c.say(bob, "/删除 "+charge).Text, "✗", "没有记录 "+charge)
	contains(t, c.say(bob, "/修改 "+topup+" 1").Text, "✗", "没有记录 "+topup)
	if b := c.book(alice); len(b.TopUps) != 1 || len(b.Charges) != 1 || b.Charges[0].Amount.String() != "7" {
		t.Fatalf("bob changed alice's records: top-ups %+v, charges %+v", b.TopUps, b.Charges)
	}
	if strings.Contains(c.say(bob, "/undo").Text, charge) {
		t.Fatal("bob's /undo named alice's record")
	}
}
