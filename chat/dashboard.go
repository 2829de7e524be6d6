package chat

// dashboardTexts holds the label of the "Open dashboard" button, shared by
// the core's replies and the scheduler's nightly summary so the two never
// drift apart.
var dashboardTexts = Catalog{
	"open_dashboard": {"📊 Open dashboard", "📊 打开仪表盘"},
}

// DashboardCatalog returns the texts of this file, for the catalog test.
func DashboardCatalog() Catalog { return dashboardTexts }

// DashboardRow returns one row holding the web-app button that opens the
// dashboard (the Mini App at appURL) in lang, or nil when appURL is "":
// the dashboard is off or its URL is not https, which Telegram refuses.
// Callers add it only to messages bound for a private chat: Telegram
// rejects web-app buttons in groups (the Telegram transport drops them
// there too).
func DashboardRow(lang, appURL string) []Button {
	if appURL == "" {
		return nil
	}
	return []Button{{Text: dashboardTexts.Text(lang, "open_dashboard"), WebApp: appURL}}
}

// WithRow returns rows with row appended when row is not empty, leaving
// rows unchanged otherwise (buttons already on a message stay first).
func WithRow(rows [][]Button, row []Button) [][]Button {
	if len(row) == 0 {
		return rows
	}
	return append(rows, row)
}
