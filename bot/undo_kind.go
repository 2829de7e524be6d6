package bot

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// undoKindKey is the catalog key of the words for an undone action of
// kind k ("undo_kind_rent"): derived from the ledger's kind, so a new kind
// needs only its catalog entry, which TestUndoKinds_Catalog demands.
func undoKindKey(k ledger.ActionKind) string { return "undo_kind_" + string(k) }

// UndoAskAfter is how old a change may be for /undo to reverse it without
// asking first. A few minutes cover "oops, undo that"; a change older
// than that is easily not the one the user has in mind (the stop of an
// hour ago, beneath everything said since), and undoing the wrong one can
// cost money (a stopped pod billing again), so the user confirms.
const UndoAskAfter = 5 * time.Minute

// Button actions of /undo's question: both carry the journal entry the
// question named, so a press undoes that entry or nothing.
const (
	actUndo = "pu" // [Undo it]
	actKeep = "pk" // [Keep it]
)

// turns remembers, per user, whether their last message was refused, for
// /undo's question. The journal keeps it too (a refused message is
// journaled as ActionRefused, with the update's key where it has one), so
// a restart loses nothing that matters: after one, the journal decides.
// Memory still comes first because the terminal's questions (/status)
// have no key and are not journaled: after "refused, /status", the
// journal's latest entry is the refusal, but the message just before
// /undo was not refused.
type turns struct {
	mu      sync.Mutex
	refused map[int64]bool
}

// maxTurns bounds the memory: past it the map starts again empty (the
// journal answers for the users forgotten).
const maxTurns = 10000

func (t *turns) set(user int64, refused bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.refused == nil || len(t.refused) >= maxTurns {
		t.refused = make(map[int64]bool)
	}
	t.refused[user] = refused
}

func (t *turns) get(user int64) (refused, known bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	refused, known = t.refused[user]
	return refused, known
}

// noUndo reports whether an accepted cmd changed something that /undo
// cannot reverse (an automatic-action policy, a platform connection,
// agent tokens): the journal is told, so that /undo asks before reversing
// a change beneath it. Questions and journaled changes (a budget is a
// settings change) are not such commands.
func noUndo(cmd command.Command) bool {
	switch cmd.(type) {
	case command.AutoReleaseCmd, command.ConnectCmd, command.DisconnectCmd, command.AgentCmd, command.AgentEnrolCmd, command.AgentRevokeCmd:
		return true
	}
	return false
}

// noteNoUndo journals that the user's accepted command changed something
// /undo cannot reverse. Without the update's key: the command's handler
// may have recorded it already. A failure is logged: the change stands,
// and the worst is an /undo that does not ask.
func (r *req) noteNoUndo() {
	a := r.act()
	a.Key = ""
	if err := r.c.store.Note(r.ctx, a, ledger.ActionNoUndo); err != nil {
		r.c.log.Error("bot: journal a change that cannot be undone", "user", r.u.UserID, "err", err)
	}
}

// undo answers /undo. It reverses the user's last change at once when
// that is plainly what they mean: the change came from their last
// accepted command (typed, not a button, the sync, an agent or the
// scheduler), it is at most UndoAskAfter old, and their message just
// before was not refused. Otherwise it names the change and asks, with
// [Undo it] [Keep it] buttons that carry the change's journal entry.
// Either way the reply says what was (or would be) undone and when.
func (r records) undo(command.UndoCmd) error {
	next, err := r.c.store.NextUndoBy(r.ctx, r.ledgerID, r.act().By)
	if err != nil {
		return err
	}
	why := r.undoReasons(next)
	if len(why) == 0 {
		return r.undoNow(next.ID)
	}
	id := strconv.FormatInt(next.ID, 10)
	yes, err := r.sign(actUndo, id)
	if err != nil {
		return err
	}
	no, err := r.sign(actKeep, id)
	if err != nil {
		return err
	}
	out := r.plain(r.t("undo_ask", chat.RawHTML(r.undoWhat(next.Kind, r.labelByID(next.RentalID, next.Name))), r.when(next.At), r.ago(next.At),
		chat.RawHTML("· "+strings.Join(why, "\n· "))))
	out.Buttons = [][]chat.Button{{{Text: r.t("undo_yes"), Data: yes}, {Text: r.t("undo_no"), Data: no}}}
	return r.answer(out)
}

