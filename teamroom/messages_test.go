package teamroom

import "testing"

// TestMessages_Catalog: every text has both languages with the same
// arguments.
func TestMessages_Catalog(t *testing.T) {
	for _, err := range messages.Check() {
		t.Error(err)
	}
}
