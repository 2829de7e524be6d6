package bot

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// dispatch runs one parsed command. Commands that change the ledger make
// exactly one store call carrying the update's key; questions record the
// key with MarkHandled just before answering.
func (r *req) dispatch(cmd command.Command) error {
	return r.refusalNamed(r.dispatchCmd(cmd), typedRental(cmd))
}

// dispatchCmd is dispatch before its refusal names the rental as the
// replies do: what holds for every command (a /connect places itself, the
// group's placement), then the command's handler from the table.
func (r *req) dispatchCmd(cmd command.Command) error {
	_, connect := cmd.(command.ConnectCmd) // it places itself: a key sent in a group is deleted
	if code, ok := joinCode(cmd); ok && r.inGroup() && r.c.teams != nil {
		return r.burnGroupCode(code) // a code anyone in the group could use
	}
	if r.inGroup() && !connect {
		switch placeInGroup(cmd) {
		case privately:
			r.priv.on = true
		case notInGroup:
			return r.answer(r.plain(r.t("group_write", r.mention())))
		}
	}
	h, ok := handlers.lookup(cmd)
	if !ok {
		return fmt.Errorf("bot: no handler for command %T", cmd)
	}
	return h(r, cmd)
}

// at returns the time a command gave, or the moment of the update.
func (r *req) at(t time.Time) time.Time {
	if t.IsZero() {
		return r.now
	}
	return t
}

// when formats t for a reply in the user's zone.
func (r *req) when(t time.Time) string { return view.FormatTime(t, r.loc, r.now, r.lang) }

// defaultCurrency is the currency assumed when neither the user, the price
// nor a platform profile gives one: that of the user's most recent rental,
// else the currency of their language (CNY for Chinese, USD otherwise).
// Replies say when it was assumed. b may be nil (not loaded).
func (r *req) defaultCurrency(b *ledger.Book) ledger.Currency {
	if b == nil {
		var err error
		if b, err = r.book(); err != nil {
			b = &ledger.Book{} // the language decides; the store error shows up on the write
		}
	}
	var last *ledger.Rental
	for _, x := range b.Rentals {
		if last == nil || x.StartedAt().After(last.StartedAt()) {
			last = x
		}
	}
	if last != nil {
		return last.Currency
	}
	if r.lang == chat.LangZH {
		return ledger.CNY
	}
	return ledger.USD
}

// rental builds the ledger rental of a /rent: the user's values, then the
// platform profile's defaults for what they left out. assumed is true when
// the currency came from defaultCurrency.
func (r rentals) rental(c command.RentCmd) (rent ledger.Rental, assumed bool) {
	rent = ledger.Rental{
		UserID:   r.ledgerID,
		Name:     c.Name,
		Platform: c.Platform,
		GPU:      c.GPU,
		GPUCount: c.GPUCount,
		Mode:     c.Mode,
		Currency: c.Currency,
		Min:      c.Min,
		Step:     c.Step,
		Lease:    c.Lease,
		Events:   []ledger.Event{{Kind: ledger.EventStart, At: r.at(c.At)}},
	}
	if rent.GPUCount == 0 {
		rent.GPUCount = 1
	}
	if c.Price != nil {
		rent.Priced = true
		rent.Price = c.Price.Price()
		if rent.Currency == "" {
			rent.Currency = c.Price.Currency
		}
	}
	if c.Floor != nil {
		rent.Floor = *c.Floor
	}
	if p, ok := ledger.LookupProfile(c.Platform); ok {
		p.Apply(&rent)
	}
	if rent.Mode == "" {
		rent.Mode = ledger.PerSecond
	}
	if rent.Currency == "" {
		rent.Currency, assumed = r.defaultCurrency(nil), true
	}
	return rent, assumed
}

// rentals is the family of a rental's life: /rent, /stop, /resume,
// /release and /price.
type rentals struct{ *req }

func (rentals) register(t *table) {
	on(t, rentals.rent)
	on(t, rentals.stop)
	on(t, rentals.resume)
	on(t, rentals.release)
	on(t, rentals.price)
}

func (r rentals) stop(c command.StopCmd) error {
	return r.event(c.Name, ledger.Event{Kind: ledger.EventStop, At: r.at(c.At)})
}

func (r rentals) resume(c command.ResumeCmd) error {
	return r.event(c.Name, ledger.Event{Kind: ledger.EventResume, At: r.at(c.At)})
}

func (r rentals) rent(c command.RentCmd) error {
	c.At = r.at(c.At) // a choice made later starts it when it was sent
	if asked, err := r.checkPlatform(c.Platform, func(p string) command.Command { d := c; d.Platform = p; return d }); asked || err != nil {
		return err
	}
	if asked, err := r.checkMode(c); asked || err != nil {
		return err
	}
	rent, assumed := r.rental(c)
	var err error
	if rent.Project, err = r.project(c.Project); err != nil {
		return err
	}
	created, err := r.c.store.CreateRental(r.ctx, r.act(), rent)
	if err != nil {
		return err
	}
	return r.send(r.plain(r.rentedText(created, assumed) + r.reuseNote(created)))
}

