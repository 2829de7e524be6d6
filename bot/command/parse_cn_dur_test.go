package command

import (
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

func TestParseDur_ChineseNumerals(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"两小时", 2 * time.Hour, true},
		{"两个小时", 2 * time.Hour, true},
		{"三十分钟", 30 * time.Minute, true},
		{"十二天", 12 * 24 * time.Hour, true},
		{"二十五分", 25 * time.Minute, true},
		{"一小时三十分", 90 * time.Minute, true},
		{"十分钟", 10 * time.Minute, true},
		{"2小时", 2 * time.Hour, true},
		{"1h30m", 90 * time.Minute, true},
		{"两", 0, false},    // a number without a unit is not a duration
		{"小时", 0, false},   // a unit without a number neither
		{"两张", 0, false},   // a count, not a duration
		{"一百小时", 0, false}, // 百 is not read: refused, not misread
	}
	for _, tt := range tests {
		got, ok := parseDur(tt.in)
		if ok != tt.ok || got != tt.want {
			t.Errorf("parseDur(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParse_ChineseDurationInCommands(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	c, err := Parse("/autorelease box1 release after 两小时", now, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := c.(AutoReleaseCmd); !ok || a.After != 2*time.Hour || a.Action != ledger.AutoRelease {
		t.Errorf("got %#v, want release after 2h", c)
	}
	c, err = Parse("/rent box1 autodl 4090 1.88/h for=三十分钟", now, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := c.(RentCmd); !ok || r.Lease != 30*time.Minute {
		t.Errorf("got %#v, want a 30m lease", c)
	}
}
