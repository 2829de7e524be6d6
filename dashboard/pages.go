package dashboard

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// maxMonths is how many months Me lists.
const maxMonths = 36

// activeMonths returns the local months (YYYY-MM) in which any line of
// the book was alive or charged, up to now, newest first, at most
// maxMonths. It reads the book's dates only (no metering), so it is cheap.
func activeMonths(b *ledger.Book, now time.Time, loc *time.Location) []string {
	seen := map[string]bool{}
	span := func(from, to time.Time) {
		if from.After(now) {
			return
		}
		if to.IsZero() || to.After(now) {
			to = now
		}
		start, _ := ledger.MonthRange(from, loc)
		// Never more than maxMonths+1 months back from now are listed.
		if lim, _ := ledger.MonthRange(now.In(loc).AddDate(0, -maxMonths-1, 0), loc); start.Before(lim) {
			start = lim
		}
		for m := start; m.Before(to) || m.Equal(to); m = m.AddDate(0, 1, 0) {
			seen[m.Format("2006-01")] = true
			if !m.Before(to) {
				break
			}
		}
	}
	for _, r := range b.Rentals {
		if len(r.Events) == 0 {
			continue
		}
		end, _ := r.ReleasedAt()
		span(r.StartedAt(), end)
		for _, u := range r.TrafficUsage {
			span(u.At, u.At)
		}
	}
	for _, v := range b.Volumes {
		if len(v.Events) == 0 {
			continue
		}
		end, _ := v.Deleted()
		span(v.Events[0].At, end)
	}
	for _, c := range b.Charges {
		span(c.At, c.At)
	}
	out := make([]string, 0, len(seen))
	for m := range seen {
		out = append(out, m)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(out)))
	if len(out) > maxMonths {
		out = out[:maxMonths]
	}
	return out
}

// handleMe answers who is signed in. A person with no ledger of their
// own (a team's outsider) gets no months, only their teams: their own
// book is never read.
func (s *Server) handleMe(w http.ResponseWriter, r *http.Request, g *grant) {
	if _, ok := s.query(w, r); !ok {
		return
	}
	ctx := r.Context()
	teams, err := s.myTeams(ctx, g.user)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	now := s.now()
	if !s.isPersonal(g.user) {
		loc := time.UTC
		if ur, ok := s.store.(userReader); ok {
			if u, err := ur.User(ctx, g.user); err == nil {
				loc = u.Location()
			}
		}
		s.writeJSON(w, r, http.StatusOK, Me{Name: g.name, Lang: g.lang, TZ: loc.String(), Month: now.In(loc).Format("2006-01"),
			Months: []string{}, Teams: teams})
		return
	}
	b, err := s.book(ctx, g)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	loc := b.User.Location()
	months := activeMonths(b, now, loc)
	s.writeJSON(w, r, http.StatusOK, Me{Name: g.name, Lang: g.lang, TZ: loc.String(), Month: now.In(loc).Format("2006-01"), Months: months,
		Personal: true, Teams: teams})
}

// month reads ?month= (default this month), which must lie between the
// user's first month and this one. ok is false when it answered a
// refusal.
func (s *Server) month(w http.ResponseWriter, r *http.Request, b *ledger.Book, now time.Time) (name string, from, to time.Time, ok bool) {
	q, ok := s.query(w, r)
	if !ok {
		return "", time.Time{}, time.Time{}, false
	}
	loc := b.User.Location()
	this := now.In(loc).Format("2006-01")
	first := this
	if ms := activeMonths(b, now, loc); len(ms) > 0 {
		first = ms[len(ms)-1]
	}
	if !b.User.CreatedAt.IsZero() {
		if c := b.User.CreatedAt.In(loc).Format("2006-01"); c < first {
			first = c
		}
	}
	name = q.Get("month")
	if name == "" {
		name = this
	}
	from, to, err := ledger.ParseMonth(name, loc)
	if err != nil || name < first || name > this {
		s.fail(w, r, http.StatusBadRequest, "bad_request", "err_month", first, this)
		return "", time.Time{}, time.Time{}, false
	}
	return name, from, to, true
}

