package bot

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// HandleButton registers fn for presses of buttons made with action (the
// scheduler's idle card: release, snooze, keep). Actions are 1 to 4
// characters without ':'; the core's own start with 'p'.
func (c *Core) HandleButton(action string, fn chat.ButtonFunc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.buttons[action] = fn
}

// ButtonData returns the callback data of a button for userID: only a
// press by that user will be accepted. payload is at most 41 bytes and action at most 5
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
	case actPlatformLog:
		return r.platformLog(payload)
	case actUndo, actKeep:
		return r.undoButton(action, payload)
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
	return fn(r.ctx, chat.ButtonPress{Update: r.u, Action: action, Payload: payload, Now: r.now}, r.s)
}

// proposal is a command waiting for the user's choice: a /rent suggested
// from free text (Confirm / Edit / Cancel), or a command whose name matched
// nothing the user has (Use NAME / Create / Cancel, typo.go). choices[i] is
// what the i-th choice button records; shown is the command as the user
// sees it, for Edit and Cancel.
type proposal struct {
	choices []Command
	shown   string
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

// add keeps a proposal of choices and returns its ID.
func (p *proposals) add(user int64, shown string, choices []Command, now time.Time) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, v := range p.m {
		if !now.Before(v.expires) || len(p.m) >= maxProposals {
			delete(p.m, k)
		}
	}
	p.next++
	id := strconv.FormatInt(p.next, 36)
	p.m[propKey(user, id)] = proposal{choices: choices, shown: shown, expires: now.Add(p.ttl)}
	return id
}

// take removes and returns the user's proposal id if it has not expired.
func (p *proposals) take(user int64, id string, now time.Time) (proposal, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := propKey(user, id)
	v, ok := p.m[k]
	delete(p.m, k)
	if !ok || !now.Before(v.expires) {
		return proposal{}, false
	}
	return v, true
}

// put restores a proposal taken for a choice that failed.
func (p *proposals) put(user int64, id string, v proposal, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v.expires = now.Add(p.ttl)
	p.m[propKey(user, id)] = v
}

// choiceData is the payload of the button for choice i of proposal id:
// "id" for the first, "id.i" for the others.
func choiceData(id string, i int) string {
	if i == 0 {
		return id
	}
	return id + "." + strconv.Itoa(i)
}

// parseChoice splits a choice button's payload into the proposal's ID
// and the choice.
func parseChoice(payload string) (id string, i int, ok bool) {
	id, n, dotted := strings.Cut(payload, ".")
	if !dotted {
		return id, 0, id != ""
	}
	i, err := strconv.Atoi(n)
	if err != nil || i < 1 || id == "" {
		return "", 0, false
	}
	return id, i, true
}

// propose answers free text that looks like a rental with the /rent it
// would record and the buttons Confirm / Edit / Cancel. Without a
// platform or a price there is nothing to confirm: the reply shows the
// command to complete instead.
func (r *req) propose(c ProposedRentCmd) error {
	b, err := r.book()
	if err != nil {
		return err
	}
	// The rental starts when the user said it did, not when they confirm.
	rent := RentCmd{Name: freeName(b), Platform: c.Platform, GPU: c.GPU, GPUCount: c.GPUCount, Price: c.Price, Mode: c.Mode, At: r.at(c.At).In(r.loc)}
	if c.Price != nil {
		rent.Currency = c.Price.Currency
	}
	rent.modeChosen = true // the proposal says what a mode against the profile means (modeNote)
	if rent.Platform == "" || rent.Price == nil {
		return r.answer(r.plain(r.t("propose_incomplete", rentCommand(rent))))
	}
	if err := r.mark(); err != nil {
		return err
	}
	id := r.c.props.add(r.u.UserID, rentCommand(rent), []Command{rent}, r.now)
	buttons, err := r.proposalButtons(id)
	if err != nil {
		return err
	}
	out := r.plain(r.t("propose", rentCommand(rent)))
	if note := r.modeNote(rent); note != "" {
		out.Text = note + "\n" + out.Text
	}
	if c.PerCard != nil {
		out.Text = r.perCardLine(rent, *c.PerCard) + "\n" + out.Text
	}
	out.Buttons = buttons
	return r.send(out)
}

// freeName suggests box1, box2, ... the first no rental has had: a
// released rental's name is free, but a suggestion that reused it would
// leave that rental reachable only by its address.
func freeName(b *ledger.Book) string {
	used := map[string]bool{}
	for _, x := range b.Rentals {
		used[x.Name] = true
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

// rentCommand writes a RentCmd as the /rent command that Parse reads back to
// the same RentCmd (to the minute, in At's zone); unknown parts are written
// as placeholders in capitals.
// gpuWord writes a model as one word the parser reads back: a space
// goes ("RTX4090"), except between two digits, where it becomes a dash
// ("A100-80GB", not "A10080GB").
func gpuWord(model string) string {
	var b strings.Builder
	for i := 0; i < len(model); i++ {
		if model[i] != ' ' {
			b.WriteByte(model[i])
			continue
		}
		if i > 0 && i+1 < len(model) && isDigit(model[i-1]) && isDigit(model[i+1]) {
			b.WriteByte('-')
		}
	}
	return b.String()
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func rentCommand(c RentCmd) string {
	parts := []string{"/rent", c.Name}
	plat := c.Platform
	if plat == "" {
		plat = "PLATFORM"
	}
	parts = append(parts, plat)
	gpu := gpuWord(c.GPU)
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

// proposalButton runs a choice of a proposal, or shows its command to
// edit, or cancels it. The message with the buttons is edited in place, so
// the buttons disappear once used. The choice runs as the command it
// carries, with the press's key, so it applies once and /undo takes it
// back like any command; the checks that asked the question are not made
// again (r.confirmed).
func (r *req) proposalButton(action, payload string) error {
	id, choice, okData := parseChoice(payload)
	p, ok := r.c.props.take(r.u.UserID, id, r.now)
	edit := chat.Outgoing{ChatID: r.u.ChatID, EditMessageID: r.u.MessageID}
	if !ok || !okData || choice >= len(p.choices) {
		if ok {
			r.c.props.put(r.u.UserID, id, p, r.now)
		}
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
		edit.Text = r.t("proposal_cancelled", p.shown)
		return r.send(edit)
	case actEdit:
		if err := r.mark(); err != nil {
			return err
		}
		r.ack("")
		edit.Text = r.t("proposal_edit", p.shown)
		return r.send(edit)
	}
	r.confirmed, r.editID = true, r.u.MessageID
	if err := r.dispatch(p.choices[choice]); err != nil {
		if ledger.ErrorCode(err) != ledger.EDUPLICATE {
			r.c.props.put(r.u.UserID, id, p, r.now)
		}
		r.editID = 0
		return err
	}
	if r.editID != 0 { // answered without a reply to edit in
		r.ack("✓")
	}
	return nil
}
