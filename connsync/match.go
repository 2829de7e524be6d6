package connsync

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// The question's button actions (at most 4 bytes, no ':').
const (
	actBind = "sybd" // payload "INSTANCE.RENTAL": it is that rental
	actNew  = "syne" // payload "INSTANCE": a new rental
	actSkip = "sysk" // payload "INSTANCE": don't track it
)

// MaxCandidates is how many of the user's rentals the question offers
// (the most recently started): more would not fit a phone's screen.
const MaxCandidates = 3

// fresh applies an instance the store has not seen: bound to the rental
// that is it already, or to the rental its agent says it is, or asked
// about when the user has rentals on the platform logged by hand, or
// else created as a synced rental. A terminated one is not logged.
func (p *pass) fresh(ctx context.Context, li connector.Instance) error {
	if li.State == connector.Terminated {
		return nil
	}
	in := ledger.PlatformInstance{UserID: p.c.UserID, Platform: p.c.Platform, PlatformID: li.ID, FirstSeen: p.poll, LastSeen: p.poll}
	listedFacts(&in, li)
	start, startNote := p.startOf(li)
	in.StateAt = start

	r, err := p.s.store.RentalByPlatformID(ctx, p.c.UserID, p.c.Platform, li.ID)
	switch {
	case err == nil:
		// The rental is this instance already (an earlier binding whose
		// bookkeeping was lost): bind the row, and apply the listed
		// state against it as a known one.
		in.Status, in.RentalID = ledger.PlatformBound, r.ID
		saved, err := p.s.store.SavePlatformInstance(ctx, in)
		if err != nil {
			return err
		}
		return p.known(ctx, saved, li, true)
	case !isCode(err, ledger.ENOTFOUND):
		return err
	}

	if err := p.loadBook(ctx); err != nil {
		return err
	}
	cands := p.candidates()
	for _, r := range cands {
		inst, err := p.s.store.InstanceByRental(ctx, r.ID)
		if err != nil || inst.PlatformID != li.ID {
			continue
		}
		_, saved, err := p.s.store.BindPlatformRental(ctx, p.action(), boundTo(in, r.ID), r.ID)
		if err != nil {
			return err
		}
		return p.known(ctx, saved, li, true)
	}
	if len(cands) > 0 {
		return p.ask(ctx, in, li, cands)
	}
	return p.create(ctx, in, li, start, startNote, true)
}

// boundTo is in bound to rental rid, with no state applied yet: the
// listed state is then applied against the rental's own.
func boundTo(in ledger.PlatformInstance, rid int64) ledger.PlatformInstance {
	in.Status, in.RentalID, in.State = ledger.PlatformBound, rid, ""
	return in
}

// startOf is when a new instance's rental starts, and the catalog key of
// what the announcement says about it ("" none): the platform's
// StartedAt clamped (ledger.ClampBoot: never after this poll, never more
// than ledger.MaxBootAge before it: "clamped_start"), or the poll's
// time when the platform gives none ("approx_start").
func (p *pass) startOf(li connector.Instance) (time.Time, string) {
	if li.State != connector.Running || li.StartedAt.IsZero() {
		return p.poll, "approx_start"
	}
	t, clamped := ledger.ClampBoot(li.StartedAt.UTC(), p.poll, time.Time{})
	if !clamped {
		return t, ""
	}
	if t.Equal(p.poll) {
		// A start in the future: the platform's clock disagrees.
		return t, "approx_start"
	}
	return t, "clamped_start"
}

// candidates are the user's unreleased rentals on this platform bound
// to no instance, the most recently started first, at most
// MaxCandidates.
func (p *pass) candidates() []*ledger.Rental {
	var out []*ledger.Rental
	for _, r := range p.book.Rentals {
		if r.Platform == p.c.Platform && r.PlatformID == "" && r.State() != ledger.Released {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b *ledger.Rental) int { return b.StartedAt().Compare(a.StartedAt()) })
	return out[:min(len(out), MaxCandidates)]
}

// describe is "2× A40, $0.79/h" for an instance.
func describe(in ledger.PlatformInstance, lang string) string {
	gpu := in.GPU
	if gpu == "" {
		gpu = "GPU"
	}
	if in.GPUCount > 1 {
		gpu = strconv.Itoa(in.GPUCount) + "× " + gpu
	}
	if !in.PriceOK {
		return gpu
	}
	return gpu + ", " + fmtRate(in.Price, in.Currency)
}

