package scheduler

import (
	"context"
	"strconv"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// The receipt card: what a rental delivered, from the first bench its
// agent sent (ledger.BenchReported), in the first minutes of the rental,
// and one line more when the rental first works (ledger.WorkStarted): the
// setup tax. The bench is the agent's claim: the card shows it, and
// nothing here acts on it; its Release now is the idle card's own button
// (ActRelease: the agent's order or the platform's stop, with their
// checks), never a way of its own.

// ActReceiptKeep is the receipt card's Keep: the card stays as it is,
// says so, and loses its buttons. The payload is the rental ID.
const ActReceiptKeep = "rk"

// receiptIncident is the one incident of a rental's receipt card: a
// rental gets one card, from its first bench.
const receiptIncident = "first"

// receiptButtons are the card's [Keep] [Release now (¥0.03 so far)].
func receiptButtons(lg string, rc ledger.Receipt) [][]button {
	rel := text(lg, "btn_release_now")
	if rc.Priced {
		rel = view.ReceiptReleaseButton(lg, rc.SoFar)
	}
	return [][]button{{{text(lg, "btn_keep"), ActReceiptKeep, rc.Rental.ID}, {rel, ActRelease, rc.Rental.ID}}}
}

// receipt builds rental r's receipt as of now from the store: the book
// (the engine's money), its benches and its first work as stored (work,
// the event's, when the store has none). A bench given (the event's)
// stands in for the stored ones when the store has none yet.
func (s *Scheduler) receipt(ctx context.Context, r *ledger.Rental, bench *ledger.BenchRecord, work time.Time) (ledger.Receipt, error) {
	b, err := s.store.Book(ctx, r.UserID)
	if err != nil {
		return ledger.Receipt{}, err
	}
	in := ledger.ReceiptInput{Book: b, Rental: r, Now: s.now()}
	if x := pick(b.Rentals, r.ID); x != nil {
		in.Rental = x // the book's, with the events since the hub read it
	}
	if in.Benches, err = s.store.Benches(ctx, r.UserID, r.ID); err != nil {
		return ledger.Receipt{}, err
	}
	if len(in.Benches) == 0 && bench != nil {
		in.Benches = []ledger.BenchRecord{*bench}
	}
	fw, err := s.store.FirstWorks(ctx, r.UserID)
	if err != nil {
		return ledger.Receipt{}, err
	}
	in.FirstWork = work
	if t, ok := fw[r.ID]; ok && !t.IsZero() {
		in.FirstWork = t
	}
	return ledger.BuildReceipt(in), nil
}

// benchReported sends the receipt card of rental r's first bench to its
// owner: once per rental, not when they turned receipts off
// (Settings.BenchOff) nor for a released rental, held by quiet hours like
// the other routine cards.
func (s *Scheduler) benchReported(ctx context.Context, r *ledger.Rental, rec ledger.BenchRecord) error {
	defer s.lockRental(r.ID)()
	u, err := s.store.User(ctx, r.UserID)
	if err != nil {
		return err
	}
	if u.Settings.BenchOff || r.State() == ledger.Released {
		return nil
	}
	c, seen, err := s.cardFor(ctx, &u, r, ledger.CardReceipt, receiptIncident)
	if err != nil || seen {
		return err
	}
	rc, err := s.receipt(ctx, r, &rec, time.Time{})
	if err != nil {
		return err
	}
	if rc.Bench == nil {
		return nil
	}
	lg := lang(&u)
	name := s.label(ctx, &u, r)
	msg := view.ReceiptCard(lg, rc, name)
	if rc.SetupTax != nil {
		// The rental worked before its bench came (the agent benches
		// only a free GPU): the card carries the follow-up's line, and
		// no line follows it.
		if _, err := s.store.MarkNotice(ctx, u.ID, workStartedKey(r.ID), s.now()); err != nil {
			return err
		}
		msg += "\n" + view.ReceiptFollowUp(lg, name, *rc.SetupTax, u.Location())
	}
	return s.sendCard(ctx, &u, &c, msg, receiptButtons(lg, rc), true, false)
}

// workStartedKey is the notice of rental id's follow-up line: once.
func workStartedKey(id int64) string { return "workstarted:" + strconv.FormatInt(id, 10) }

// workStarted tells the owner of a rental that had a receipt card when it
// first worked, and what the time before cost: "box1 started working at
// 14:31: ¥4.10 before training started (31m)". Once per rental (a
// notice); a card still held by quiet hours takes the line instead.
func (s *Scheduler) workStarted(ctx context.Context, r *ledger.Rental, at time.Time) error {
	defer s.lockRental(r.ID)()
	c, ok, err := s.openCard(ctx, r.ID, ledger.CardReceipt)
	if err != nil || !ok {
		return err
	}
	u, err := s.store.User(ctx, r.UserID)
	if err != nil {
		return err
	}
	rc, err := s.receipt(ctx, r, nil, at)
	if err != nil || rc.SetupTax == nil {
		return err // no setup tax: work seen before the rental's start
	}
	key := workStartedKey(r.ID)
	fresh, err := s.store.MarkNotice(ctx, u.ID, key, s.now())
	if err != nil || !fresh {
		return err
	}
	line := view.ReceiptFollowUp(lang(&u), s.label(ctx, &u, r), *rc.SetupTax, u.Location())
	if c.Pending {
		c.Text += "\n" + line
		_, err := s.store.SaveCard(ctx, c)
		return err
	}
	if err := s.notifyText(ctx, &u, line); err != nil {
		if uerr := s.store.UnmarkNotice(ctx, key); uerr != nil {
			s.log.Error("scheduler: unmark the follow-up's notice", "rental", r.ID, "err", uerr)
		}
		return err
	}
	return nil
}

// KeepReceipt is the receipt card's Keep: the card says the rental is
// kept and loses its buttons. Errors: ENOTFOUND.
func (s *Scheduler) KeepReceipt(ctx context.Context, userID, rentalID int64, messageID int) (string, error) {
	defer s.lockRental(rentalID)()
	r, u, err := s.ownRental(ctx, userID, rentalID)
	if err != nil {
		return "", err
	}
	lg := lang(u)
	c, err := s.store.CardByMessage(ctx, userID, messageID)
	if err != nil || c.RentalID != rentalID || c.Kind != ledger.CardReceipt {
		var ok bool
		if c, ok, err = s.openCard(ctx, rentalID, ledger.CardReceipt); err != nil {
			return "", err
		} else if !ok {
			return text(lg, "t_ok"), nil
		}
	}
	if c.Kept || c.Closed {
		return text(lg, "t_kept", r.Name), nil
	}
	c.Kept, c.Closed = true, true
	s.decide(ctx, u, r, ledger.DecisionUser, ledger.Msg("d_keep_pressed"), ledger.Msg("e_card", c.Kind))
	if err := s.sendCard(ctx, u, &c, c.Text+"\n"+view.ReceiptKept(lg), nil, false, false); err != nil {
		return "", err
	}
	return text(lg, "t_kept", r.Name), nil
}

// receiptButtonsNow are the buttons of r's receipt card as it is sent
// late (quiet hours over), with the money so far of now.
func (s *Scheduler) receiptButtonsNow(ctx context.Context, lg string, r *ledger.Rental) [][]button {
	rc, err := s.receipt(ctx, r, nil, time.Time{})
	if err != nil {
		s.log.Error("scheduler: the receipt card's buttons", "rental", r.ID, "err", err)
		rc = ledger.Receipt{Rental: r}
	}
	return receiptButtons(lg, rc)
}