// undoReasons are the lines that say why /undo asks before reversing
// next; none when it need not ask.
func (r records) undoReasons(next ledger.UndoNext) []string {
	var why []string
	refused, known := r.c.turns.get(r.u.UserID)
	if !known {
		refused = next.AfterRefusal
	}
	if refused {
		why = append(why, r.t("undo_why_refused"))
	}
	switch {
	case next.Via == ledger.ViaButton:
		why = append(why, r.t("undo_why_button"))
	case next.Via != ledger.ViaCommand && next.Kind == ledger.ActionSync:
		why = append(why, r.t("undo_why_sync"))
	case next.Via != ledger.ViaCommand:
		why = append(why, r.t("undo_why_other"))
	case !next.Last:
		why = append(why, r.t("undo_why_later"))
	}
	if r.now.Sub(next.At) > UndoAskAfter {
		why = append(why, r.t("undo_why_old", strconv.Itoa(int(UndoAskAfter/time.Minute))))
	}
	return why
}

// undoWhat names an action for a reply: its kind's words and the rental
// or volume it touched ("stop t1").
func (r records) undoWhat(k ledger.ActionKind, name string) string {
	what := r.t(undoKindKey(k))
	if strings.HasPrefix(what, undoKindKey("")) {
		what = string(k)
	}
	if name != "" {
		what += " " + chat.Escape(name)
	}
	return what
}

// ago says how long before the request t was: "just now", "12 min ago",
// "2h05m ago".
func (r records) ago(t time.Time) string {
	d := r.now.Sub(t)
	switch {
	case d < time.Minute:
		return r.t("undo_ago_now")
	case d < time.Hour:
		return r.t("undo_ago_min", strconv.Itoa(int(d/time.Minute)))
	}
	return r.t("undo_ago", chat.FormatDuration(d, r.lang))
}

// undoButton handles [Undo it] and [Keep it] of /undo's question: the
// question is edited into the outcome. [Undo it] undoes the entry it
// carries only while that is still what /undo would reverse: a stale
// button, or a second press, undoes nothing and says so.
func (r records) undoButton(action, payload string) error {
	id, err := strconv.ParseInt(payload, 10, 64)
	if err != nil || id <= 0 {
		if err := r.mark(); err != nil {
			return err
		}
		r.ack(r.t("button_stale"))
		return nil
	}
	r.editID = r.u.MessageID
	if action == actKeep {
		if err := r.mark(); err != nil {
			return err
		}
		text := r.t("undo_kept_any")
		if next, err := r.c.store.NextUndoBy(r.ctx, r.ledgerID, r.act().By); err == nil && next.ID == id {
			text = r.t("undo_kept", chat.RawHTML(r.undoWhat(next.Kind, r.labelByID(next.RentalID, next.Name))))
		}
		return r.send(r.plain(text))
	}
	err = r.undoNow(id)
	var le *ledger.Error
	if !errors.As(err, &le) || le.Key != "undo_done" && le.Key != "undo_stale" || len(le.Args) != 2 {
		return err
	}
	r.failed = true
	if err := r.mark(); err != nil {
		return err
	}
	kind, _ := le.Args[0].(ledger.ActionKind)
	name, _ := le.Args[1].(string)
	return r.send(r.plain(r.t(le.Key+"_press", chat.RawHTML(r.undoWhat(kind, name)))))
}

