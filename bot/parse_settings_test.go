package bot

import (
	"errors"
	"github.com/gpuledger/gpuledger/bot/command"
	"strings"
	"testing"
	"time"
)

// TestParse_SettingShortcuts: "/lang zh" and "/tz Asia/Shanghai" are what a
// new user tries first; they set that one setting.
func TestParse_SettingShortcuts(t *testing.T) {
	now := time.Date(2026, 11, 2, 2, 0, 0, 0, time.UTC)
	c, err := command.Parse("/lang zh", now, time.UTC)
	if s, ok := c.(command.SettingsCmd); err != nil || !ok || s.Lang == nil || *s.Lang != "zh" {
		t.Errorf("/lang zh = %#v, %v; want settings lang=zh", c, err)
	}
	c, err = command.Parse("/language English", now, time.UTC)
	if s, ok := c.(command.SettingsCmd); err != nil || !ok || s.Lang == nil || *s.Lang != "en" {
		t.Errorf("/language English = %#v, %v; want settings lang=en", c, err)
	}
	c, err = command.Parse("/tz Asia/Shanghai", now, time.UTC)
	if s, ok := c.(command.SettingsCmd); err != nil || !ok || s.TZ == nil {
		t.Errorf("/tz Asia/Shanghai = %#v, %v; want settings tz=", c, err)
	}
	if _, err := command.Parse("/lang klingon", now, time.UTC); err == nil {
		t.Error("/lang klingon: no error")
	}
	c, err = command.Parse("/lang", now, time.UTC)
	if s, ok := c.(command.SettingsCmd); err != nil || !ok || s.Lang != nil {
		t.Errorf("/lang alone = %#v, %v; want settings shown", c, err)
	}
}

// TestParseError_RangeInReadersLanguage: a refusal's range of durations is
// written as the reader's replies write durations.
func TestParseError_RangeInReadersLanguage(t *testing.T) {
	now := time.Date(2026, 11, 2, 2, 0, 0, 0, time.UTC)
	_, err := command.Parse("/settings idle_warn=8d", now, time.UTC)
	var pe *command.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("idle_warn=8d: %v, want a parse error", err)
	}
	if en := parseErrorText(pe, "en"); !strings.Contains(en, "1m..7d") {
		t.Errorf("English %q lacks 1m..7d", en)
	}
	zh := parseErrorText(pe, "zh")
	if !strings.Contains(zh, "1分钟..7天") || strings.Contains(zh, "1m") {
		t.Errorf("Chinese %q: want 1分钟..7天", zh)
	}
	if strings.Contains(pe.Error(), "§") {
		t.Errorf("Error() %q shows the mark", pe.Error())
	}
}
