package bot_test

import (
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
)

// codeCmd matches a command the bot offers to be sent as it stands.
var codeCmd = regexp.MustCompile(`<code>(/(?:price|storage|traffic) [^<]+)</code>`)

// offered returns the commands in a reply's <code> spans, unescaped.
func offered(reply string) []string {
	var out []string
	for _, m := range codeCmd.FindAllStringSubmatch(reply, -1) {
		out = append(out, html.UnescapeString(m[1]))
	}
	return out
}

// TestCore_UnpricedSaysHowToPrice: a volume created without a price on
// a platform whose profile has none, and traffic recorded on a rental
// without a traffic price, reply with the exact command that prices
// them; sent as it stands, that command is accepted and prices the line.
// In English and Chinese.
func TestCore_UnpricedSaysHowToPrice(t *testing.T) {
	for _, lang := range []string{"en", "zh"} {
		t.Run(lang, func(t *testing.T) {
			e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
			e.say(alice, "/settings lang="+lang)
			contains(t, e.say(alice, "/rent v3 vast 4090 0.40/h"), "✓")
			got := e.say(alice, "/storage vd3 50GB rental=v3")
			contains(t, got, "✓", "UNPRICED", "<code>/storage vd3 price=")
			cmds := offered(got)
			if len(cmds) != 1 {
				t.Fatalf("want one command to price vd3, got %q in %s", cmds, got)
			}
			contains(t, e.say(alice, cmds[0]), "✓", "vd3")
			e.now = t0.Add(time.Hour)
			if st := e.statement(alice); len(st.Volumes) != 1 || !st.Volumes[0].Priced {
				t.Fatalf("%q did not price vd3: %+v", cmds[0], st.Volumes)
			}

			got = e.say(alice, "/traffic v3 12GB")
			contains(t, got, "✓", "<code>/traffic v3 price=")
			cmds = offered(got)
			if len(cmds) != 1 {
				t.Fatalf("want one command to price v3's traffic, got %q in %s", cmds, got)
			}
			contains(t, e.say(alice, cmds[0]), "✓", "v3")
			if st := e.statement(alice); len(st.Rentals) != 1 || !st.Rentals[0].TrafficPriced {
				t.Fatalf("%q did not price v3's traffic: %+v", cmds[0], st.Rentals)
			}
			// A rental recorded without a price: the same, from its start.
			got = e.say(alice, "/rent u1 autodl 4090")
			contains(t, got, "✓", "UNPRICED", "<code>/price u1 ")
			if cmds = offered(got); len(cmds) != 1 {
				t.Fatalf("want one command to price u1, got %q in %s", cmds, got)
			}
			e.now = t0.Add(2 * time.Hour)
			contains(t, e.say(alice, cmds[0]), "✓", "u1")
			for _, rc := range e.statement(alice).Rentals {
				if rc.Rental.Name == "u1" && (!rc.ComputePriced || rc.RunningSeconds != 3600 || rc.Compute.Minor == 0) {
					t.Fatalf("%q did not price u1 from its start: %+v", cmds[0], rc)
				}
			}
			// Traffic on a rental whose traffic has a price: no hint.
			if got := e.say(alice, "/traffic v3 1GB"); strings.Contains(got, "<code>/traffic") {
				t.Errorf("priced traffic still offers a price: %s", got)
			}
		})
	}
}

// TestCore_UnpricedTotalsNameLines: /spend, /summary and /status, whose
// totals leave out UNPRICED lines, name those lines (up to a bound, then
// how many more) and how to price each; sending the offered commands
// prices them all, so the totals have no UNPRICED left. English and
// Chinese.
func TestCore_UnpricedTotalsNameLines(t *testing.T) {
	for _, lang := range []string{"en", "zh"} {
		t.Run(lang, func(t *testing.T) {
			e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
			e.say(alice, "/settings lang="+lang)
			contains(t, e.say(alice, "/rent u1 autodl 4090"), "✓")      // compute unpriced
			contains(t, e.say(alice, "/rent v3 vast 4090 0.40/h"), "✓") // priced compute
			for _, v := range []string{"d1", "d2", "d3", "d4"} {
				contains(t, e.say(alice, "/storage "+v+" 50GB rental=v3"), "✓")
			}
			contains(t, e.say(alice, "/traffic v3 12GB"), "✓") // traffic unpriced
			e.now = t0.Add(2 * time.Hour)

			more := "and 3 more"
			if lang == "zh" {
				more = "还有 3 项"
			}
			for _, cmd := range []string{"/spend", "/summary", "/status"} {
				got := e.say(alice, cmd)
				contains(t, got, "UNPRICED", "u1", "<code>/price u1 ", more)
				if n := len(offered(got)); n != 3 {
					t.Errorf("%s: want 3 commands offered (the bound), got %d: %s", cmd, n, got)
				}
			}
			// Price every line with what the replies offer, a bound at a
			// time, until none is left.
			for round := 0; round < 4; round++ {
				cmds := offered(e.say(alice, "/spend"))
				if len(cmds) == 0 {
					break
				}
				for _, c := range cmds {
					contains(t, e.say(alice, c), "✓")
				}
			}
			e.now = e.now.Add(time.Hour)
			for _, cmd := range []string{"/spend", "/summary", "/status"} {
				if got := e.say(alice, cmd); strings.Contains(got, "UNPRICED") {
					t.Errorf("%s after pricing every offered line still has UNPRICED: %s", cmd, got)
				}
			}
			if st := e.statement(alice); len(st.Unpriced) != 0 {
				t.Errorf("statement still has unpriced lines: %+v", st.Unpriced)
			}
		})
	}
}

// TestCore_UnpricedReusedName: the UNPRICED line of a released rental
// whose name a newer rental took is named by its address, and the command
// offered prices that rental, not the newer one.
func TestCore_UnpricedReusedName(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	contains(t, e.say(alice, "/rent yolo autodl 4090"), "✓")
	e.now = t0.Add(time.Hour)
	contains(t, e.say(alice, "/release yolo"), "✓")
	e.now = t0.Add(25 * time.Hour)
	contains(t, e.say(alice, "/rent yolo autodl 4090 1.88/h"), "✓")
	e.now = t0.Add(26 * time.Hour)
	got := e.say(alice, "/spend month")
	contains(t, got, "<code>/price yolo@2026-11-02 ")
	cmds := offered(got)
	if len(cmds) != 1 {
		t.Fatalf("want one command, got %q in %s", cmds, got)
	}
	contains(t, e.say(alice, cmds[0]), "✓")
	for _, rc := range e.statement(alice).Rentals {
		if !rc.ComputePriced {
			t.Errorf("%s is still UNPRICED after %q", rc.Label(), cmds[0])
		}
	}
}
