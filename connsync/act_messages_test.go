package connsync

import "testing"

// TestActMessages_Catalog: every text of the stop and reconciliation side
// has both languages with the same arguments.
func TestActMessages_Catalog(t *testing.T) {
	for _, err := range actMessages.Check() {
		t.Error(err)
	}
	if len(actMessages) == 0 {
		t.Fatal("empty catalog")
	}
}
