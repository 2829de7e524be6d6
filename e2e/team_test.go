package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// The three people of TestTeam, all in the server's allow list, and the
// group that becomes the team's room.
const (
	alice     = 5001
	bob       = 5002
	carol     = 5003
	teamGroup = -7007
)

var teamNames = map[int64]string{alice: "alice", bob: "bob", carol: "carol"}

// noonZone returns a fixed zone in which it is about noon now, so that
// everything the test does falls on one local day and the nightly
// summary's day holds the whole ledger.
func noonZone(now time.Time) string {
	off := 12 - now.UTC().Hour()
	switch {
	case off > 14:
		off -= 24
	case off < -12:
		off += 24
	}
	switch {
	case off > 0:
		return fmt.Sprintf("Etc/GMT-%d", off) // the sign is POSIX's: GMT-5 is UTC+5
	case off < 0:
		return fmt.Sprintf("Etc/GMT+%d", -off)
	}
	return "UTC"
}

// teamWorld is the world of TestTeam: the real server with three allowed
// people, each with a private chat, and one group.
type teamWorld struct {
	*world
	zone *time.Location
}

func newTeamWorld(t *testing.T) *teamWorld {
	zone := noonZone(time.Now())
	loc, err := time.LoadLocation(zone)
	if err != nil {
		t.Skipf("the zone %s is not in this machine's tz database (%v): the test needs one where it is noon now", zone, err)
	}
	w := startWorldEnv(t, []string{fmt.Sprintf("GPULEDGER_ALLOWED_USERS=%d,%d,%d", alice, bob, carol)},
		func(ctx context.Context, w *world, db *sqlite.DB) {
			for id := range teamNames {
				if _, err := db.EnsureUser(ctx, ledger.User{ID: id, Lang: "en", TZ: zone, Settings: fastSettings()}); err != nil {
					t.Fatal(err)
				}
			}
		})
	for id, name := range teamNames {
		w.fake.SetUser(id, name, "en")
	}
	return &teamWorld{world: w, zone: loc}
}

// say sends text from user in chat and returns how many messages the chat
// held before, for waitIn.
func (w *teamWorld) say(user, chatID int64, text string) int {
	n := len(w.fake.Messages(chatID))
	w.fake.SendText(user, chatID, text)
	return n
}

