package bot

import "testing"

// TestWordTexts: each reply about the user's words exists in both
// languages with the same arguments, and each mode has its meaning.
func TestWordTexts(t *testing.T) {
	for _, err := range wordTexts.Check() {
		t.Error(err)
	}
	for _, m := range []string{"per-second", "per-minute", "per-hour", "always-on"} {
		if _, ok := wordTexts["mode_means_"+m]; !ok {
			t.Errorf("no mode_means_%s", m)
		}
	}
}