// label is how an instance is named to the user: "pod abc123 (box1)".
func label(in ledger.PlatformInstance) string {
	if in.Name != "" && in.Name != in.PlatformID {
		return in.PlatformID + " (" + in.Name + ")"
	}
	return in.PlatformID
}

// ask saves in as asked and sends the question once, with a button per
// candidate, [A new rental] and [Don't track it]. Without a sender the
// question waits for a later round (nothing is saved).
func (p *pass) ask(ctx context.Context, in ledger.PlatformInstance, li connector.Instance, cands []*ledger.Rental) error {
	if p.s.sender() == nil {
		return nil
	}
	in.Status, in.State = ledger.PlatformAsked, ""
	saved, err := p.s.store.SavePlatformInstance(ctx, in)
	if err != nil {
		return err
	}
	lang := p.user(ctx).Lang
	id := strconv.FormatInt(saved.ID, 10)
	var rows [][]chat.Button
	for _, r := range cands {
		d, err := p.s.cfg.Buttons.Sign(p.c.UserID, actBind, id+"."+strconv.FormatInt(r.ID, 10))
		if err != nil {
			return err
		}
		rows = append(rows, []chat.Button{{Text: r.Name + " (" + r.GPU + ")", Data: d}})
	}
	dn, err := p.s.cfg.Buttons.Sign(p.c.UserID, actNew, id)
	if err != nil {
		return err
	}
	ds, err := p.s.cfg.Buttons.Sign(p.c.UserID, actSkip, id)
	if err != nil {
		return err
	}
	rows = append(rows, []chat.Button{{Text: messages.Text(lang, "btn_new"), Data: dn}, {Text: messages.Text(lang, "btn_skip"), Data: ds}})
	text := messages.Render(lang, "ask", platformName(p.c.Platform), label(saved), describe(saved, lang))
	msg, ok := p.s.sendMsg(ctx, chat.Outgoing{ChatID: p.s.chatOf(ctx, p.c.UserID), Text: text, Buttons: rows})
	if ok && msg != 0 {
		saved.MessageID = msg
		if _, err := p.s.store.SavePlatformInstance(ctx, saved); err != nil {
			return err
		}
	}
	return nil
}

// rentalFor builds the rental a new instance is logged as, the way /rent
// and the enrolment's Log build one: the platform's label when it is a
// valid name (else "<platform>-<short id>"), the GPU and count listed,
// the listed hourly price (unpriced when none), the profile's billing
// terms, started at start.
func rentalFor(in ledger.PlatformInstance, start time.Time) ledger.Rental {
	name := in.Name
	if ledger.ValidateName(name) != nil {
		name = ledger.InstanceRentalName(ledger.Instance{Platform: in.Platform, PlatformID: in.PlatformID, Key: in.Platform + ":" + in.PlatformID})
	}
	r := ledger.Rental{
		UserID:   in.UserID,
		Name:     name,
		Platform: in.Platform,
		GPU:      in.GPU,
		GPUCount: min(max(1, in.GPUCount), ledger.MaxGPUCount),
		Events:   []ledger.Event{{Kind: ledger.EventStart, At: start}},
	}
	if r.GPU == "" {
		r.GPU = "GPU"
	}
	if in.PriceOK {
		r.Priced, r.Price, r.Currency = true, ledger.Price{Amount: in.Price, Unit: ledger.UnitHour}, in.Currency
	}
	if pr, ok := ledger.LookupProfile(in.Platform); ok {
		pr.Apply(&r)
	}
	if r.Mode == "" {
		r.Mode = ledger.PerSecond
	}
	return r
}