func str(m ledger.Money) *string { v := m.String(); return &v }

// amountsOf is a totals row: the priced lines' sums, the unpriced count
// beside them.
func amountsOf(t *ledger.Totals, idle ledger.Money) Amounts {
	return Amounts{Compute: str(t.Compute), Storage: str(t.Storage), Traffic: str(t.Traffic), Other: str(t.Other),
		Total: str(t.Total), Idle: str(idle), Unpriced: t.Unpriced}
}

// rentalRow is one rental's line of a statement that ends at asOf: a
// part without a price is null, and so is the total then; so is the idle
// cost of a rental no agent watched (its idle time is unknown, not none).
func rentalRow(rc *ledger.RentalCost, asOf time.Time, hasAgent bool) RentalRow {
	r := rc.Rental
	row := RentalRow{ID: r.ID, Name: r.Name, Ref: rc.Ref, Platform: r.Platform, PlatformID: r.PlatformID, GPU: r.GPU, GPUCount: r.GPUCount,
		State: string(rc.State), StateAt: asOf, HasAgent: hasAgent, Currency: string(r.Currency), RunningSeconds: rc.RunningSeconds,
		IdleSeconds: rc.IdleSeconds}
	if now := string(r.State()); now != row.State {
		row.StateNow = now
	}
	a := &row.Amounts
	if rc.ComputePriced {
		a.Compute = str(rc.Compute)
		if hasAgent {
			a.Idle = str(rc.IdleCost)
		}
	} else {
		a.Unpriced++
	}
	if rc.StoragePriced {
		a.Storage = str(rc.Storage)
	} else {
		a.Unpriced++
	}
	if rc.TrafficPriced {
		a.Traffic = str(rc.Traffic)
	} else {
		a.Unpriced++
	}
	a.Other = str(rc.Other)
	if rc.Priced() {
		a.Total = str(rc.Total)
	}
	return row
}

func (s *Server) handleMonth(w http.ResponseWriter, r *http.Request, g *grant, b *ledger.Book) {
	now := s.now()
	name, from, to, ok := s.month(w, r, b, now)
	if !ok {
		return
	}
	agents := s.agents(r.Context(), g.user)
	page := monthPage(b, name, from, to, now, agents.has)
	if agents.err != nil {
		s.internal(w, r, agents.err)
		return
	}
	page.ExportURL = s.prefix + page.ExportURL
	nameMonth(&page, g.lang)
	s.writeJSON(w, r, http.StatusOK, page)
}

// nameMonth names the page's platforms as the chat does in lang.
func nameMonth(page *MonthPage, lang string) {
	for i := range page.Rentals {
		page.Rentals[i].PlatformName = view.PlatformName(lang, page.Rentals[i].Platform)
	}
	for i := range page.Platforms {
		page.Platforms[i].PlatformName = view.PlatformName(lang, page.Platforms[i].Platform)
	}
	for i := range page.Balances {
		page.Balances[i].PlatformName = view.PlatformName(lang, page.Balances[i].Platform)
	}
}

// agentSet answers whether an agent watched a rental: one that reported
// idle time, or that was ever given a token. It asks the store once per
// rental, for the rentals a page shows only; the first error is kept in
// err (and the rental taken as unwatched).
type agentSet struct {
	ctx  context.Context
	s    *Server
	user int64
	seen map[int64]bool
	err  error
}

func (s *Server) agents(ctx context.Context, user int64) *agentSet {
	return &agentSet{ctx: ctx, s: s, user: user, seen: map[int64]bool{}}
}

