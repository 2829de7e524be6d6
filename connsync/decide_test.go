package connsync

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/ledger"
)

func TestEventFor(t *testing.T) {
	for _, c := range []struct {
		listed connector.State
		rs     ledger.State
		want   ledger.EventKind
	}{
		{connector.Stopped, ledger.Running, ledger.EventStop},
		{connector.Stopped, ledger.Stopped, ""},
		{connector.Stopped, ledger.Released, ""},
		{connector.Running, ledger.Stopped, ledger.EventResume},
		{connector.Running, ledger.Running, ""},
		{connector.Running, ledger.Released, ""},
		{connector.Terminated, ledger.Running, ledger.EventRelease},
		{connector.Terminated, ledger.Stopped, ledger.EventRelease},
		{connector.Terminated, ledger.Released, ""},
		{connector.Unknown, ledger.Running, ""},
		{connector.Unknown, ledger.Stopped, ""},
	} {
		if got := eventFor(c.listed, c.rs); got != c.want {
			t.Errorf("eventFor(%s, %s) = %q, want %q", c.listed, c.rs, got, c.want)
		}
	}
}

func TestEventTime(t *testing.T) {
	poll := time.Date(2026, 12, 1, 18, 5, 0, 0, time.UTC)
	min := func(m int) time.Time { return poll.Add(time.Duration(m) * time.Minute) }
	for name, c := range map[string]struct {
		since, applied, last time.Time
		want                 time.Time
		approx               bool
	}{
		"Sane":            {min(-3), min(-60), min(-30), min(-3), false},
		"None":            {time.Time{}, min(-60), min(-30), poll, true},
		"Future":          {min(1), min(-60), min(-30), poll, true},
		"BeforeApplied":   {min(-61), min(-60), min(-90), poll, true},
		"BeforeLastEvent": {min(-40), min(-60), min(-30), poll, true},
		"AtPoll":          {poll, min(-60), min(-30), poll, false},
	} {
		at, approx := eventTime(c.since, c.applied, c.last, poll)
		if !at.Equal(c.want) || approx != c.approx {
			t.Errorf("%s: eventTime = %s, %v; want %s, %v", name, at, approx, c.want, c.approx)
		}
	}
}

func TestBackoff(t *testing.T) {
	for _, c := range []struct {
		interval time.Duration
		n        int
		want     time.Duration
	}{
		{time.Minute, 1, 2 * time.Minute},
		{time.Minute, 2, 4 * time.Minute},
		{time.Minute, 4, 16 * time.Minute},
		{time.Minute, 5, 30 * time.Minute},
		{time.Minute, 60, 30 * time.Minute},
		{time.Hour, 3, time.Hour}, // an interval over the cap is kept
	} {
		if got := backoff(c.interval, c.n); got != c.want {
			t.Errorf("backoff(%s, %d) = %s, want %s", c.interval, c.n, got, c.want)
		}
	}
}

func TestValidateKey(t *testing.T) {
	for key, want := range map[string]string{
		"rpa_ABC123xyz":          "",
		"":                       "empty",
		strings.Repeat("a", 512): "",
		strings.Repeat("a", 513): "513 bytes",
		"has space":              "at byte 4",
		"tab\there":              "at byte 4",
		"密钥":                     "not printable ASCII",
		"abc\x7f":                "at byte 4",
	} {
		err := validateKey(key)
		if want == "" {
			if err != nil {
				t.Errorf("validateKey(%q) = %v", key, err)
			}
			continue
		}
		if ledger.ErrorCode(err) != ledger.EINVALID || !strings.Contains(err.Error(), want) {
			t.Errorf("validateKey(%q) = %v, want EINVALID with %q", key, err, want)
		}
	}
}

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"box1":                   "box1",
		"a\x00b\u200bc\n":        "abc",
		strings.Repeat("é", 200): strings.Repeat("é", 128),
	} {
		if got := clean(in, 256); got != want {
			t.Errorf("clean(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMessages(t *testing.T) {
	for _, err := range messages.Check() {
		t.Error(err)
	}
	for key := range messages {
		for _, lang := range []string{"en", "zh"} {
			if got := messages.Text(lang, key); got == "" || (got == key && lang == "zh") {
				t.Errorf("%s %s renders as %q", lang, key, got)
			}
		}
	}
	for _, k := range []string{"cause_unavailable", "cause_bad", "cause_rate", "ev_stop", "ev_resume", "ev_release"} {
		if _, ok := messages[k]; !ok {
			t.Errorf("missing %s", k)
		}
	}
}