// rentedText is the reply to a new rental: "✓ box1 started 10:00 — autodl
// RTX 4090, ¥1.88/h per-second".
func (r rentals) rentedText(x *ledger.Rental, assumed bool) string {
	var b strings.Builder
	b.WriteString(r.t("rented", x.Name, r.when(x.StartedAt()), view.GPUText(x), view.PlatformWord(r.lang, x.Platform), r.priceText(x, x.Price), view.FormatMode(x.Mode, r.lang)))
	if x.Min > 0 {
		b.WriteString(r.t("rented_min", chat.FormatDuration(x.Min, r.lang)))
	}
	if x.Step > 0 && x.Mode != ledger.PerMinute && x.Mode != ledger.PerHour {
		b.WriteString(r.t("rented_step", chat.FormatDuration(x.Step, r.lang)))
	}
	if x.Lease > 0 {
		b.WriteString(r.t("rented_lease", chat.FormatDuration(x.Lease, r.lang), r.when(x.StartedAt().Add(x.Lease))))
	}
	if assumed {
		b.WriteString("\n" + r.t("currency_assumed", string(x.Currency)))
	}
	if !x.Priced {
		// UNPRICED compute is left out of every total: say so, with the
		// command that prices it from its start.
		cmd, ex := view.PriceCommand(ledger.UnpricedLine{Category: ledger.CategoryCompute, Rental: x})
		b.WriteString(r.t("rental_unpriced_how", x.Name, cmd, ex))
	}
	return b.String()
}

func (r rentals) priceText(x *ledger.Rental, p ledger.Price) string {
	if !x.Priced {
		return "UNPRICED"
	}
	return view.FormatPrice(p, x.Currency, r.lang)
}

// event stops, resumes or releases a rental and says what it had cost at
// the time of the event: a backdated /resume reports the running time
// before that resume, not everything since.
func (r rentals) event(name string, ev ledger.Event) error {
	x, err := r.c.store.AppendEvent(r.ctx, r.act(), name, ev)
	if err != nil {
		return err
	}
	r.rentalChanged(x)
	run, cost := r.costAt(x, ev.At)
	key := map[ledger.EventKind]string{ledger.EventStop: "stopped", ledger.EventResume: "resumed", ledger.EventRelease: "released"}[ev.Kind]
	text := r.t(key, r.shown(name, x), r.when(ev.At), run, cost)
	if ev.Kind == ledger.EventStop && x.Mode == ledger.AlwaysOn {
		text += "\n" + r.t("always_on_note")
	}
	if ev.Kind == ledger.EventRelease {
		if line := (agents{r.req}).releasedStillReports(x); line != "" {
			text += "\n" + line
		}
	}
	return r.send(r.plain(text))
}

// costAt returns a rental's running time and compute as of t, for replies.
// A rental that starts in t's second is not yet in a statement as of t:
// as of the next second it has run nothing, and its compute is what the
// statement says then (a minimum per start, if the rental has one). It
// never returns a blank.
func (r rentals) costAt(x *ledger.Rental, t time.Time) (run, cost string) {
	b := &ledger.Book{User: r.lu, Rentals: []*ledger.Rental{x}}
	st := ledger.StatementAsOf(b, t)
	if len(st.Rentals) == 0 && x.State() != ledger.Running {
		st = ledger.StatementAsOf(b, t.Add(time.Second))
	}
	if len(st.Rentals) != 1 {
		return chat.FormatDuration(0, r.lang), view.MoneyOrUnpriced(x.Priced, ledger.Money{Currency: x.Currency})
	}
	rc := st.Rentals[0]
	return chat.FormatDuration(time.Duration(rc.RunningSeconds)*time.Second, r.lang), view.MoneyOrUnpriced(rc.ComputePriced, rc.Compute)
}

// book loads the user's ledger.
func (r *req) book() (*ledger.Book, error) {
	b, err := r.c.store.Book(r.ctx, r.ledgerID)
	if err != nil {
		return nil, err
	}
	b.User = r.lu
	return b, nil
}

// named returns the user's rental called name (the unreleased one, else
// the latest released one), or ENOTFOUND. It reads that rental alone:
// commands about one rental must not load a year of history.
func (r *req) named(name string) (*ledger.Rental, error) {
	return r.c.store.Rental(r.ctx, r.ledgerID, name)
}

// liveRental returns the user's unreleased rental called name, or
// ENOTFOUND; an amount given in cur (if not "") must be in the rental's
// currency.
func (r *req) liveRental(name string, cur ledger.Currency) (*ledger.Rental, error) {
	x, err := r.named(name)
	if ledger.ErrorCode(err) == ledger.ENOTFOUND || err == nil && x.State() == ledger.Released {
		return nil, ledger.Errorc(ledger.ENOTFOUND, "no_unreleased", name)
	}
	if err != nil {
		return nil, err
	}
	if err := sameCurrency(cur, x.Currency, x.Name); err != nil {
		return nil, err
	}
	return x, nil
}