func (a *agentSet) has(r *ledger.Rental) bool {
	if len(r.Idle) > 0 {
		return true
	}
	if v, ok := a.seen[r.ID]; ok || a.err != nil {
		return v
	}
	issued, err := a.s.store.TokenIssued(a.ctx, a.user, r.ID)
	if err != nil {
		a.err = fmt.Errorf("dashboard: agent of rental %d: %w", r.ID, err)
		return false
	}
	a.seen[r.ID] = issued
	return issued
}

// monthPage computes the month [from, to) as of now from the book, and
// from hasAgent, which says whether an agent watched a rental
// (agentSet.has). A past month is shown as it was at its end: no budget
// (the store keeps only today's), no projection or burn, the rentals'
// states and the balances as of its end.
func monthPage(b *ledger.Book, name string, from, to, now time.Time, hasAgent func(*ledger.Rental) bool) MonthPage {
	loc := b.User.Location()
	asOf := to
	current := now.Before(to)
	if current {
		asOf = now
	}
	st := ledger.Spend(b, from, asOf)
	days := ledger.MonthDays(b, from, asOf)
	page := MonthPage{Month: name, From: from, To: to, AsOf: asOf, Current: current, Currencies: []CurrencyMonth{}, Platforms: []PlatformMonth{},
		Rentals: []RentalRow{}, Balances: []Balance{}, ExportURL: PathExport + "?month=" + name}
	curs := map[ledger.Currency]bool{}
	for c := range st.Totals {
		curs[c] = true
	}
	if current {
		for _, mb := range b.User.Budgets {
			curs[mb.Currency] = true
		}
	}
	var proj *ledger.Statement
	var burn map[ledger.Currency]ledger.Money
	if current {
		proj = ledger.Spend(b, from, to) // the book as it is, metered to the month's end
		burn = ledger.BurnPerHour(b, now)
	}
	for _, c := range slices.Sorted(maps.Keys(curs)) {
		tot := st.Total(c)
		cm := CurrencyMonth{Currency: string(c), Days: make([]DaySpend, 0, len(days)), Totals: amountsOf(tot, st.IdleCost[c].Add(ledger.Money{Currency: c}))}
		zero := ledger.Money{Currency: c}
		for _, d := range days {
			dt, ok := d.Totals[c]
			if !ok {
				dt = &ledger.Totals{Currency: c, Compute: zero, Storage: zero, Traffic: zero, Other: zero, Total: zero}
			}
			cm.Days = append(cm.Days, DaySpend{Day: d.Day.In(loc).Format("2006-01-02"), Amounts: amountsOf(dt, d.Idle[c].Add(zero))})
		}
		if amt, ok := b.User.Budget(c); ok && amt.Sign() > 0 {
			budget := ledger.MoneyFromDecimal(amt, c)
			if current {
				cm.Budget = str(budget)
				_, pct := ledger.BudgetShare(tot.Total, amt)
				cm.BudgetPercent = &pct
			} else {
				cm.BudgetNow = str(budget)
			}
		}
		if current {
			cm.Projection = str(proj.Total(c).Total)
			cm.BurnPerHour = str(burn[c].Add(ledger.Money{Currency: c}))
		}
		for i := range st.Rentals {
			if rc := &st.Rentals[i]; rc.Rental.Currency == c && !hasAgent(rc.Rental) {
				cm.NoAgent++
			}
		}
		page.Currencies = append(page.Currencies, cm)
	}
	page.Platforms = platformRows(st)
	rcs := make([]*ledger.RentalCost, len(st.Rentals))
	for i := range st.Rentals {
		rcs[i] = &st.Rentals[i]
	}
	slices.SortStableFunc(rcs, byCost)
	for _, rc := range rcs {
		page.Rentals = append(page.Rentals, rentalRow(rc, asOf, hasAgent(rc.Rental)))
	}
	page.Balances = balances(b, asOf, current)
	return page
}