// create logs a new instance as a synced rental, with one quiet line
// (tell) written to the outbox with it: a crash before the send still
// tells it after the restart. A stopped instance is logged stopped from
// the poll (no compute). Without tell (Log all) nothing is said: the
// flood card sums them up.
func (p *pass) create(ctx context.Context, in ledger.PlatformInstance, li connector.Instance, start time.Time, startNote string, tell bool) error {
	in.Status, in.State = ledger.PlatformBound, string(connector.Running)
	if li.State == connector.Unknown {
		in.State = string(connector.Unknown)
	}
	in.RentalID = 0
	stopped := li.State == connector.Stopped
	nr := rentalFor(in, start)
	if stopped {
		// Created stopped in the same journaled action: one /undo
		// removes it and declines the instance.
		start, startNote = p.poll, ""
		nr = rentalFor(in, start)
		nr.Events = append(nr.Events, ledger.Event{Kind: ledger.EventStop, At: p.poll})
		in.State, in.StateAt = string(connector.Stopped), p.poll
	}
	a := p.action()
	if tell {
		lang := p.user(ctx).Lang
		extra := ""
		if !nr.Priced {
			extra += messages.Render(lang, "unpriced")
		}
		switch startNote {
		case "approx_start":
			extra += messages.Render(lang, startNote)
		case "clamped_start":
			extra += messages.Render(lang, startNote, chat.FormatDuration(ledger.MaxBootAge, lang))
		}
		key := "new_rental"
		if stopped {
			key = "new_rental_stopped"
		}
		when, lbl, desc := fmtWhen(start, p.poll, p.zone(ctx), lang), label(in), describe(in, lang)
		var earlier []*ledger.Rental // the rentals that had this name before
		if p.book != nil {
			earlier = p.book.Rentals
		}
		loc, now := p.zone(ctx), p.poll
		a.Tell = p.notice(func(r *ledger.Rental) string {
			text := messages.Render(lang, key, platformName(p.c.Platform), lbl, desc, r.Name, when, chat.RawHTML(extra))
			if n := view.ReuseNote(r, earlier, loc, now, lang); n != "" {
				text += "\n" + n
			}
			return text
		})
	}
	r, _, err := p.s.store.AddSyncedRental(ctx, a, in, nr)
	if err != nil {
		return err
	}
	p.rentals[r.ID] = r
	if p.book != nil {
		p.book.Rentals = append(p.book.Rentals, r)
	}
	return nil
}

// handleButtons registers the questions' buttons with the router. Each
// press runs under the connector's lock and passes the press's Update.Key
// to its one store call, so a redelivered press changes nothing; a press
// on a question already answered only says so.
func (s *Syncer) handleButtons(b *chat.Buttons) {
	b.Handle(actBind, s.pressBind)
	b.Handle(actNew, s.pressNew)
	b.Handle(actSkip, s.pressSkip)
	b.Handle(actFloodLog, s.pressFloodLog)
	b.Handle(actFloodShow, s.pressFloodShow)
	b.Handle(actFloodIgnore, s.pressFloodIgnore)
}

// pressed loads the asked instance a press names (payload "ID" or
// "ID.RENTAL") and locks its connector. ok is false when it was already
// answered or is not the presser's: the press was answered then.
func (s *Syncer) pressed(ctx context.Context, p chat.ButtonPress, snd chat.Sender) (in ledger.PlatformInstance, rid int64, unlock func(), ok bool, err error) {
	lang := s.user(ctx, p.ActsOn()).Lang
	idText, ridText, _ := strings.Cut(p.Payload, ".")
	id, err1 := strconv.ParseInt(idText, 10, 64)
	if ridText != "" {
		rid, err = strconv.ParseInt(ridText, 10, 64)
	}
	if err1 != nil || err != nil {
		return in, 0, nil, false, snd.AnswerCallback(ctx, p.Update.CallbackID, messages.Text(lang, "gone"))
	}
	in, err = s.store.PlatformInstance(ctx, p.ActsOn(), id)
	if err != nil {
		if isCode(err, ledger.ENOTFOUND) {
			return in, 0, nil, false, snd.AnswerCallback(ctx, p.Update.CallbackID, messages.Text(lang, "gone"))
		}
		return in, 0, nil, false, err
	}
	unlock = s.lockConn(in.UserID, in.Platform)
	// Re-read under the lock: a round or another press may have answered.
	in, err = s.store.PlatformInstance(ctx, p.ActsOn(), id)
	if err != nil || in.Status != ledger.PlatformAsked {
		unlock()
		if err != nil {
			return in, 0, nil, false, err
		}
		return in, 0, nil, false, snd.AnswerCallback(ctx, p.Update.CallbackID, messages.Text(lang, "answered"))
	}
	return in, rid, unlock, true, nil
}

// answer edits the question into its answer and stops the spinner.
func (s *Syncer) answer(ctx context.Context, p chat.ButtonPress, snd chat.Sender, text string) error {
	if _, err := snd.Send(ctx, chat.Outgoing{ChatID: p.Update.ChatID, EditMessageID: p.Update.MessageID, Text: text}); err != nil {
		s.log.Warn("connsync: edit the question", "err", err)
	}
	return snd.AnswerCallback(ctx, p.Update.CallbackID, "")
}

