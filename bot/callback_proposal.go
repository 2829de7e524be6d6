package bot

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// ButtonPress is a button press whose data was verified against the user
// who pressed it.
type ButtonPress struct {
	Update  Update    // the callback update (Key, UserID, ChatID, MessageID, CallbackID)
	Action  string    // the action the button was signed with
	Payload string    // its payload
	Now     time.Time // the clock, read once for this update
}

// ButtonFunc handles the presses of one action. It must answer the
// callback (Sender.AnswerCallback) and pass Update.Key to the one store
// call the press causes.
type ButtonFunc func(ctx context.Context, p ButtonPress, s Sender) error

// HandleButton registers fn for presses of buttons made with action (the
// scheduler's idle card: release, snooze, keep). Actions are 1 to 4
// characters without ':'; the core's own start with 'p'.
func (c *Core) HandleButton(action string, fn ButtonFunc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buttons[action] = fn
}

// ButtonData returns the callback data of a button for userID: only a
// press by that user will be accepted. payload is at most 42 bytes
// without ':' (a rental or order ID).
func (c *Core) ButtonData(userID int64, action, payload string) (string, error) {
	d, ok := c.sig.sign(userID, action, payload)
	if !ok {
		return "", fmt.Errorf("bot: button data for action %q, payload %q: too long or contains ':'", action, payload)
	}
	return d, nil
}

// callback handles a button press from an allowed user.
func (r *req) callback() error {
	action, payload, ok := r.c.sig.verify(r.u.UserID, r.u.CallbackData)
	if !ok {
		// Forged, altered, or made for someone else: change nothing.
		if err := r.mark(); err != nil {
			return err
		}
		r.ack(r.t("not_yours"))
		return nil
	}
	switch action {
	case actConfirm, actEdit, actCancel:
		return r.proposalButton(action, payload)
	}
	r.c.mu.RLock()
	fn := r.c.buttons[action]
	r.c.mu.RUnlock()
	if fn == nil {
		if err := r.mark(); err != nil {
			return err
		}
		r.ack(r.t("button_stale"))
		return nil
	}
	return fn(r.ctx, ButtonPress{Update: r.u, Action: action, Payload: payload, Now: r.now}, r.s)
}

// proposal is a command suggested from free text, waiting for Confirm:
// a Rent, or a Stop, Resume or Release (core_plain.go).
type proposal struct {
	cmd     Command
	expires time.Time
}

// proposals keeps pending proposals in memory: a restart loses them, and a
// press then says the proposal expired (the user sends the text again).
// That is simpler than persisting them and harmless. Safe for concurrent use.
type proposals struct {
	ttl  time.Duration
	mu   sync.Mutex
	next int64
	m    map[string]proposal // "user:id"
}

// maxProposals bounds memory: at the bound, adding one first drops
// arbitrary entries (map order) until under it; expired ones always go.
const maxProposals = 10000

func newProposals(ttl time.Duration) *proposals {
	return &proposals{ttl: ttl, m: make(map[string]proposal)}
}

func propKey(user int64, id string) string { return strconv.FormatInt(user, 10) + ":" + id }

func (p *proposals) add(user int64, cmd Command, now time.Time) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, v := range p.m {
		if !now.Before(v.expires) || len(p.m) >= maxProposals {
			delete(p.m, k)
		}
	}
	p.next++
	id := strconv.FormatInt(p.next, 36)
	p.m[propKey(user, id)] = proposal{cmd: cmd, expires: now.Add(p.ttl)}
	return id
}

// take removes and returns the user's proposal id if it has not expired.
func (p *proposals) take(user int64, id string, now time.Time) (Command, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := propKey(user, id)
	v, ok := p.m[k]
	delete(p.m, k)
	if !ok || !now.Before(v.expires) {
		return nil, false
	}
	return v.cmd, true
}

// put restores a proposal taken for a Confirm that failed.
func (p *proposals) put(user int64, id string, cmd Command, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.m[propKey(user, id)] = proposal{cmd: cmd, expires: now.Add(p.ttl)}
}

