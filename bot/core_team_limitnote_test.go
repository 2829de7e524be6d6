package bot_test

import (
	"strings"
	"testing"
	"time"
)

// TestTeam_LimitCurrencyNote: a rate or month limit counts only rentals
// of its currency, so the reply to one says so when the rentals it would
// count are all priced in another: @bob's three boxes in USD under a CNY
// limit get "Note: this limit counts only CNY; box1 and 2 more are
// priced in USD" and the command for a USD one, in English and in
// Chinese. No note for a limit in the rentals' currency, for a GPU bound
// (a GPU is a GPU), or once a rental of the scope is in the limit's
// currency; a scope with no rentals is told of the team's; with nothing
// running, the month's rentals are looked at.
func TestTeam_LimitCurrencyNote(t *testing.T) {
	e := newTeamEnv(t)
	for _, name := range []string{"box1", "box2", "box3"} {
		contains(t, e.say(e.bob, "/rent "+name+" runpod a100 $1.64/h"), "✓")
		e.now = e.now.Add(time.Minute)
	}
	contains(t, e.say(e.alice, "/team limit @bob rate=100/h"), "¥100.00/h",
		"\nNote: this limit counts only CNY; box1 and 2 more are priced in USD. Set one in USD too: <code>/team limit @bob rate=10/h USD</code>")
	contains(t, e.say(e.alice, "/team limit @bob month=3000"), "¥100.00/h", "¥3000.00",
		"<code>/team limit @bob rate=10/h month=3000 USD</code>")
	for _, cmd := range []string{"/team limit @bob rate=10/h USD", "/team limit team gpus=2", "/team limit @bob gpus=1 USD"} {
		if got := e.say(e.alice, cmd); strings.Contains(got, "Note:") || strings.Contains(got, "✗") {
			t.Errorf("%s = %q, want it set with no note", cmd, got)
		}
	}
	// carol rents nothing: the team's rentals are what her limit would
	// see, and they are in USD. In Chinese for a Chinese admin.
	e.say(e.carol, "/settings lang=zh")
	contains(t, e.say(e.carol, "/team limit @carol rate=5/h"),
		"注意：此限额只计 CNY；box1 及另外 2 台机器以 USD 计价。请再设一个 USD 的限额：<code>/team limit @carol rate=10/h USD</code>")
	contains(t, e.say(e.carol, "/team limit project=llm month=500"), "注意：此限额只计 CNY", "<code>/team limit project=llm month=3000 USD</code>")

	// Nothing running: the month's rentals are looked at.
	for _, name := range []string{"box1", "box2", "box3"} {
		contains(t, e.say(e.bob, "/stop "+name), "box")
	}
	e.now = e.now.Add(time.Hour)
	contains(t, e.say(e.alice, "/team limit @bob rate=50/h"), "Note: this limit counts only CNY; box1 and 2 more are priced in USD.")

	// One of bob's rentals in CNY, running: no note.
	contains(t, e.say(e.bob, "/rent box4 autodl 4090 1.88/h"), "✓")
	for _, cmd := range []string{"/team limit @bob rate=60/h", "/team limit team month=20000"} {
		if got := e.say(e.alice, cmd); strings.Contains(got, "Note:") || strings.Contains(got, "✗") {
			t.Errorf("%s with a CNY rental running = %q, want no note", cmd, got)
		}
	}
}

// TestTeam_LimitListNamesCurrency: /team limit lists each limit with its
// currency's sign on every amount, so a CNY and a USD limit of one
// member are told apart.
func TestTeam_LimitListNamesCurrency(t *testing.T) {
	e := newTeamEnv(t)
	e.say(e.alice, "/team limit @bob rate=100/h")
	e.say(e.alice, "/team limit @bob rate=10/h month=300 USD")
	contains(t, e.say(e.alice, "/team limit"), "@bob: ¥100.00/h", "@bob: $10.00/h · $300.00 a month")
}
