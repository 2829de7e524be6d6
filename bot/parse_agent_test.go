package bot

import (
	"errors"
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/ledger"
)

func TestParse_AgentAdopt(t *testing.T) {
	usd := &command.PriceSpec{Amount: ledger.MustDecimal("0.85"), Unit: ledger.UnitHour, Currency: ledger.USD}
	tests := []struct {
		in   string
		want command.Command
	}{
		{"/agent", command.AgentEnrolCmd{}},
		{"/agent revoke", command.AgentRevokeCmd{}},
		{"/agent REVOKE", command.AgentRevokeCmd{}},
		{"/agent 作废", command.AgentRevokeCmd{}},
		{"/agent box1", command.AgentCmd{Name: "box1"}},
		{"/agent name=revoke", command.AgentCmd{Name: "revoke"}},
		{"/adopt 7", command.AdoptCmd{ID: 7}},
		{"/adopt #7", command.AdoptCmd{ID: 7}},
		{"/adopt 7 $0.85", command.AdoptCmd{ID: 7, Price: usd}},
		{"/adopt 7 $0.85/h", command.AdoptCmd{ID: 7, Price: usd}},
		{"/adopt $0.85 7", command.AdoptCmd{ID: 7, Price: usd}},
		{"/adopt id=7 price=$0.85", command.AdoptCmd{ID: 7, Price: usd}},
		{"/adopt 7 0.85", command.AdoptCmd{ID: 7, Price: &command.PriceSpec{Amount: ledger.MustDecimal("0.85"), Unit: ledger.UnitHour}}},
		{"/adopt 12 1.2元/小时", command.AdoptCmd{ID: 12, Price: &command.PriceSpec{Amount: ledger.MustDecimal("1.2"), Unit: ledger.UnitHour, Currency: ledger.CNY}}},
		{"/adopt 7 7", command.AdoptCmd{ID: 7, Price: &command.PriceSpec{Amount: ledger.MustDecimal("7"), Unit: ledger.UnitHour}}},
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

func TestParse_AgentAdoptErr(t *testing.T) {
	tests := []struct {
		in, key, mention string
	}{
		{"/adopt", "missing_instance_id", "/adopt"},
		{"/adopt $0.85", "missing_instance_id", "/adopt"},
		{"/adopt 0", "bad_instance_id", `"0"`},
		{"/adopt 99999999999999999999", "bad_instance_id", `"99999999999999999999"`},
		{"/adopt id=x7", "bad_instance_id", `"x7"`},
		{"/adopt 7 cheap", "bad_price", `"cheap"`},
		{"/adopt 7 -0.85", "price_negative", `"-0.85"`},
		{"/adopt 7 0.85 0.90", "twice", `"0.90"`},
		{"/adopt 7 gpu=4090", "unknown_key", `"gpu="`},
		{"/agent revoke now", "unexpected", `"now"`},
		{"/agent box1 box2", "unexpected", `"box2"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			c, err := command.Parse(tt.in, testNow, shanghai)
			var pe *command.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) = %s, %v; want a *ParseError %s", tt.in, show(c), err, tt.key)
			}
			if pe.Key != tt.key {
				t.Errorf("key = %s, want %s (%v)", pe.Key, tt.key, err)
			}
			for _, lang := range []string{"en", "zh"} {
				msg := ErrorText(err, lang)
				if !strings.Contains(msg, tt.mention) || strings.Contains(msg, "%!") {
					t.Errorf("%s: %q should name %s, in words", lang, msg, tt.mention)
				}
			}
			if en, zh := ErrorText(err, "en"), ErrorText(err, "zh"); en == zh {
				t.Errorf("the same text in both languages: %q", en)
			}
		})
	}
}