// undoNow reverses journal entry id and says what was undone, when it
// was recorded, and what is true now.
//
// Undoing a release makes the rental live again in the ledger, but its
// agent token stays revoked (un-revoking a token is unsafe: it may have
// leaked with the released host), so the reply says to issue a new one.
// Undoing a Log or a Not mine of an announced instance makes it wait for
// an answer again: the reply gives its /adopt line, and a fresh card of
// it follows (Config.InstanceCards).
func (r records) undoNow(id int64) error {
	res, err := r.c.store.UndoAction(r.ctx, r.act(), id)
	if err != nil {
		return err
	}
	b, err := r.book()
	if err != nil {
		r.c.log.Error("bot: read the ledger after an undo", "user", r.u.UserID, "err", err)
	}
	var x *ledger.Rental
	if b != nil && res.RentalID != 0 {
		for _, y := range b.Rentals {
			if y.ID == res.RentalID {
				x = y
			}
		}
	}
	// A rental whose name another has too is named by its address.
	name := res.Name
	if x != nil && res.Name == x.Name {
		name = r.label(x)
	}
	text := r.t("undone", chat.RawHTML(r.undoWhat(res.Kind, name)), r.when(res.At), r.ago(res.At))
	if b != nil {
		if line := r.undoneNow(res, b, x); line != "" {
			text += "\n" + line
		}
	}
	switch res.Kind {
	case ledger.ActionStop, ledger.ActionResume, ledger.ActionRelease:
		r.rentalChanged(x)
		if res.Kind == ledger.ActionRelease && r.c.agents != nil && x != nil && (agents{r.req}).hadToken(x) {
			text += "\n" + r.t("undo_release_token", name)
		}
	case ledger.ActionSync:
		// The instance is declined in the same transaction: the sync
		// leaves it alone from now on.
		text += "\n" + r.t("undo_sync", name)
	}
	var card chat.Outgoing
	show := false
	if res.Instance != 0 && r.c.enrol != nil {
		// The instance waits for an answer again, and its card lost its
		// buttons to the answer: the reply gives the way back, and a
		// fresh card follows it.
		var line string
		line, card, show = r.undoneInstance(res.Instance)
		if line != "" {
			text += "\n" + line
		}
	}
	if err := r.send(r.plain(text)); err != nil || !show {
		return err
	}
	return r.send(card)
}

// undoneNow says what is true after the undo of res: the state and rate
// of the rental it touched (x, nil when it is gone), the size of the
// volume, or that a record no longer counts.
func (r records) undoneNow(res ledger.UndoResult, b *ledger.Book, x *ledger.Rental) string {
	switch res.Kind {
	case ledger.ActionSettings:
		return r.t("undo_now_settings")
	case ledger.ActionCharge, ledger.ActionTopUp, ledger.ActionBalance, ledger.ActionTrafficUsage:
		return r.t("undo_now_record")
	case ledger.ActionStorage, ledger.ActionStorageResize, ledger.ActionStorageDelete, ledger.ActionStoragePrice:
		for _, v := range b.Volumes {
			if v.ID != res.VolumeID {
				continue
			}
			if _, gone := v.Deleted(); gone {
				return r.t("undo_now_volume_deleted", v.Name)
			}
			return r.t("undo_now_volume", v.Name, v.SizeGB().String())
		}
		return r.t("undo_now_volume_gone", res.Name)
	case ledger.ActionRent, ledger.ActionStop, ledger.ActionResume, ledger.ActionRelease, ledger.ActionPrice,
		ledger.ActionTraffic, ledger.ActionSync, ledger.ActionAdopt:
		if res.RentalID == 0 {
			return ""
		}
		if x == nil {
			return r.t("undo_now_gone", res.Name)
		}
		name := r.label(x)
		switch x.State() {
		case ledger.Released:
			return r.t("undo_now_released", name)
		case ledger.Stopped:
			return r.t("undo_now_stopped", name)
		}
		p, priced := x.Price, x.Priced
		for _, ev := range x.Events {
			if ev.Kind == ledger.EventPrice && !ev.At.After(r.now) {
				p, priced = ev.Price, true
			}
		}
		if !priced {
			return r.t("undo_now_running_unpriced", name)
		}
		return r.t("undo_now_running", name, view.FormatPrice(p, x.Currency, r.lang))
	}
	return r.t("undo_now_restored")
}
