package dashboard

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// A team's view (docs/design.md section 11) is the month of a team's
// ledger split by person, by project and by platform, for the team's
// current members only. Whoever else asks (a stranger, a removed
// member, a malformed or unknown team ID) gets the one 404 answer, the
// same bytes, so the API never tells who is not a member whether a team
// exists. The figures come from ledger.Split of the month's statement,
// as the chat's /spend and the nightly summary do, so they never
// disagree; money of different currencies is never added.

// TeamRef is one of the signed-in user's teams.
type TeamRef struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	Role string `json:"role"` // owner, admin or member: the user's place in it
}

// TeamsAnswer answers PathTeams: the signed-in user's teams, in ID order.
type TeamsAnswer struct {
	Teams []TeamRef `json:"teams"`
}

// TeamTotal is a team's month in one currency.
type TeamTotal struct {
	Currency string `json:"currency"`
	Amounts
}

// TeamShare is one row of a team's split, in one currency: a person's
// (Owner set: the member's user ID, 0 for records nobody claimed yet) or
// a project's (Project set: "" for records of no project). Name is how
// the page shows it, in the user's language.
type TeamShare struct {
	Owner    *int64  `json:"owner,omitempty"`
	Project  *string `json:"project,omitempty"`
	Name     string  `json:"name"`
	Currency string  `json:"currency"`
	Amount   string  `json:"amount"`
	// Unpriced counts the row's lines with no price, left out of Amount
	// as they are out of the total (ledger.SplitRow.Unpriced): a person
	// whose boxes have no price is not shown as having spent nothing.
	Unpriced int `json:"unpriced,omitempty"`
}

// TeamLabels are the team page's headings and column names in the
// user's language: each names the month, and the tables the split they
// show, so no figure on the page stands unexplained.
type TeamLabels struct {
	Title      string `json:"title"`       // "Team vision · November 2026"
	Totals     string `json:"totals"`      // "Spent in November 2026, per currency"
	ByPerson   string `json:"by_person"`   // "By person · November 2026"
	ByProject  string `json:"by_project"`  // "By project · November 2026"
	ByPlatform string `json:"by_platform"` // "By platform · November 2026"
	Person     string `json:"person"`
	Project    string `json:"project"`
	Platform   string `json:"platform"`
	Currency   string `json:"currency"`
	Amount     string `json:"amount"`
	Note       string `json:"note"` // currencies are never added; unpriced lines are left out
}

// TeamPage answers PathTeam.
type TeamPage struct {
	Team    TeamRef   `json:"team"`
	Month   string    `json:"month"` // YYYY-MM, in the team ledger's zone
	From    time.Time `json:"from"`
	To      time.Time `json:"to"`
	AsOf    time.Time `json:"as_of"`
	Current bool      `json:"current"`
	// Months are the team's months with any spend, newest first, for the
	// page's picker.
	Months    []string        `json:"months"`
	Totals    []TeamTotal     `json:"totals"`    // by currency
	People    []TeamShare     `json:"people"`    // by currency, then most first
	Projects  []TeamShare     `json:"projects"`  // by currency, then most first
	Platforms []PlatformMonth `json:"platforms"` // by platform then currency
	Labels    TeamLabels      `json:"labels"`
}

// userReader is the store's read of one user (ledger/sqlite's DB has
// it): the language of a session whose user has no ledger of their own.
type userReader interface {
	User(ctx context.Context, userID int64) (ledger.User, error)
}

// noTeam is the one answer to a team the user may not see.
func (s *Server) noTeam(w http.ResponseWriter, r *http.Request) {
	s.fail(w, r, http.StatusNotFound, "not_found", "err_no_team")
}

// teamHandler answers one signed-in user's request; it reads no
// personal ledger.
type teamHandler func(w http.ResponseWriter, r *http.Request, g *grant)

// apiTeam authenticates as api does but reads no personal ledger, so an
// outsider (a person with none) is served too.
func (s *Server) apiTeam(h teamHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		g, ok := s.session(w, r)
		if !ok {
			return
		}
		g.lang = s.langOf(r.Context(), g.user)
		r = r.WithContext(context.WithValue(r.Context(), grantKey{}, g))
		h(w, r, g)
	}
}

// langOf is userID's language from their user row, English when the
// store cannot say.
func (s *Server) langOf(ctx context.Context, userID int64) string {
	if ur, ok := s.store.(userReader); ok {
		if u, err := ur.User(ctx, userID); err == nil {
			return chat.NormLang(u.Lang)
		}
	}
	return chat.LangEN
}

// myTeams returns the user's teams; none when the server has no team store.
func (s *Server) myTeams(ctx context.Context, userID int64) ([]TeamRef, error) {
	out := []TeamRef{}
	if s.teams == nil {
		return out, nil
	}
	ms, err := s.teams.TeamsOf(ctx, userID)
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		out = append(out, TeamRef{ID: m.Team.ID, Name: m.Team.Name, Role: string(m.Member.Role)})
	}
	return out, nil
}

func (s *Server) handleTeams(w http.ResponseWriter, r *http.Request, g *grant) {
	if _, ok := s.query(w, r); !ok {
		return
	}
	teams, err := s.myTeams(r.Context(), g.user)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, TeamsAnswer{Teams: teams})
}