// waitIn waits for a message in chatID, after its first `after` (or edited
// since), whose plain text holds every fragment (ignoring case).
func (w *teamWorld) waitIn(t *testing.T, chatID int64, after int, timeout time.Duration, frags ...string) tgfake.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var got tgfake.Message
	err := w.fake.WaitFor(ctx, func() bool {
		for i, m := range w.fake.Messages(chatID) {
			m.Text = plainText(m.Text)
			if (i >= after || len(m.History) > 0) && hasAll(m.Text, frags...) {
				got = m
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("no message in chat %d with %q within %s; the chat:\n%s", chatID, frags, timeout, w.chatText(chatID))
	}
	return got
}

// chatText is a chat's transcript for failure reports.
func (w *teamWorld) chatText(chatID int64) string {
	var texts []string
	for _, m := range w.fake.Messages(chatID) {
		var bs []string
		for _, row := range m.Buttons {
			for _, b := range row {
				bs = append(bs, "["+b.Text+"]")
			}
		}
		texts = append(texts, fmt.Sprintf("#%d %s %s", m.ID, plainText(m.Text), strings.Join(bs, " ")))
	}
	return strings.Join(texts, "\n---\n")
}

// pressIn presses, as user, the button of m (in chatID) whose text starts
// with prefix, and returns the press's callback ID.
func (w *teamWorld) pressIn(t *testing.T, user, chatID int64, m tgfake.Message, prefix string) string {
	t.Helper()
	text, data := buttonPrefix(m, prefix)
	if data == "" {
		t.Fatalf("no button %q on message %d %q; buttons %+v", prefix, m.ID, m.Text, m.Buttons)
	}
	t.Logf("%s presses [%s] on message %d in chat %d", teamNames[user], text, m.ID, chatID)
	return fmt.Sprintf("cb%d", w.fake.PressButton(user, chatID, m.ID, data))
}

// toast waits for the answer to the press cb and returns its text.
func (w *teamWorld) toast(t *testing.T, cb string, timeout time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var text string
	err := w.fake.WaitFor(ctx, func() bool {
		for _, a := range w.fake.Answers() {
			if a.CallbackID == cb {
				text = a.Text
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("the press %s was not answered within %s", cb, timeout)
	}
	return text
}

var (
	joinCodeRE = regexp.MustCompile(`/team join ([A-Za-z0-9_-]+)`)
	joinLinkRE = regexp.MustCompile(`https://t\.me/` + tgfake.BotUsername + `\?start=join-([A-Za-z0-9_-]+)`)
)

// invite has alice make a one-time code privately and returns it, and
// the deep link's code ("" when the answer has no link).
func (w *teamWorld) invite(t *testing.T) (code, link string) {
	t.Helper()
	n := w.say(alice, alice, "/team invite")
	m := w.waitIn(t, alice, n, 20*time.Second, "/team join ")
	c := joinCodeRE.FindStringSubmatch(m.Text)
	if c == nil {
		t.Fatalf("no code in the answer to /team invite: %q", m.Text)
	}
	if l := joinLinkRE.FindStringSubmatch(m.Text); l != nil {
		link = l[1]
	}
	return c[1], link
}

// teamExport runs gpuledger export --format json --team lab.
func (w *teamWorld) teamExport(t *testing.T) map[string]any {
	t.Helper()
	cmd := exec.Command(w.server, "export", "--format", "json", "--team", "lab")
	cmd.Env = append(os.Environ(), "GPULEDGER_DB="+w.db)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("export --team lab: %v %s", err, stderr)
	}
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("export output: %v\n%s", err, out)
	}
	return v
}

// splitOf adds up an export's CNY money by owner and by project (every
// rental's total, volume's charge and one-off's charge), the figures the
// summary splits.
func splitOf(t *testing.T, exp map[string]any) (byOwner map[int64]*big.Rat, byProject map[string]*big.Rat, total *big.Rat) {
	t.Helper()
	byOwner, byProject, total = map[int64]*big.Rat{}, map[string]*big.Rat{}, new(big.Rat)
	add := func(rec map[string]any, amount any) {
		if rec["currency"] != nil && rec["currency"] != "CNY" {
			return
		}
		v, ok := new(big.Rat).SetString(fmt.Sprint(amount))
		if !ok {
			t.Fatalf("an amount of the export is not a number: %v in %v", amount, rec)
		}
		owner := int64(0)
		if o, ok := rec["owner"].(float64); ok {
			owner = int64(o)
		}
		project, _ := rec["project"].(string)
		if byOwner[owner] == nil {
			byOwner[owner] = new(big.Rat)
		}
		if byProject[project] == nil {
			byProject[project] = new(big.Rat)
		}
		byOwner[owner].Add(byOwner[owner], v)
		byProject[project].Add(byProject[project], v)
		total.Add(total, v)
	}
	list := func(key string) []map[string]any {
		var out []map[string]any
		xs, _ := exp[key].([]any)
		for _, x := range xs {
			if m, ok := x.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	for _, r := range list("rentals") {
		ch, _ := r["charges"].(map[string]any)
		// A rental's storage is its attached volumes' and its other its
		// one-offs', counted below with their own owner and project.
		for _, k := range []string{"compute", "traffic"} {
			add(r, ch[k])
		}
	}
	for _, v := range list("volumes") {
		add(v, v["charge"])
	}
	for _, c := range list("one_offs") {
		add(c, c["charge"])
	}
	tot, _ := exp["totals"].(map[string]any)
	cny, _ := tot["CNY"].(map[string]any)
	want, ok := new(big.Rat).SetString(fmt.Sprint(cny["total"]))
	if !ok || want.Cmp(total) != 0 {
		t.Errorf("the export's lines add up to ¥%s, its CNY total says %v", total.FloatString(2), cny["total"])
	}
	return byOwner, byProject, total
}

// TestTeam runs the real server against the fake Bot API with three
// people and one group: alice makes team lab and invites bob and carol
// (one-time links; a replayed one is refused), makes carol an admin,
// binds the group as the room and limits bob to ¥2/h. bob's rental at
// ¥3/h (project yolo-v9, his default) goes over it: the approval card
// goes privately to both admins with [Approve] [Stop it] and bob is told;
// carol approves, and alice's later [Stop it] is told carol decided.
// carol's rental (project=llm-sft) has an idle agent: the idle card lands
// in the group naming @carol; bob's [Release now] is refused and alice's
// releases it through the agent's signed order. The nightly summary in
// the group splits the day by person and by project, with the export's
// figures.
func TestTeam(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the server and an agent for about two minutes; run without -short")
	}
	w := newTeamWorld(t)

	// The team, its members and roles.
	n := w.say(alice, alice, "/team new lab")
	w.waitIn(t, alice, n, 20*time.Second, "lab")
	bobCode, link := w.invite(t)
	t.Run("invite link", func(t *testing.T) {
		if link != bobCode {
			t.Errorf("the answer to /team invite has no deep link https://t.me/%s?start=join-%s (its link's code: %q)", tgfake.BotUsername, bobCode, link)
		}
	})
	// bob opens the link: Telegram sends /start with its payload.
	n = w.say(bob, bob, "/start join-"+bobCode)
	w.waitIn(t, bob, n, 20*time.Second, "lab")
	t.Run("replayed code", func(t *testing.T) {
		n := w.say(carol, carol, "/team join "+bobCode)
		m := w.waitIn(t, carol, n, 20*time.Second, "✗")
		if !hasAll(m.Text, "used") {
			t.Errorf("a replayed code: %q; want a refusal saying it was used", m.Text)
		}
	})
	carolCode, _ := w.invite(t)
	n = w.say(carol, carol, "/team join "+carolCode)
	w.waitIn(t, carol, n, 20*time.Second, "lab")
	// Joining switched their commands to the team.
	for _, id := range []int64{bob, carol} {
		n := w.say(id, id, "/use")
		w.waitIn(t, id, n, 20*time.Second, "lab")
	}
	n = w.say(alice, alice, "/team role @carol admin")
	w.waitIn(t, alice, n, 20*time.Second, "@carol", "admin")
	n = w.say(alice, teamGroup, "/team bind")
	w.waitIn(t, teamGroup, n, 20*time.Second, "lab")
	// A team's ledger starts with the default settings; its idle warning
	// at the shortest the chat allows.
	n = w.say(alice, alice, "/settings idle_warn=1m")
	w.waitIn(t, alice, n, 20*time.Second, "1m")
	n = w.say(alice, alice, "/team")
	list := w.waitIn(t, alice, n, 20*time.Second, "@alice", "@bob", "@carol")
	if !strings.HasPrefix(plainText(list.Text), "👥 lab · ") {
		t.Errorf("/team on the team does not begin with its tag: %q", list.Text)
	}

	// Projects and a limit.
	n = w.say(bob, bob, "/project yolo-v9")
	w.waitIn(t, bob, n, 20*time.Second, "yolo-v9")
	n = w.say(alice, alice, "/team limit @bob rate=2/h")
	w.waitIn(t, alice, n, 20*time.Second, "@bob", "2")

	t.Run("over the limit", func(t *testing.T) {
		na, nc, nb := len(w.fake.Messages(alice)), len(w.fake.Messages(carol)), len(w.fake.Messages(bob))
		w.fake.SendText(bob, bob, "/rent box5 autodl A100 3/h at -1h")
		reply := w.waitIn(t, bob, nb, 20*time.Second, "box5")
		if !strings.HasPrefix(reply.Text, "👥 lab · ") {
			t.Errorf("bob's /rent on the team does not say where it wrote: %q", reply.Text)
		}
		cardA := w.waitIn(t, alice, na, 30*time.Second, "@bob", "box5", "limit")
		cardC := w.waitIn(t, carol, nc, 30*time.Second, "@bob", "box5", "limit")
		for _, c := range []tgfake.Message{cardA, cardC} {
			for _, b := range []string{"Approve", "Stop it"} {
				if _, d := buttonPrefix(c, b); d == "" {
					t.Errorf("the approval card %q has no [%s]", c.Text, b)
				}
			}
		}
		told := w.waitIn(t, bob, nb, 30*time.Second, "box5", "limit")
		if _, d := buttonPrefix(told, "Approve"); d != "" {
			t.Errorf("bob, the owner, got the admins' [Approve]: %q", told.Text)
		}
		for _, m := range w.fake.Messages(teamGroup) {
			if _, d := buttonPrefix(m, "Approve"); d != "" {
				t.Errorf("the approval card went to the group: %q", m.Text)
			}
		}
		// carol approves; alice's [Stop it] after her is told who decided,
		// and nothing is stopped.
		cb := w.pressIn(t, carol, carol, cardC, "Approve")
		w.toast(t, cb, 20*time.Second)
		w.waitIn(t, carol, nc, 20*time.Second, "approved")
		cb = w.pressIn(t, alice, alice, cardA, "Stop it")
		got := w.toast(t, cb, 20*time.Second)
		t.Logf("alice's late [Stop it] is told: %q", got)
		if !hasAll(got, "approved", "@carol") {
			t.Errorf("alice's [Stop it] after carol's approval: %q; want who decided (@carol) and what", got)
		}
		if r := rentalOf(w.teamExport(t), "box5"); r == nil || r["state"] != "running" {
			t.Errorf("box5 after the approval and a late [Stop it]: %v; want it running", r)
		}
	})

	// carol's rental with an idle agent.
	n = w.say(carol, carol, "/rent box7 autodl 4090 1.5/h project=llm-sft at -1h")
	w.waitIn(t, carol, n, 20*time.Second, "box7")
	n = w.say(carol, carol, "/charge box7 5 image")
	w.waitIn(t, carol, n, 20*time.Second, "5")
	n = w.say(carol, carol, "/agent box7")
	tokMsg := w.waitIn(t, carol, n, 20*time.Second, "box7", "install")
	w.token = tokenRE.FindString(tokMsg.Text)
	if w.token == "" {
		t.Fatalf("no token in the answer to /agent box7: %q", tokMsg.Text)
	}
	w.setGPU(0)
	// A heartbeat every 2 s: the hub's rate limit on a token bounds the
	// faster ones over the minute the idle warning takes.
	w.startAgentEvery(time.Second, 2*time.Second)

	t.Run("idle card in the room", func(t *testing.T) {
		card := w.waitIn(t, teamGroup, 0, 120*time.Second, "@carol", "box7", "idle")
		if !strings.HasPrefix(plainText(card.Text), "@carol") {
			t.Errorf("the idle card does not begin with its owner: %q", card.Text)
		}
		if strings.Contains(w.chatText(teamGroup), w.token) {
			t.Error("the agent's token reached the group")
		}
		// bob, a plain member, may not release carol's box7.
		cb := w.pressIn(t, bob, teamGroup, card, "Release")
		refusal := w.toast(t, cb, 20*time.Second)
		t.Logf("bob's [Release now] is told: %q", refusal)
		if !hasAll(refusal, "@carol") {
			t.Errorf("bob's [Release now] on carol's box7: %q; want a refusal naming its owner", refusal)
		}
		time.Sleep(5 * time.Second) // two heartbeats: a release order would have reached the agent
		if _, err := os.Stat(w.marker); err == nil {
			t.Fatal("bob's refused press ran the release command")
		}
		if r := rentalOf(w.teamExport(t), "box7"); r == nil || r["state"] != "running" {
			t.Fatalf("box7 after bob's refused press: %v; want it running", r)
		}
		// alice, the owner of the team, may.
		w.pressIn(t, alice, teamGroup, card, "Release")
		waitUntil(t, 30*time.Second, "the agent's release command", func() bool { _, err := os.Stat(w.marker); return err == nil })
		waitUntil(t, 30*time.Second, "box7 released in the export", func() bool {
			r := rentalOf(w.teamExport(t), "box7")
			return r != nil && r["state"] == "released"
		})
	})

	// Everything stops, then the nightly summary comes to the room.
	n = w.say(bob, bob, "/release box5")
	w.waitIn(t, bob, n, 20*time.Second, "box5")
	waitUntil(t, 20*time.Second, "box5 released in the export", func() bool {
		r := rentalOf(w.teamExport(t), "box5")
		return r != nil && r["state"] == "released"
	})

	t.Run("export", func(t *testing.T) {
		exp := w.teamExport(t)
		team, _ := exp["team"].(map[string]any)
		if team == nil || team["name"] != "lab" {
			t.Fatalf("the team's export has no team lab: %v", exp["team"])
		}
		roles := map[string]string{}
		members, _ := team["members"].([]any)
		for _, m := range members {
			mm, _ := m.(map[string]any)
			roles[fmt.Sprint(mm["username"])] = fmt.Sprint(mm["role"])
		}
		if want := map[string]string{"alice": "owner", "bob": "member", "carol": "admin"}; fmt.Sprint(roles) != fmt.Sprint(want) {
			t.Errorf("the export's members: %v; want %v", roles, want)
		}
		for name, want := range map[string][2]any{"box5": {float64(bob), "yolo-v9"}, "box7": {float64(carol), "llm-sft"}} {
			r := rentalOf(exp, name)
			if r == nil || r["owner"] != want[0] || r["project"] != want[1] {
				t.Errorf("the export's %s: owner %v, project %v; want %v, %v", name, r["owner"], r["project"], want[0], want[1])
			}
		}
		// Nothing of the team's reached a personal ledger.
		for id, name := range teamNames {
			cmd := exec.Command(w.server, "export", "--format", "json", "--user", fmt.Sprint(id))
			cmd.Env = append(os.Environ(), "GPULEDGER_DB="+w.db)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("export --user %d: %v", id, err)
			}
			var v map[string]any
			if err := json.Unmarshal(out, &v); err != nil {
				t.Fatal(err)
			}
			if rs, _ := v["rentals"].([]any); len(rs) != 0 || v["team"] != nil {
				t.Errorf("%s's own ledger holds %d rentals (team %v); the team's went to the team's ledger", name, len(rs), v["team"])
			}
		}
	})

	t.Run("nightly summary", func(t *testing.T) {
		due := time.Now().In(w.zone).Add(time.Minute).Truncate(time.Minute)
		n := w.say(alice, alice, "/settings summary="+due.Format("15:04"))
		w.waitIn(t, alice, n, 20*time.Second, due.Format("15:04"))
		sum := w.waitIn(t, teamGroup, 0, 150*time.Second, "summary", "@bob", "@carol", "yolo-v9", "llm-sft")
		t.Logf("summary: %q", sum.Text)
		byOwner, byProject, total := splitOf(t, w.teamExport(t))
		if ratOr0(byOwner[bob]).Sign() == 0 || ratOr0(byOwner[carol]).Sign() == 0 {
			t.Errorf("the export gives bob ¥%s and carol ¥%s; both rented", ratOr0(byOwner[bob]).FloatString(2), ratOr0(byOwner[carol]).FloatString(2))
		}
		lines := strings.Split(plainText(sum.Text), "\n")
		// hasLine reports whether one line of the summary holds both
		// fragments: a name and its figure.
		hasLine := func(name, amount string) bool {
			for _, l := range lines {
				if strings.Contains(l, name) && strings.Contains(l, amount) {
					return true
				}
			}
			return false
		}
		for _, want := range [][2]string{
			{"@bob", "¥" + ratOr0(byOwner[bob]).FloatString(2)},
			{"@carol", "¥" + ratOr0(byOwner[carol]).FloatString(2)},
			{"yolo-v9", "¥" + ratOr0(byProject["yolo-v9"]).FloatString(2)},
			{"llm-sft", "¥" + ratOr0(byProject["llm-sft"]).FloatString(2)},
		} {
			if !hasLine(want[0], want[1]) {
				t.Errorf("the summary has no line with %q and %q (the export's figure); it says:\n%s", want[0], want[1], sum.Text)
			}
		}
		if !strings.Contains(sum.Text, "¥"+total.FloatString(2)) {
			t.Errorf("the summary does not show the export's total ¥%s; it says:\n%s", total.FloatString(2), sum.Text)
		}
	})
}

func ratOr0(r *big.Rat) *big.Rat {
	if r == nil {
		return new(big.Rat)
	}
	return r
}
