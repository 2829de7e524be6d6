package bot

import (
	"errors"
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/ledger"
)

// TestParse_ChargeAt: /charge takes "at TIME" like the other commands; the
// time is taken out of the note, and "at" before words that are no time
// stays part of it.
func TestParse_ChargeAt(t *testing.T) {
	box1 := func(note string) command.ChargeCmd {
		return command.ChargeCmd{Target: "box1", Amount: command.Amount{Value: dec("5")}, Note: note}
	}
	with := func(c command.ChargeCmd, y, mo, d, h, mi int) command.ChargeCmd {
		c.At = at(y, mo, d, h, mi, 0)
		return c
	}
	tests := []struct {
		in   string
		want command.ChargeCmd
	}{
		{"/charge box1 5 image fee at 2026-11-01 10:05", with(box1("image fee"), 2026, 11, 1, 10, 5)},
		{"/charge box1 5 image fee at 10:05", with(box1("image fee"), 2026, 11, 1, 10, 5)},
		{"/charge box1 5 image fee at yesterday 23:00", with(box1("image fee"), 2026, 10, 31, 23, 0)},
		{"/charge box1 5 image fee at 2h ago", with(box1("image fee"), 2026, 11, 1, 10, 0)},
		{"/charge box1 5 image fee at -30m", with(box1("image fee"), 2026, 11, 1, 11, 30)},
		{"/charge box1 5 镜像费 在 昨天 23:00", with(box1("镜像费"), 2026, 10, 31, 23, 0)},
		{"/charge box1 5 镜像费 at 2小时前", with(box1("镜像费"), 2026, 11, 1, 10, 0)},
		{"/charge box1 at 10:05 5 image fee", with(box1("image fee"), 2026, 11, 1, 10, 5)},
		{"/charge box1 5 image fee at=10:05", with(box1("image fee"), 2026, 11, 1, 10, 5)},
		{"/charge box1 5 data at rest", box1("data at rest")},
		{"/charge box1 5 fee at cost", box1("fee at cost")},
		{"/charge box1 5 fee at", box1("fee at")},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := command.Parse(tt.in, testNow, shanghai)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if g, w := show(got), show(tt.want); g != w {
				t.Errorf("Parse(%q)\n got %s\nwant %s", tt.in, g, w)
			}
		})
	}
}

// TestParse_ChargeAtErr: a charge in the future, a time that does not
// read and two times are refused with the usual messages.
func TestParse_ChargeAtErr(t *testing.T) {
	for _, tt := range []struct{ in, key, mention string }{
		{"/charge box1 5 image fee at tomorrow 10:00", "future_time", `"tomorrow 10:00"`},
		{"/charge box1 5 image fee at 2026-12-24 10:00", "future_time", `"2026-12-24 10:00"`},
		{"/charge box1 5 image fee at 25:99", "bad_time", `"25:99"`},
		{"/charge box1 5 fee at 10:00 at=11:00", "twice", `"10:00"`},
	} {
		t.Run(tt.in, func(t *testing.T) {
			c, err := command.Parse(tt.in, testNow, shanghai)
			var pe *command.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) = %s, %v; want error %s", tt.in, show(c), err, tt.key)
			}
			if pe.Key != tt.key {
				t.Errorf("key = %s, want %s (%v)", pe.Key, tt.key, err)
			}
			if ledger.ErrorCode(err) != ledger.EINVALID {
				t.Errorf("code = %s", ledger.ErrorCode(err))
			}
			for _, lang := range []string{"en", "zh"} {
				if msg := ErrorText(err, lang); !strings.Contains(msg, tt.mention) {
					t.Errorf("%s message %q does not mention %s", lang, msg, tt.mention)
				}
			}
		})
	}
}

// TestHelp_ChargeAt: /help charge shows the at TIME form in both
// languages, with an example that parses to a dated charge.
func TestHelp_ChargeAt(t *testing.T) {
	for _, lang := range []string{"en", "zh"} {
		h := helpText(lang, command.KindCharge)
		if !strings.Contains(h, "/charge NAME AMOUNT NOTE... [at TIME]") {
			t.Errorf("%s help for /charge = %q", lang, h)
		}
	}
	for _, in := range []string{"/charge box1 5 image fee at 2026-11-01 10:05", "/charge box1 5元 镜像费 at 昨天 10:05"} {
		if !strings.Contains(helpText("en", command.KindCharge)+helpText("zh", command.KindCharge), in) {
			t.Errorf("help shows no example %q", in)
		}
		c, err := command.Parse(in, testNow, shanghai)
		if ch, ok := c.(command.ChargeCmd); err != nil || !ok || ch.At.IsZero() || strings.Contains(ch.Note, "at") {
			t.Errorf("help example %q parses to %s, %v", in, show(c), err)
		}
	}
}