func (s *Server) handleTeam(w http.ResponseWriter, r *http.Request, g *grant) {
	q, ok := s.query(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	id, err := strconv.ParseInt(q.Get("team"), 10, 64)
	if err != nil || id < 1 || id > ledger.MaxTeamID || s.teams == nil {
		s.noTeam(w, r)
		return
	}
	m, err := s.teams.Member(ctx, id, g.user)
	if ledger.ErrorCode(err) == ledger.ENOTFOUND {
		s.noTeam(w, r)
		return
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	team, err := s.teams.Team(ctx, id)
	if ledger.ErrorCode(err) == ledger.ENOTFOUND {
		s.noTeam(w, r)
		return
	}
	if err != nil {
		s.internal(w, r, err)
		return
	}
	b, err := s.store.Book(ctx, team.Ledger())
	if err != nil {
		s.internal(w, r, err)
		return
	}
	members, err := s.teams.Members(ctx, id)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	now := s.now()
	name, from, to, ok := s.month(w, r, b, now)
	if !ok {
		return
	}
	page := teamPage(b, TeamRef{ID: team.ID, Name: team.Name, Role: string(m.Role)}, members, name, from, to, now, g.lang)
	s.writeJSON(w, r, http.StatusOK, page)
}

// teamPage computes the team's month [from, to) as of now from its
// book: the totals, and ledger.Split's rows by person and by project,
// the platforms' as the month page has them. members name the people.
func teamPage(b *ledger.Book, team TeamRef, members []ledger.Member, name string, from, to, now time.Time, lang string) TeamPage {
	loc := b.User.Location()
	asOf := to
	current := now.Before(to)
	if current {
		asOf = now
	}
	st := ledger.Spend(b, from, asOf)
	page := TeamPage{Team: team, Month: name, From: from, To: to, AsOf: asOf, Current: current, Months: activeMonths(b, now, loc),
		Totals: []TeamTotal{}, People: []TeamShare{}, Projects: []TeamShare{}, Platforms: platformRows(st),
		Labels: teamLabels(lang, team.Name, name)}
	for _, c := range slices.Sorted(maps.Keys(st.Totals)) {
		page.Totals = append(page.Totals, TeamTotal{Currency: string(c), Amounts: amountsOf(st.Totals[c], st.IdleCost[c].Add(ledger.Money{Currency: c}))})
	}
	names := make(map[int64]string, len(members))
	for _, m := range members {
		names[m.UserID] = m.Name()
	}
	rows := ledger.Split(st)
	for _, r := range ledger.SplitBy(rows, false) {
		owner := r.Owner
		page.People = append(page.People, TeamShare{Owner: &owner, Name: personName(lang, owner, names), Currency: string(r.Currency), Amount: r.Amount.String(), Unpriced: r.Unpriced})
	}
	for _, r := range ledger.SplitBy(rows, true) {
		project, label := r.Project, r.Project
		if label == "" {
			label = teamText.Text(lang, "no_project")
		}
		page.Projects = append(page.Projects, TeamShare{Project: &project, Name: label, Currency: string(r.Currency), Amount: r.Amount.String(), Unpriced: r.Unpriced})
	}
	for i := range page.Platforms {
		page.Platforms[i].PlatformName = view.PlatformName(lang, page.Platforms[i].Platform)
	}
	return page
}

// personName names an owner on the team page: the member's @username
// (or id), "nobody yet" for 0, and one who left as such.
func personName(lang string, owner int64, names map[int64]string) string {
	if owner == 0 {
		return teamText.Text(lang, "unclaimed")
	}
	if n, ok := names[owner]; ok {
		return n
	}
	return teamText.Text(lang, "former", owner)
}

// teamLabels are the page's words for team teamName's month (YYYY-MM).
func teamLabels(lang, teamName, month string) TeamLabels {
	tx := func(key string, args ...any) string { return teamText.Text(lang, key, args...) }
	mn := monthLabel(lang, month)
	return TeamLabels{Title: tx("title", teamName, mn), Totals: tx("totals", mn), ByPerson: tx("by_person", mn),
		ByProject: tx("by_project", mn), ByPlatform: tx("by_platform", mn), Person: tx("col_person"), Project: tx("col_project"),
		Platform: tx("col_platform"), Currency: tx("col_currency"), Amount: tx("col_amount"), Note: tx("note")}
}

// monthLabel writes a month (YYYY-MM) as the page does: "November 2026",
// "2026年11月".
func monthLabel(lang, month string) string {
	t, err := time.Parse("2006-01", month)
	if err != nil {
		return month
	}
	if chat.NormLang(lang) == chat.LangZH {
		return strconv.Itoa(t.Year()) + "年" + strconv.Itoa(int(t.Month())) + "月"
	}
	return t.Format("January 2006")
}

// teamText is the team page's words, in English and Chinese.
var teamText = chat.Catalog{
	"title":        {"Team %[1]s · %[2]s", "团队 %[1]s · %[2]s"},
	"totals":       {"Spent in %[1]s, per currency", "%[1]s花费（按币种）"},
	"by_person":    {"By person · %[1]s", "按成员 · %[1]s"},
	"by_project":   {"By project · %[1]s", "按项目 · %[1]s"},
	"by_platform":  {"By platform · %[1]s", "按平台 · %[1]s"},
	"col_person":   {"Person", "成员"},
	"col_project":  {"Project", "项目"},
	"col_platform": {"Platform", "平台"},
	"col_currency": {"Currency", "币种"},
	"col_amount":   {"Spent", "花费"},
	"note": {"Each currency is counted apart (no exchange rates); lines without a price are left out and counted beside the totals.",
		"各币种分开计算（不换算汇率）；未定价的记录不计入，数量列在合计旁。"},
	"unclaimed":  {"nobody yet (unclaimed)", "尚无人认领"},
	"former":     {"id%[1]d (no longer in the team)", "id%[1]d（已不在团队中）"},
	"no_project": {"(no project)", "（无项目）"},
}
