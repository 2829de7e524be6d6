package bot_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
)

// TestCore_HelpOneCommand: "/help CMD" shows that command's help and the
// shapes its arguments take, nothing about other commands, in English and
// Chinese, with or without the slash, by an alias; a typo suggests the
// command; "/help" alone still lists them all.
func TestCore_HelpOneCommand(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	only := func(t *testing.T, in, want string, absent ...string) {
		t.Helper()
		got := e.say(alice, in)
		contains(t, got, want)
		for _, a := range absent {
			if strings.Contains(got, a) {
				t.Errorf("%q: reply has %q:\n%s", in, a, got)
			}
		}
	}
	only(t, "/help budget", "/budget", "/rent", "GPU:", "PRICE:", "TIME:", "SIZE:", "Commands")
	only(t, "/help /budget", "/budget", "/rent", "GPU:")
	only(t, "/help rent", "MODE:", "/budget", "SIZE:", "/stop")
	only(t, "/help stop", "TIME:", "/rent", "GPU:", "PRICE:", "MODE:")
	only(t, "/help storage", "SIZE:", "/rent ", "GPU:", "MODE:")
	only(t, "/help 租", "/rent", "/budget")
	contains(t, e.say(alice, "/help renr"), "/rent")
	contains(t, e.say(alice, "/help"), "/rent", "/budget", "/stop")

	e.say(alice, "/lang zh")
	only(t, "/help 预算", "/budget", "/rent", "显卡：", "价格：", "时间：")
	only(t, "/help 停止", "时间：", "/rent", "显卡：", "价格：")
	contains(t, e.say(alice, "/help 租赁"), "/rent")
}

// TestCore_SpendPeriodLabels: each period's head says where it starts and
// ends unambiguously: an end on another day than the start names its day
// ("yesterday 00:00 – today 00:00"), in English and Chinese; "last week"
// has a label, not its message key.
func TestCore_SpendPeriodLabels(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.now = time.Date(2026, 11, 4, 4, 30, 0, 0, time.UTC) // Wednesday 12:30 in Shanghai
	head := func(in string) string {
		t.Helper()
		return strings.SplitN(e.say(alice, in), "\n", 2)[0]
	}
	for _, tc := range []struct{ in, want string }{
		{"/spend yesterday", "Spend: yesterday</b> (yesterday 00:00 – today 00:00)"},
		{"/spend today", "Spend: today</b> (today 00:00 – 12:30)"},
		{"/spend week", "Spend: this week</b> (Nov 2 00:00 – today 12:30)"},
		{"/spend last week", "Spend: last week</b> (Oct 26 00:00 – Nov 2 00:00)"},
		{"/spend last-month", "Spend: last month</b> (Oct 1 00:00 – Nov 1 00:00)"},
		{"/spend month", "Spend: this month</b> (Nov 1 00:00 – today 12:30)"},
		{"/spend 2026-10", "Spend: 2026-10</b> (Oct 1 00:00 – Nov 1 00:00)"},
	} {
		if got := head(tc.in); !strings.Contains(got, tc.want) {
			t.Errorf("%s: head %q, want %q", tc.in, got, tc.want)
		}
	}
	e.say(alice, "/lang zh")
	for _, tc := range []struct{ in, want string }{
		{"/spend 昨天", "花费：昨天</b>（昨天 00:00 – 今天 00:00）"},
		{"/spend 今天", "花费：今天</b>（今天 00:00 – 12:30）"},
		{"/spend 上周", "花费：上周</b>（10月26日 00:00 – 11月2日 00:00）"},
		{"/spend 本周", "花费：本周</b>（11月2日 00:00 – 今天 12:30）"},
	} {
		if got := head(tc.in); !strings.Contains(got, tc.want) {
			t.Errorf("%s: head %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestCore_SpendDays: /spend takes one day or a range of days, both ends
// included, and its head names them as any period's.
func TestCore_SpendDays(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/rent box1 autodl 4090 2/h at 2026-11-02 10:00") // t0: 10:00 Shanghai
	e.now = time.Date(2026, 11, 4, 4, 30, 0, 0, time.UTC)          // Nov 4 12:30 in Shanghai
	for _, tc := range []struct{ in, want, spent string }{
		{"/spend 2026-11-02", "Spend: 2026-11-02</b> (Nov 2 00:00 – yesterday 00:00)", "¥28.00"},
		{"/spend 2026-11-02..2026-11-03", "Spend: 2026-11-02..2026-11-03</b> (Nov 2 00:00 – today 00:00)", "¥76.00"},
		{"/spend 2026-11-03~2026-11-30", "(yesterday 00:00 – today 12:30)", "¥73.00"},
	} {
		got := e.say(alice, tc.in)
		contains(t, got, tc.want, tc.spent)
	}
	for _, bad := range []string{"/spend 2026-11-05..2026-11-01", "/spend 2026-13-01", "/spend 2026-11-01..", "/spend 2027-01-01"} {
		contains(t, e.say(alice, bad), "✗")
	}
}