// platformRows are the statement's totals by platform then currency,
// each with its rentals' idle cost.
func platformRows(st *ledger.Statement) []PlatformMonth {
	out := []PlatformMonth{}
	// A platform's idle cost is its rentals' (the engine sums it per
	// currency only).
	type platCur struct {
		p string
		c ledger.Currency
	}
	idle := map[platCur]ledger.Money{}
	for i := range st.Rentals {
		rc := &st.Rentals[i]
		if rc.ComputePriced {
			k := platCur{rc.Rental.Platform, rc.Rental.Currency}
			idle[k] = idle[k].Add(rc.IdleCost)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(st.ByPlatform)) {
		byCur := st.ByPlatform[p]
		for _, c := range slices.Sorted(maps.Keys(byCur)) {
			t := byCur[c]
			a := amountsOf(t, idle[platCur{p, c}].Add(ledger.Money{Currency: c}))
			out = append(out, PlatformMonth{Platform: p, Currency: string(c), Amounts: a})
		}
	}
	return out
}

// byCost orders rentals most expensive first (exactly, whatever the
// currency's digits), unpriced ones last, then by name.
func byCost(x, y *ledger.RentalCost) int {
	if xp, yp := x.Priced(), y.Priced(); xp != yp {
		if xp {
			return -1
		}
		return 1
	}
	if c := y.Total.Decimal().Rat().Cmp(x.Total.Decimal().Rat()); c != 0 {
		return c
	}
	return cmp.Compare(x.Rental.Name, y.Rental.Name)
}

// balances are the platforms' balances at asOf, by platform, each with
// the reading it was worked out from; the burn and runway only when asOf
// is now (current), since a past month's runway is a forecast that has
// already come true or not.
func balances(b *ledger.Book, asOf time.Time, current bool) []Balance {
	bs := ledger.Balances(b, asOf)
	out := make([]Balance, 0, len(bs))
	for _, p := range slices.Sorted(maps.Keys(bs)) {
		st := bs[p]
		bal := Balance{Platform: p, Currency: string(st.Currency), Balance: st.Balance.String(), AsOf: asOf, Source: "topups",
			ReadingAt: st.Since, Computed: true, Unpriced: st.Unpriced}
		if st.Recorded {
			bal.Source = "typed"
			if st.FromAPI {
				bal.Source = "api"
			}
			// The reading Balances started from: the latest of the
			// platform's currency at or before asOf (the engine's choice).
			for _, rec := range b.Balances {
				if rec.Platform == p && rec.Currency == st.Currency && rec.At.Equal(st.Since) && rec.API == st.FromAPI {
					bal.Reading = str(ledger.MoneyFromDecimal(rec.Amount, st.Currency))
				}
			}
		}
		for _, t := range b.TopUps {
			if t.Platform == p && t.Currency == st.Currency && t.At.After(st.Since) && !t.At.After(asOf) {
				bal.TopUps++
			}
		}
		// A reading shown as it is: nothing was added or charged since.
		bal.Computed = bal.Reading == nil || bal.TopUps > 0 || *bal.Reading != bal.Balance
		if current {
			bal.BurnPerHour, bal.RunsOutAt = str(st.BurnPerHour), st.RunsOutAt
		}
		out = append(out, bal)
	}
	return out
}

func (s *Server) handleExport(w http.ResponseWriter, r *http.Request, g *grant, b *ledger.Book) {
	now := s.now()
	name, from, to, ok := s.month(w, r, b, now)
	if !ok {
		return
	}
	asOf := to
	if now.Before(to) {
		asOf = now
	}
	var buf bytes.Buffer
	if asOf.After(from) {
		if err := ledger.WriteExportCSVPeriod(&buf, b, from, asOf); err != nil {
			s.internal(w, r, err)
			return
		}
	} else {
		buf.WriteString(joinCSV(ledger.ExportCSVColumns) + "\n")
	}
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="gpuledger-`+name+`.csv"`)
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(buf.Bytes())
	}
}

func joinCSV(cols []string) string {
	var b bytes.Buffer
	for i, c := range cols {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(c)
	}
	return b.String()
}