// pressFailed answers a press an earlier delivery applied (the question
// was answered) and returns any other failure, for the router to word in
// the presser's language.
func (s *Syncer) pressFailed(ctx context.Context, p chat.ButtonPress, snd chat.Sender, err error) error {
	if isCode(err, ledger.EDUPLICATE) {
		return snd.AnswerCallback(ctx, p.Update.CallbackID, messages.Text(s.user(ctx, p.ActsOn()).Lang, "answered"))
	}
	return fmt.Errorf("connsync: button %s: %w", p.Action, err)
}

// pressBind: the instance is the user's rental logged by hand.
func (s *Syncer) pressBind(ctx context.Context, p chat.ButtonPress, snd chat.Sender) error {
	in, rid, unlock, ok, err := s.pressed(ctx, p, snd)
	if !ok {
		return err
	}
	defer unlock()
	a := ledger.Action{UserID: p.ActsOn(), By: p.By(), At: p.Now, Key: p.Update.Key}
	r, _, err := s.store.BindPlatformRental(ctx, a, boundTo(in, rid), rid)
	if err != nil {
		return s.pressFailed(ctx, p, snd, err)
	}
	lang := s.user(ctx, p.ActsOn()).Lang
	return s.answer(ctx, p, snd, messages.Render(lang, "bound", platformName(in.Platform), label(in), r.Name))
}

// pressNew: the instance is a new rental, logged from what was listed.
func (s *Syncer) pressNew(ctx context.Context, p chat.ButtonPress, snd chat.Sender) error {
	in, _, unlock, ok, err := s.pressed(ctx, p, snd)
	if !ok {
		return err
	}
	defer unlock()
	a := ledger.Action{UserID: p.ActsOn(), By: p.By(), At: p.Now, Key: p.Update.Key}
	start := in.StateAt
	if start.IsZero() || start.After(p.Now) {
		start = in.FirstSeen
	}
	cur := in
	cur.Status, cur.State = ledger.PlatformBound, "" // the next round applies the listed state
	r, _, err := s.store.AddSyncedRental(ctx, a, cur, rentalFor(in, start))
	if err != nil {
		return s.pressFailed(ctx, p, snd, err)
	}
	u := s.user(ctx, p.ActsOn())
	text := messages.Render(u.Lang, "new_rental", platformName(in.Platform), label(in), describe(in, u.Lang), r.Name, fmtWhen(start, p.Now, u.Location(), u.Lang), chat.RawHTML(""))
	if b, err := s.store.Book(ctx, p.ActsOn()); err == nil {
		if n := view.ReuseNote(r, b.Rentals, u.Location(), p.Now, u.Lang); n != "" {
			text += "\n" + n
		}
	}
	return s.answer(ctx, p, snd, text)
}

// pressSkip: don't track the instance; it is never created again. On a
// team's ledger that is the team's choice: an admin's.
func (s *Syncer) pressSkip(ctx context.Context, p chat.ButtonPress, snd chat.Sender) error {
	if refused, err := s.adminOnly(ctx, p, snd); refused {
		return err
	}
	in, _, unlock, ok, err := s.pressed(ctx, p, snd)
	if !ok {
		return err
	}
	defer unlock()
	in.Status = ledger.PlatformDeclined
	if _, err := s.store.SavePlatformInstance(ctx, in); err != nil {
		return s.pressFailed(ctx, p, snd, err)
	}
	if err := s.store.MarkHandled(ctx, ledger.Action{UserID: p.ActsOn(), At: p.Now, Key: p.Update.Key}); err != nil && !isCode(err, ledger.EDUPLICATE) && p.Update.Key != "" {
		return fmt.Errorf("connsync: button: %w", err)
	}
	lang := s.user(ctx, p.ActsOn()).Lang
	return s.answer(ctx, p, snd, messages.Render(lang, "skipped", platformName(in.Platform), label(in)))
}

// adminOnly answers a press on a team's ledger by a member who is not an
// owner or admin of the team (refused true): what the team tracks from a
// platform (Don't track it, Log all, Ignore all) is its admins' choice.
// A press on a person's own ledger is never refused here.
func (s *Syncer) adminOnly(ctx context.Context, p chat.ButtonPress, snd chat.Sender) (refused bool, err error) {
	if !ledger.IsTeamLedger(p.ActsOn()) || ledger.Role(p.Role).Admin() {
		return false, nil
	}
	lang := chat.LangEN
	if u, err := s.store.User(ctx, p.Update.UserID); err == nil {
		lang = u.Lang
	} else if p.Lang != "" {
		lang = chat.NormLang(p.Lang)
	}
	return true, snd.AnswerCallback(ctx, p.Update.CallbackID, messages.Text(lang, "admin_only"))
}
