package bot_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// refOf returns the "#N" reference that /records shows on the line that
// contains what, or fails.
func refOf(t *testing.T, records, what string) string {
	t.Helper()
	ref := regexp.MustCompile(`#\d+`)
	for _, line := range strings.Split(records, "\n") {
		if strings.Contains(line, what) {
			if m := ref.FindString(line); m != "" {
				return m
			}
		}
	}
	t.Fatalf("no reference on a line with %q in %q", what, records)
	return ""
}

// moneyRecords is the user's charges, top-ups, balance readings and
// traffic records, as the store has them, for comparing before and after.
func moneyRecords(t *testing.T, e *env, user int64) string {
	t.Helper()
	b := e.book(user)
	var s strings.Builder
	for _, c := range b.Charges {
		s.WriteString("charge " + c.Platform + " " + c.Amount.String() + " " + string(c.Currency) + " " + c.Note + " " + c.At.String() + "\n")
	}
	for _, x := range b.TopUps {
		s.WriteString("topup " + x.Platform + " " + x.Amount.String() + " " + x.At.String() + "\n")
	}
	for _, x := range b.Balances {
		s.WriteString("balance " + x.Platform + " " + x.Amount.String() + " " + x.At.String() + "\n")
	}
	for _, r := range b.Rentals {
		for _, u := range r.TrafficUsage {
			s.WriteString("traffic " + r.Name + " " + string(u.Direction) + " " + u.At.String() + " " + itoa(u.Bytes) + "\n")
		}
	}
	return s.String()
}

// seedRecords records one of each kind for user at t0+1h.
func seedRecords(t *testing.T, e *env, user int64) {
	t.Helper()
	e.say(user, "/rent box1 autodl 4090 1.88/h")
	e.now = t0.Add(time.Hour)
	contains(t, e.say(user, "/charge box1 5 image fee"), "¥5.00")
	contains(t, e.say(user, "/topup autodl 100"), "¥100.00")
	contains(t, e.say(user, "/balance autodl 80"), "¥80.00")
	contains(t, e.say(user, "/traffic box1 12GB out"), "12GB")
}

func TestCore_RecordsDeleteAndUndo(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	seedRecords(t, e, alice)
	e.now = t0.Add(2 * time.Hour)
	list := e.say(alice, "/records")
	contains(t, list, "image fee", "¥5.00", "top-up", "¥100.00", "balance", "¥80.00", "traffic", "12GB", "box1", "11:00")
	for _, what := range []string{"image fee", "¥100.00", "¥80.00", "12GB"} {
		ref := refOf(t, list, what)
		before := moneyRecords(t, e, alice)
		got := e.say(alice, "/delete "+ref)
		contains(t, got, "✓", ref, "/undo")
		after := moneyRecords(t, e, alice)
		if after == before {
			t.Fatalf("/delete %s (%s) changed nothing: %s", ref, what, got)
		}
		if strings.Contains(e.say(alice, "/records"), ref+" ") {
			t.Errorf("/records still lists %s after its deletion", ref)
		}
		contains(t, e.say(alice, "/undo"), "undone", ref)
		if again := moneyRecords(t, e, alice); again != before {
			t.Fatalf("/undo of /delete %s: records\n%s\nwant\n%s", ref, again, before)
		}
		if l := e.say(alice, "/records"); refOf(t, l, what) != ref {
			t.Errorf("after /undo %s is listed as %s", what, refOf(t, l, what))
		}
	}

	// Totals follow at once: the charge gone is gone from /spend and the export.
	ref := refOf(t, list, "image fee")
	contains(t, e.say(alice, "/spend today"), "other ¥5.00")
	e.say(alice, "/delete "+ref)
	if got := e.say(alice, "/spend today"); strings.Contains(got, "other ¥5.00") {
		t.Errorf("/spend after deleting the charge: %q", got)
	}
	for _, format := range []string{"/export", "/export json"} {
		out := e.handle(e.update(alice, format))
		if len(out) != 1 || out[0].Out.Document == nil {
			t.Fatalf("%s: %+v", format, out)
		}
		if data := string(out[0].Out.Document.Data); strings.Contains(data, "image fee") {
			t.Errorf("%s after the charge's deletion still has it:\n%s", format, data)
		}
	}
}

