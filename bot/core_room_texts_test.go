package bot

import "testing"

// TestRoomTexts: each text of a gone room is in both languages with the
// same arguments.
func TestRoomTexts(t *testing.T) {
	for _, err := range roomTexts.Check() {
		t.Error(err)
	}
}
