package bot

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// Button actions of the core. The scheduler and the platform sync
// register their own with the same chat.Buttons when they are made.
const (
	actConfirm = "pc" // confirm a proposed rental
	actEdit    = "pe" // show the /rent text of a proposal to change
	actCancel  = "px" // drop a proposal
)

// handleButtons registers the core's own actions: a proposal's choices,
// /release's "only record it", /undo's question.
func (c *Core) handleButtons() {
	proposal := c.pressed(func(r *req, p chat.ButtonPress) error { return r.proposalButton(p.Action, p.Payload) })
	c.buttons.Handle(actConfirm, proposal)
	c.buttons.Handle(actEdit, proposal)
	c.buttons.Handle(actCancel, proposal)
	c.buttons.Handle(actPlatformLog, c.pressed(func(r *req, p chat.ButtonPress) error { return platforms{r}.platformLog(p.Payload) }))
	undo := c.pressed(func(r *req, p chat.ButtonPress) error { return records{r}.undoButton(p.Action, p.Payload) })
	c.buttons.Handle(actUndo, undo)
	c.buttons.Handle(actKeep, undo)
}

// reqKey is the context key of the req a press is dispatched for.
type reqKey struct{}

// pressed adapts a handler of the core to a chat.ButtonFunc. A press runs
// as part of the req Handle made for its update (the user read, the clock
// read once), which Handle puts in the context it dispatches with; its
// error goes through r.fail like a command's (the key recorded, a refusal
// noted for /undo, the text in the user's language), except a store that
// cannot serve now: a press is not delivered again, so that one goes back
// to the router, which answers "try again" as it does for every button.
func (c *Core) pressed(fn func(r *req, p chat.ButtonPress) error) chat.ButtonFunc {
	return func(ctx context.Context, p chat.ButtonPress, _ chat.Sender) error {
		r, ok := ctx.Value(reqKey{}).(*req)
		if !ok {
			return errors.New("bot: a button of the core pressed outside Core.Handle")
		}
		err := r.usePress(p)
		if err == nil {
			err = fn(r, p)
		}
		if ledger.Transient(err) {
			return err
		}
		return r.fail(err)
	}
}

// callback handles a button press from an allowed user: the buttons
// verify it against the presser and route it to its action's owner.
func (r *req) callback() error {
	teams, err := r.teamRoles()
	if err != nil {
		return err
	}
	p := chat.ButtonPress{Update: r.u, Now: r.now, Lang: r.lang, Loc: r.loc, Teams: teams}
	return r.c.buttons.Dispatch(context.WithValue(r.ctx, reqKey{}, r), p, r.s)
}

// proposal is a command waiting for the user's choice: a /rent suggested
// from free text (Confirm / Edit / Cancel), or a command whose name matched
// nothing the user has (Use NAME / Create / Cancel, typo.go). choices[i] is
// what the i-th choice button records; shown is the command as the user
// sees it, for Edit and Cancel.
type proposal struct {
	choices []command.Command
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
func (p *proposals) add(user int64, shown string, choices []command.Command, now time.Time) string {
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
func (r talk) propose(c command.ProposedRentCmd) error {
	if r.inGroup() {
		return r.mark() // chatter in a group is not addressed to the bot
	}
	b, err := r.book()
	if err != nil {
		return err
	}
	// The rental starts when the user said it did, not when they confirm.
	rent := command.RentCmd{Name: freeName(b), Platform: c.Platform, GPU: c.GPU, GPUCount: c.GPUCount, Price: c.Price, Mode: c.Mode, At: r.at(c.At).In(r.loc)}
	if c.Price != nil {
		rent.Currency = c.Price.Currency
	}
	rent.ModeChosen = true // the proposal says what a mode against the profile means (modeNote)
	if rent.Platform == "" || rent.Price == nil {
		return r.answer(r.plain(r.t("propose_incomplete", rentCommand(rent))))
	}
	if err := r.mark(); err != nil {
		return err
	}
	id := r.c.props.add(r.u.UserID, rentCommand(rent), []command.Command{rent}, r.now)
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

func rentCommand(c command.RentCmd) string {
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
	if c.Project != "" {
		parts = append(parts, "project="+c.Project)
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