func sameCurrency(given, have ledger.Currency, what string) error {
	if given != "" && given != have {
		return ledger.Errorc(ledger.EINVALID, "currency_mismatch", what, have, given)
	}
	return nil
}

// price changes a rental's rate from a time on. A time before the
// rental's last change, or any time on a released rental, corrects the
// rate from when it applied (the store checks it lies inside the life).
func (r rentals) price(c command.PriceCmd) error {
	x, err := r.named(c.Name)
	if err != nil {
		return err
	}
	if err := sameCurrency(c.Price.Currency, x.Currency, x.Name); err != nil {
		return err
	}
	ev := ledger.Event{Kind: ledger.EventPrice, At: r.at(c.At), Price: c.Price.Price()}
	if !x.Priced {
		// An UNPRICED rental is priced from its start (Rental.PriceFromStart):
		// a price from a later time would leave its start UNPRICED, which
		// no total can show, so that is refused and changes nothing.
		if !c.At.IsZero() && ev.At.After(x.StartedAt()) {
			return ledger.Errorc(ledger.EINVALID, "rental_unpriced_at", x.Name)
		}
		ev.At = x.StartedAt()
	}
	ended := r.packageEnded(x, ev.At)
	if x.State() == ledger.Released || ev.At.Before(x.LastEventAt()) {
		x, err = r.c.store.SetPriceAt(r.ctx, r.act(), c.Name, ev)
	} else {
		x, err = r.c.store.AppendEvent(r.ctx, r.act(), c.Name, ev)
	}
	if err != nil {
		return r.otherAt(err, c.Name, ev.At)
	}
	if ev.At.Equal(x.StartedAt()) && c.At.IsZero() {
		return r.send(r.plain(r.t("priced_from_start", x.Name, view.FormatPrice(ev.Price, x.Currency, r.lang), r.when(ev.At))))
	}
	return r.send(r.plain(r.t("priced", r.shown(c.Name, x), view.FormatPrice(ev.Price, x.Currency, r.lang), r.when(ev.At)) + ended + r.tookNote(c.Name, x)))
}

// assumedNote adds to text the note that cur was assumed, when it was.
func (r *req) assumedNote(text string, assumed bool, cur ledger.Currency) string {
	if assumed {
		text += "\n" + r.t("currency_assumed", string(cur))
	}
	return text
}

// rentalChanged tells the watcher (the agent hub) that x was stopped,
// resumed or released. A failure is logged: the ledger change stands, and
// the hub's cache expires on its own within seconds.
func (r *req) rentalChanged(x *ledger.Rental) {
	if r.c.watcher == nil || x == nil {
		return
	}
	if err := r.c.watcher.RentalChanged(r.ctx, x); err != nil {
		r.c.log.Error("bot: tell the agent hub that a rental changed", "rental", x.ID, "err", err)
	}
}

func hhmm(m int) string { return fmt.Sprintf("%02d:%02d", m/60, m%60) }

// release handles /release NAME: a rental its platform still lists as
// live gets a card (terminate there, or only record it) instead of a
// release that the platform would keep billing.
func (r rentals) release(c command.ReleaseCmd) error {
	at := r.at(c.At)
	if r.c.conns != nil {
		if x, err := r.named(c.Name); err == nil && x.State() != ledger.Released {
			ctx, cancel := context.WithTimeout(r.ctx, liveTimeout)
			platform, live := r.c.conns.Live(ctx, x)
			cancel()
			if live {
				return r.releaseCard(x, platform, at)
			}
		}
	}
	return r.event(c.Name, ledger.Event{Kind: ledger.EventRelease, At: at})
}

// releaseCard asks what to do with a rental still live on platform.
func (r rentals) releaseCard(x *ledger.Rental, platform string, at time.Time) error {
	name := platformTitle(platform)
	term, err := r.sign(actPlatformTerminate, strconv.FormatInt(x.ID, 10))
	if err != nil {
		return err
	}
	rec, err := r.sign(actPlatformLog, strconv.FormatInt(x.ID, 10)+"."+strconv.FormatInt(at.Unix(), 10))
	if err != nil {
		return err
	}
	text := r.ct("release_live_noid", x.Name, name)
	if x.PlatformID != "" {
		word := r.ct("word_instance")
		if platform == "runpod" {
			word = r.ct("word_pod")
		}
		text = r.ct("release_live", x.Name, name, chat.RawHTML(word), x.PlatformID)
	}
	out := r.plain(text)
	out.Buttons = [][]chat.Button{{
		{Text: connectTexts.Text(r.lang, "btn_pterm", name), Data: term},
		{Text: connectTexts.Text(r.lang, "btn_plog"), Data: rec},
	}}
	return r.answer(out)
}