// propose answers free text that looks like a rental with the /rent it
// would record and the buttons Confirm / Edit / Cancel. Without a
// platform or a price there is nothing to confirm: the reply shows the
// command to complete instead.
func (r *req) propose(c ProposedRent) error {
	b, err := r.book()
	if err != nil {
		return err
	}
	// The rental starts when the user said it did, not when they confirm.
	rent := Rent{Name: freeName(b), Platform: c.Platform, GPU: c.GPU, GPUCount: c.GPUCount, Price: c.Price, Mode: c.Mode, At: r.at(c.At).In(r.loc)}
	if c.Price != nil {
		rent.Currency = c.Price.Currency
	}
	if rent.Platform == "" || rent.Price == nil {
		return r.answer(r.plain(r.t("propose_incomplete", rentCommand(rent))))
	}
	if err := r.mark(); err != nil {
		return err
	}
	id := r.c.props.add(r.u.UserID, rent, r.now)
	var row []Button
	for _, b := range []struct{ act, key string }{{actConfirm, "btn_confirm"}, {actEdit, "btn_edit"}, {actCancel, "btn_cancel"}} {
		d, err := r.c.ButtonData(r.u.UserID, b.act, id)
		if err != nil {
			return err
		}
		row = append(row, Button{Text: r.t(b.key), Data: d})
	}
	out := r.plain(r.t("propose", rentCommand(rent)))
	if c.PerCard != nil {
		out.Text = r.perCardLine(rent, *c.PerCard) + "\n" + out.Text
	}
	out.Buttons = [][]Button{row}
	return r.send(out)
}

// freeName suggests box1, box2, ... the first not used by an unreleased
// rental.
func freeName(b *ledger.Book) string {
	used := map[string]bool{}
	for _, x := range b.Rentals {
		if x.State() != ledger.Released {
			used[x.Name] = true
		}
	}
	for i := 1; ; i++ {
		n := "box" + strconv.Itoa(i)
		if !used[n] {
			return n
		}
	}
}

var unitToken = map[ledger.Unit]string{
	ledger.UnitSecond: "/s", ledger.UnitMinute: "/min", ledger.UnitHour: "/h",
	ledger.UnitDay: "/day", ledger.UnitWeek: "/week", ledger.UnitMonth: "/month",
}

// rentCommand writes a Rent as the /rent command that Parse reads back to
// the same Rent (to the minute, in At's zone); unknown parts are written
// as placeholders in capitals.
func rentCommand(c Rent) string {
	parts := []string{"/rent", c.Name}
	plat := c.Platform
	if plat == "" {
		plat = "PLATFORM"
	}
	parts = append(parts, plat)
	gpu := strings.ReplaceAll(c.GPU, " ", "")
	if gpu == "" {
		gpu = "GPU"
	}
	if c.GPUCount > 1 {
		gpu = strconv.Itoa(c.GPUCount) + "x" + gpu
	}
	parts = append(parts, gpu)
	if c.Price == nil {
		parts = append(parts, "PRICE/h")
	} else {
		parts = append(parts, c.Price.Amount.String()+unitToken[c.Price.Unit])
	}
	if c.Mode != "" {
		parts = append(parts, string(c.Mode))
	}
	if c.Currency != "" {
		parts = append(parts, "currency="+string(c.Currency))
	}
	if !c.At.IsZero() {
		parts = append(parts, "at", c.At.Format(commandTimeLayout))
	}
	return strings.Join(parts, " ")
}

// proposalButton confirms, edits or cancels a proposal. The message with
// the buttons is edited in place, so the buttons disappear once used.
func (r *req) proposalButton(action, id string) error {
	cmd, ok := r.c.props.take(r.u.UserID, id, r.now)
	edit := Outgoing{ChatID: r.u.ChatID, EditMessageID: r.u.MessageID}
	if !ok {
		if err := r.mark(); err != nil {
			return err
		}
		r.ack(r.t("proposal_gone"))
		edit.Text = r.t("proposal_gone")
		return r.send(edit)
	}
	switch action {
	case actCancel:
		if err := r.mark(); err != nil {
			return err
		}
		r.ack("")
		edit.Text = r.t("proposal_cancelled", proposalCommand(cmd))
		return r.send(edit)
	case actEdit:
		if err := r.mark(); err != nil {
			return err
		}
		r.ack("")
		edit.Text = r.t("proposal_edit", proposalCommand(cmd))
		return r.send(edit)
	}
	rent, isRent := cmd.(Rent)
	if !isRent {
		return r.confirmChange(id, cmd)
	}
	x, assumed := r.rental(rent)
	created, err := r.c.store.CreateRental(r.ctx, r.act(), x)
	if err != nil {
		if ledger.ErrorCode(err) != ledger.EDUPLICATE {
			r.c.props.put(r.u.UserID, id, rent, r.now)
		}
		return err
	}
	r.ack("✓")
	edit.Text = r.rentedText(created, assumed)
	return r.send(edit)
}