func TestCore_RecordsFix(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	seedRecords(t, e, alice)
	e.now = t0.Add(2 * time.Hour)
	list := e.say(alice, "/records")

	charge := refOf(t, list, "image fee")
	got := e.say(alice, "/fix "+charge+" 6.50 image fee v2 at 10:30")
	contains(t, got, "✓", charge, "¥6.50", "image fee v2", "10:30", "¥5.00", "/undo")
	c := e.book(alice).Charges[0]
	if c.Amount.String() != "6.5" || c.Note != "image fee v2" || !c.At.Equal(t0.Add(30*time.Minute)) {
		t.Fatalf("charge after /fix = %+v", c)
	}
	contains(t, e.say(alice, "/undo"), "undone", charge)
	if c := e.book(alice).Charges[0]; c.Amount.String() != "5" || c.Note != "image fee" || !c.At.Equal(t0.Add(time.Hour)) {
		t.Fatalf("charge after /undo = %+v", c)
	}

	topup := refOf(t, list, "¥100.00")
	contains(t, e.say(alice, "/fix "+topup+" amount=120"), "✓", "¥120.00")
	if x := e.book(alice).TopUps[0]; x.Amount.String() != "120" {
		t.Fatalf("top-up after /fix = %+v", x)
	}
	bal := refOf(t, list, "¥80.00")
	contains(t, e.say(alice, "/fix "+bal+" 75.5"), "✓", "¥75.50")
	traffic := refOf(t, list, "12GB")
	contains(t, e.say(alice, "/fix "+traffic+" 20GB in"), "✓", "20GB", "in")
	u := e.book(alice).Rentals[0].TrafficUsage[0]
	if u.Bytes != 20<<30 || u.Direction != ledger.In {
		t.Fatalf("traffic after /fix = %+v", u)
	}
	contains(t, e.say(alice, "/spend today"), "other ¥5.00")
}

func TestCore_RecordsBadInputChangesNothing(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice, bob}})
	seedRecords(t, e, alice)
	e.now = t0.Add(2 * time.Hour)
	list := e.say(alice, "/records")
	charge, topup, traffic := refOf(t, list, "image fee"), refOf(t, list, "¥100.00"), refOf(t, list, "12GB")
	acts, err := e.db.Actions(context.Background(), alice, 50)
	if err != nil {
		t.Fatal(err)
	}
	rent := ""
	for _, a := range acts {
		if a.Kind == string(ledger.ActionRent) {
			rent = "#" + itoa(a.ID)
		}
	}
	before := moneyRecords(t, e, alice)
	for _, tc := range []struct {
		user     int64
		in, want string
	}{
		{alice, "/delete #999999", "no record #999999"},
		{alice, "/delete " + rent, "no record " + rent},
		{alice, "/delete", "/delete #12"},
		{alice, "/delete " + charge + " " + topup, "✗"},
		{alice, "/fix " + charge, "nothing to change"},
		{alice, "/fix " + topup + " amount=-5", "positive"},
		{alice, "/fix " + charge + " 0", "✗"},
		{alice, "/fix " + topup + " note=oops", "note"},
		{alice, "/fix " + charge + " 12GB", "✗"},
		{alice, "/fix " + charge + " $7", "CNY"},
		{alice, "/fix " + traffic + " at 09:00", "before box1 started"},
		{alice, "/fix " + charge + " at 09:00", "before box1 started"},
		{alice, "/fix #999999 amount=3", "no record #999999"},
		// Another user's record is not there at all, by its number or any other way.
		{bob, "/delete " + charge, "no record " + charge},
		{bob, "/fix " + topup + " amount=1", "no record " + topup},
		{bob, "/records", "No records"},
	} {
		got := e.say(tc.user, tc.in)
		contains(t, got, tc.want)
		if tc.in != "/records" && !strings.Contains(got, "✗") {
			t.Errorf("%q: not a refusal: %q", tc.in, got)
		}
		if after := moneyRecords(t, e, alice); after != before {
			t.Fatalf("%q changed the records:\n%s\nwas\n%s", tc.in, after, before)
		}
	}
	if strings.Contains(e.say(bob, "/undo"), charge) {
		t.Fatal("bob's /undo touched alice's record")
	}
}

