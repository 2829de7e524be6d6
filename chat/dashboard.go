package chat

import (
	"net/url"
	"strconv"
)

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

// AppTeamQuery is the query parameter of the Mini App's URL that opens a
// team's page (its value the team's ID). It is a query, not a route in
// the fragment (#/team/ID), because Telegram writes its launch data into
// the fragment of a web-app button's URL; the page moves it to its route
// on the first load (dashboard/static/app.js).
const AppTeamQuery = "team"

// TeamAppURL is appURL opening on team teamID's page, for the button of a
// reply about that team's ledger; appURL as it is when it is "" (no
// button) or not a URL.
func TeamAppURL(appURL string, teamID int64) string {
	if appURL == "" {
		return ""
	}
	u, err := url.Parse(appURL)
	if err != nil {
		return appURL
	}
	q := u.Query()
	q.Set(AppTeamQuery, strconv.FormatInt(teamID, 10))
	u.RawQuery, u.Fragment, u.RawFragment = q.Encode(), "", ""
	return u.String()
}
