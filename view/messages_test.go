package view

import "testing"

// TestCatalogs checks that every text of the views and of the ledger's
// errors is in both languages and shows the same arguments in each.
func TestCatalogs(t *testing.T) {
	for _, err := range messages.Check() {
		t.Error(err)
	}
	for _, err := range reconcileTexts.Check() {
		t.Error(err)
	}
	for _, err := range ledgerErrors.Check() {
		t.Error(err)
	}
}