func TestCore_RecordsChinese(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	contains(t, e.say(alice, "/lang zh"), "lang=zh")
	e.say(alice, "/rent box1 autodl 4090 1.88元/小时")
	e.now = t0.Add(time.Hour)
	e.say(alice, "/charge box1 5元 镜像费")
	e.say(alice, "/topup autodl 100元")
	list := e.say(alice, "/记录 autodl")
	contains(t, list, "充值", "¥100.00", "费用", "镜像费", "11:00")
	topup := refOf(t, list, "充值")
	contains(t, e.say(alice, "/修改 "+topup+" 金额=120"), "✓", "已更正", "¥120.00", "原为", "¥100.00")
	contains(t, e.say(alice, "/删除 #999999"), "✗", "没有记录 #999999")
	contains(t, e.say(alice, "/删除 "+topup), "✓", "已删除", topup, "/undo")
	contains(t, e.say(alice, "/undo"), "已撤销", topup)
	contains(t, e.say(alice, "/records box1"), "镜像费")
	if got := e.say(alice, "/records box1"); strings.Contains(got, "充值") {
		t.Errorf("/records box1 lists the platform's top-up: %q", got)
	}
}

// TestCore_RecordReplyGivesItsNumber: the reply to /charge, /topup and
// /balance gives the number that /fix and /delete take, in both languages.
func TestCore_RecordReplyGivesItsNumber(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/rent box1 autodl 4090 1.88/h")
	e.now = t0.Add(time.Hour)
	replies := map[string]string{
		"image fee": e.say(alice, "/charge box1 5 image fee"),
		"¥100.00":   e.say(alice, "/topup autodl 100"),
		"¥80.00":    e.say(alice, "/balance autodl 80"),
		"12GB":      e.say(alice, "/traffic box1 12GB out"),
	}
	list := e.say(alice, "/records")
	for what, reply := range replies {
		ref := refOf(t, list, what)
		contains(t, reply, ref, "/fix "+ref, "/delete "+ref)
	}
	contains(t, e.say(alice, "/lang zh"), "lang=zh")
	got := e.say(alice, "/topup autodl 50")
	ref := refOf(t, e.say(alice, "/records"), "¥50.00")
	contains(t, got, "/fix "+ref, "更正")
}

// TestCore_RecordsInGroup: in a group, /records is answered privately
// (its lines carry money) and /delete and /fix are not run: the group is
// told to send them privately.
func TestCore_RecordsInGroup(t *testing.T) {
	const group = -500
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	seedRecords(t, e, alice)
	ref := refOf(t, e.say(alice, "/records"), "¥100.00")
	before := moneyRecords(t, e, alice)
	inGroup := func(text string) (groupTexts, private []string) {
		u := e.update(alice, text)
		u.ChatID, u.ChatType, u.Username = group, chat.ChatGroup, "alice"
		for _, s := range e.handle(u) {
			switch s.Out.ChatID {
			case group:
				groupTexts = append(groupTexts, s.Out.Text)
			case alice:
				private = append(private, s.Out.Text)
			}
		}
		return groupTexts, private
	}
	g, p := inGroup("/records")
	if len(g) != 1 || strings.Contains(g[0], "¥") || len(p) != 1 || !strings.Contains(p[0], ref) {
		t.Errorf("/records in a group: group %q, private %q", g, p)
	}
	for _, cmd := range []string{"/delete " + ref, "/fix " + ref + " 5"} {
		g, p := inGroup(cmd)
		if len(g) != 1 || !strings.Contains(g[0], "private chat") || len(p) != 0 {
			t.Errorf("%s in a group: group %q, private %q", cmd, g, p)
		}
	}
	if after := moneyRecords(t, e, alice); after != before {
		t.Fatalf("a group's command changed the records:\n%s\nwas\n%s", after, before)
	}
}

// TestCore_RecordsWords: a Chinese list names a platform as the other
// Chinese replies do (恒源云, not gpushare), and a traffic size of zero is
// refused as the input it is, before any record is looked up.
func TestCore_RecordsWords(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	contains(t, e.say(alice, "/lang zh"), "lang=zh")
	e.say(alice, "/topup gpushare 100元")
	contains(t, e.say(alice, "/records"), "充值 <b>恒源云</b> ¥100.00")
	e.say(alice, "/rent box1 autodl 4090 1.88元/小时")
	e.say(alice, "/traffic box1 12GB")
	ref := refOf(t, e.say(alice, "/records"), "12GB")
	got := e.say(alice, "/fix "+ref+" 0GB")
	contains(t, got, "✗", "0GB")
	if strings.Contains(got, "/traffic") {
		t.Errorf("/fix %s 0GB: %q", ref, got)
	}
}
