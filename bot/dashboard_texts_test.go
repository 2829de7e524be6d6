package bot

import "testing"

// TestDashboardTexts_Catalog checks that every /dashboard reply is in both
// languages with the same arguments.
func TestDashboardTexts_Catalog(t *testing.T) {
	for _, err := range dashboardTexts.Check() {
		t.Error(err)
	}
}
