package console_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/bot/console"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
	"github.com/gpuledger/gpuledger/scheduler"
	"github.com/gpuledger/gpuledger/view"
)

// scriptHandler is a small stand-in for the core: it proposes a rental
// with buttons, edits the card on a press, exports a file, and fails on
// "boom".
type scriptHandler struct {
	got []chat.Update
}

func (h *scriptHandler) Handle(ctx context.Context, u chat.Update, s chat.Sender) error {
	h.got = append(h.got, u)
	switch {
	case u.Kind == chat.KindCallback:
		if err := s.AnswerCallback(ctx, u.CallbackID, "OK"); err != nil {
			return err
		}
		_, err := s.Send(ctx, chat.Outgoing{ChatID: u.ChatID, EditMessageID: u.MessageID, Text: "✓ <b>box1</b> " + u.CallbackData})
		return err
	case u.Text == "rented 4090":
		_, err := s.Send(ctx, chat.Outgoing{ChatID: u.ChatID, Text: "Rent <b>box1</b> &lt;autodl&gt; 4090 at ¥1.88/h?",
			Buttons: [][]chat.Button{{{Text: "Confirm", Data: "confirmed"}, {Text: "Edit", Data: "edit"}}, {{Text: "Cancel", Data: "cancelled"}}}})
		return err
	case u.Text == "/export":
		_, err := s.Send(ctx, chat.Outgoing{ChatID: u.ChatID, Text: "<i>ledger</i>", Document: &chat.File{Name: "../../ledger.csv", Data: []byte("a,b\n")}})
		return err
	case u.Text == "boom":
		return errors.New("database is locked")
	}
	_, err := s.Send(ctx, chat.Outgoing{ChatID: u.ChatID, Text: "echo: " + u.Text})
	return err
}

func TestConsole_Script(t *testing.T) {
	dir := t.TempDir()
	in := strings.Join([]string{
		"rented 4090",
		"",
		"2",
		"/export",
		"/export",
		"9", // never a button's number: plain text
		"1", // its message lost its buttons when edited: a note, no handler
		"boom",
		"after\r",
	}, "\n")
	var out bytes.Buffer
	h := &scriptHandler{}
	c, err := console.New(console.Config{In: strings.NewReader(in), Out: &out, Handler: h, Dir: dir, Logger: discard(), FirstMessageID: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatalf("Run = %v at end of input, want nil", err)
	}
	want := strings.Join([]string{
		"Rent box1 <autodl> 4090 at ¥1.88/h?",
		"[1] Confirm  [2] Edit  [3] Cancel",
		"» OK",
		"(updated) ✓ box1 edit",
		"[document saved: " + filepath.Join(dir, "ledger.csv") + "]",
		"ledger",
		"[document saved: " + filepath.Join(dir, "ledger-1.csv") + "]",
		"ledger",
		"echo: 9",
		"! [1] no longer works: its message has changed or is older than the last 100 with buttons. Send the command again for new ones.",
		"! could not handle that: database is locked",
		"echo: after",
		"",
	}, "\n")
	if got := out.String(); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
	press := h.got[1]
	if press.Kind != chat.KindCallback || press.CallbackData != "edit" || press.UserID != 1 || press.ChatID != 1 || press.MessageID != 1 || press.Key != "" {
		t.Errorf("press = %+v", press)
	}
	if h.got[0].Kind != chat.KindText || h.got[0].ChatType != chat.ChatPrivate || h.got[4].Kind != chat.KindText || h.got[4].Text != "9" || len(h.got) != 7 {
		t.Errorf("updates = %+v", h.got)
	}
	data, err := os.ReadFile(filepath.Join(dir, "ledger.csv"))
	if err != nil || string(data) != "a,b\n" {
		t.Errorf("saved file: %q, %v", data, err)
	}
}

// TestConsole_StopsOnCancel checks that Run returns when ctx ends even
// while waiting for input that never comes.
func TestConsole_StopsOnCancel(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	c, err := console.New(console.Config{In: r, Out: io.Discard, Handler: &scriptHandler{}, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

func TestPlainText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"<b>box1</b> started", "box1 started"},
		{"a &lt;b&gt; &amp; &quot;c&quot;", `a <b> & "c"`},
		{`<a href="https://x">link</a>`, "link"},
		{"<pre>line1\nline2</pre>\n", "line1\nline2"},
	}
	for _, tc := range tests {
		if got := console.PlainText(tc.in); got != tc.want {
			t.Errorf("PlainText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestNew_NoHandler(t *testing.T) {
	if _, err := console.New(console.Config{}); err == nil {
		t.Error("no error without a handler")
	}
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// TestConsole_CoreChoice drives the real core over a SQLite file: a typo's
// question comes with numbered choices, and typing a number records the
// choice.
func TestConsole_CoreChoice(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ledger.db"), sqlite.WithLogger(discard()))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	core, err := bot.New(ctx, bot.Config{Store: db, Owner: 1, TZ: "Asia/Shanghai", Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	in := strings.Join([]string{"/topup autdl 100", "1", "/charge nosuch 5 fee", "5"}, "\n")
	got := runLines(t, core, in)
	for _, want := range []string{
		"Did you mean autodl?",
		"[1] ✓ Use autodl  [2] ＋ Create autdl as a new platform  [3] ✗ Cancel",
		"(updated) ✓ top-up ¥100.00 on autodl recorded",
		"[4] ＋ Create nosuch as a new name  [5] ✗ Cancel",
		"(updated) ✗ Cancelled, nothing recorded: /charge nosuch 5 fee",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	b, err := db.Book(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.TopUps) != 1 || b.TopUps[0].Platform != "autodl" || len(b.Charges) != 0 {
		t.Errorf("top-ups %+v, charges %+v", b.TopUps, b.Charges)
	}
}

// runLines types in, one message a line, into a terminal chat with core
// and returns all it printed.
func runLines(t *testing.T, core *bot.Core, in string) string {
	t.Helper()
	var out bytes.Buffer
	c, err := console.New(console.Config{In: strings.NewReader(in), Out: &out, Handler: core, Dir: t.TempDir(), Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// newCore opens a SQLite file in t.TempDir and the real core over it.
func newCore(t *testing.T, now func() time.Time) (*sqlite.DB, *bot.Core) {
	t.Helper()
	db, core, _ := newCoreButtons(t, now)
	return db, core
}

// newCoreButtons is newCore that also returns the buttons the core was
// made with, for the scheduler to register its cards' actions with, as
// the server shares them.
func newCoreButtons(t *testing.T, now func() time.Time) (*sqlite.DB, *bot.Core, *chat.Buttons) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ledger.db"), sqlite.WithLogger(discard()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if now != nil {
		db.Now = now
	}
	btn := chat.NewButtons([]byte("console-test-button-secret-32byt"), view.ButtonErrors(discard()))
	core, err := bot.New(ctx, bot.Config{Store: db, Owner: 1, TZ: "Asia/Shanghai", Now: now, Logger: discard(), Buttons: btn})
	if err != nil {
		t.Fatal(err)
	}
	return db, core, btn
}

// TestConsole_OlderButtonsStayUsable: two proposals in a row, each with
// its own numbers; pressing the first one's Confirm after the second
// arrived records the first, and the second's buttons still work.
func TestConsole_OlderButtonsStayUsable(t *testing.T) {
	ctx := context.Background()
	db, core := newCore(t, nil)
	in := strings.Join([]string{
		"rented 2x4090 on vast at $0.70/h",
		"rented 4090 on autodl at 1.88/h",
		"1", // the first proposal's Confirm
		"1", // again: that message has no buttons any more
		"6", // the second proposal's Cancel
	}, "\n")
	got := runLines(t, core, in)
	for _, want := range []string{
		"[1] ✓ Confirm  [2] ✎ Edit  [3] ✗ Cancel",
		"[4] ✓ Confirm  [5] ✎ Edit  [6] ✗ Cancel",
		"vast 2×RTX 4090, $0.70/h",
		"[1] no longer works",
		"✗ Cancelled",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	b, err := db.Book(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Rentals) != 1 || b.Rentals[0].Platform != "vast" || b.Rentals[0].GPUCount != 2 {
		t.Fatalf("rentals = %+v, want only the first proposal's (vast, 2 cards)", b.Rentals)
	}
}

// stepClock is a settable clock shared by the core, the store and the
// scheduler.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *stepClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// stepHandler tells when each line has been handled, so a test can let
// the scheduler send between two lines.
type stepHandler struct {
	h    chat.Handler
	done chan struct{}
}

func (s stepHandler) Handle(ctx context.Context, u chat.Update, snd chat.Sender) error {
	defer func() { s.done <- struct{}{} }()
	return s.h.Handle(ctx, u, snd)
}

// lockedBuffer is the console's output, read while the scheduler writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// cardEnv is the real core and the real scheduler over a SQLite file,
// both talking through one console fed line by line.
type cardEnv struct {
	t    *testing.T
	ctx  context.Context
	clk  *stepClock
	db   *sqlite.DB
	sch  *scheduler.Scheduler
	out  *lockedBuffer
	w    *io.PipeWriter
	step stepHandler
	ran  chan error
}

func newCardEnv(t *testing.T) *cardEnv {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e := &cardEnv{t: t, ctx: ctx, clk: &stepClock{t: time.Date(2026, 11, 2, 2, 0, 0, 0, time.UTC)}, out: &lockedBuffer{}, ran: make(chan error, 1)}
	var core *bot.Core
	var btn *chat.Buttons
	e.db, core, btn = newCoreButtons(t, e.clk.Now)
	r, w := io.Pipe()
	t.Cleanup(func() { w.Close() })
	e.w = w
	e.step = stepHandler{h: core, done: make(chan struct{}, 16)} // buffered: a line handled unexpectedly cannot block Run
	c, err := console.New(console.Config{In: r, Out: e.out, Handler: e.step, Dir: t.TempDir(), Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	e.sch, err = scheduler.New(scheduler.Config{Store: e.db, Sender: c, Buttons: btn, Now: e.clk.Now, Logger: discard(), NoChart: true})
	if err != nil {
		t.Fatal(err)
	}
	go func() { e.ran <- c.Run(ctx) }()
	return e
}

// say types a line and waits until the core has handled it.
func (e *cardEnv) say(line string) {
	e.t.Helper()
	if _, err := io.WriteString(e.w, line+"\n"); err != nil {
		e.t.Fatal(err)
	}
	select {
	case <-e.step.done:
	case <-time.After(10 * time.Second):
		e.t.Fatalf("%q was not handled; output:\n%s", line, e.out.String())
	}
}

// end closes the input and returns the whole output.
func (e *cardEnv) end() string {
	e.t.Helper()
	e.w.Close()
	if err := <-e.ran; err != nil {
		e.t.Fatal(err)
	}
	return e.out.String()
}

func (e *cardEnv) checks() {
	e.t.Helper()
	if err := e.sch.Checks(e.ctx); err != nil {
		e.t.Fatal(err)
	}
}

// states returns each rental's state by name.
func (e *cardEnv) states() map[string]string {
	e.t.Helper()
	b, err := e.db.Book(e.ctx, 1)
	if err != nil {
		e.t.Fatal(err)
	}
	states := map[string]string{}
	for _, r := range b.Rentals {
		states[r.Name] = string(r.State())
	}
	return states
}

// TestConsole_SchedulerCards drives the real core and the real scheduler
// over a SQLite file through one console: the scheduler's cards arrive
// between the user's lines and take the next numbers, and their buttons
// ("I released it", Keep) still work after later messages arrived.
func TestConsole_SchedulerCards(t *testing.T) {
	e := newCardEnv(t)
	say, clk, out := e.say, e.clk, e.out
	say("/rent box1 autodl 4090 1.88/h")
	say("/rent box2 autodl 4090 1.88/h")
	clk.Add(13 * time.Hour)
	e.checks()                              // two long-run cards, between lines
	say("rented 2x4090 on vast at $0.70/h") // a proposal after the cards
	got := out.String()
	for _, want := range []string{
		"box1 has been running 13h",
		"[1] I released it  [2] Keep",
		"[3] I released it  [4] Keep",
		"[5] ✓ Confirm  [6] ✎ Edit  [7] ✗ Cancel",
	} {
		if !strings.Contains(got, want) {
			t.Fatalf("output lacks %q:\n%s", want, got)
		}
	}
	say("1") // box1's I released it
	say("4") // box2's Keep
	say("7") // the proposal's Cancel
	got = e.end()
	for _, want := range []string{
		"» ✓ box1 released",
		"(updated) box2 has been running 13h (¥24.44 so far) and has no agent watching it. Still using it?\nKept: no more reminders about this.",
		"» Kept box2",
		"(updated) ✗ Cancelled",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if states := e.states(); len(states) != 2 || states["box1"] != "released" || states["box2"] != "running" {
		t.Errorf("rentals = %v, want box1 released, box2 running", states)
	}
}

// TestConsole_KeepsLastMessagesButtons: the buttons of the last
// KeptMessages messages stay pressable; an older message's number says it
// no longer works and reaches no handler.
func TestConsole_KeepsLastMessagesButtons(t *testing.T) {
	lines := make([]string, 0, console.KeptMessages+3)
	for range console.KeptMessages + 1 {
		lines = append(lines, "rented 4090") // three buttons each
	}
	lines = append(lines, "1", "4") // the first message's Confirm, the second's
	var out bytes.Buffer
	h := &scriptHandler{}
	c, err := console.New(console.Config{In: strings.NewReader(strings.Join(lines, "\n")), Out: &out, Handler: h, Dir: t.TempDir(), Logger: discard(), FirstMessageID: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	last := 3 * (console.KeptMessages + 1)
	for _, want := range []string{
		"[4] Confirm  [5] Edit  [6] Cancel\n",
		fmt.Sprintf("[%d] Confirm  [%d] Edit  [%d] Cancel\n", last-2, last-1, last),
		"! [1] no longer works",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if len(h.got) != console.KeptMessages+2 {
		t.Fatalf("%d updates handled, want %d", len(h.got), console.KeptMessages+2)
	}
	press := h.got[len(h.got)-1]
	if press.Kind != chat.KindCallback || press.CallbackData != "confirmed" || press.MessageID != 2 {
		t.Errorf("press of [4] = %+v, want the second message's Confirm", press)
	}
}

// TestConsole_EarlierRunsCardEdit: the scheduler keeps a card's message ID
// in the database and may edit the card after a restart. Message IDs do
// not repeat across runs, so that edit leaves the new run's buttons alone.
func TestConsole_EarlierRunsCardEdit(t *testing.T) {
	ctx := context.Background()
	card := chat.Outgoing{ChatID: 1, Text: "box1 has been running 13h", Buttons: [][]chat.Button{{{Text: "I released it", Data: "released"}}}}
	first, err := console.New(console.Config{In: strings.NewReader(""), Out: io.Discard, Handler: &scriptHandler{}, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	old, err := first.Send(ctx, card)
	if err != nil {
		t.Fatal(err)
	}
	// The next run starts later: wait for the clock to move on.
	for start := time.Now(); time.Since(start) < 2*time.Millisecond; {
	}
	r, w := io.Pipe()
	var out lockedBuffer
	h := &scriptHandler{}
	step := stepHandler{h: h, done: make(chan struct{}, 2)}
	second, err := console.New(console.Config{In: r, Out: &out, Handler: step, Dir: t.TempDir(), Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan error, 1)
	go func() { ran <- second.Run(ctx) }()
	io.WriteString(w, "rented 4090\n")
	<-step.done
	if _, err := second.Send(ctx, chat.Outgoing{ChatID: 1, EditMessageID: old, Text: "box1 released at 23:00 (recorded by hand)."}); err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, "1\n")
	w.Close()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if len(h.got) != 2 || h.got[1].Kind != chat.KindCallback || h.got[1].CallbackData != "confirmed" {
		t.Errorf("updates = %+v, want the new run's Confirm pressed; output:\n%s", h.got, out.String())
	}
}

// TestConsole_LeaseCard: a lease card's buttons through the console,
// pressed after a later message: Extend extends the lease and closes the
// card, whose numbers then say they no longer work.
func TestConsole_LeaseCard(t *testing.T) {
	e := newCardEnv(t)
	e.say("/rent box1 autodl 4090 1.88/h for=3h")
	e.clk.Add(2*time.Hour + 40*time.Minute)
	e.checks()
	e.say("/status") // a message after the card
	if got := e.out.String(); !strings.Contains(got, "[1] Extend 2h  [2] I released it") {
		t.Fatalf("no lease card numbered [1] [2]:\n%s", got)
	}
	e.say("1")                                            // Extend 2h
	if _, err := io.WriteString(e.w, "2\n"); err != nil { // the closed card's I released it: no handler
		t.Fatal(err)
	}
	got := e.end()
	for _, want := range []string{
		"(updated) box1's lease now ends at 15:00",
		"» Lease extended to 15:00",
		"! [2] no longer works",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if states := e.states(); states["box1"] != "running" {
		t.Errorf("box1 %s, want running", states["box1"])
	}
}

// handlerFunc adapts a function to chat.Handler.
type handlerFunc func(ctx context.Context, u chat.Update, s chat.Sender) error

func (f handlerFunc) Handle(ctx context.Context, u chat.Update, s chat.Sender) error {
	return f(ctx, u, s)
}

// TestConsole_EditWithButtons: an edit that carries buttons replaces the
// message's buttons with new numbers; the old ones no longer work.
func TestConsole_EditWithButtons(t *testing.T) {
	var presses []chat.Update
	h := handlerFunc(func(ctx context.Context, u chat.Update, s chat.Sender) error {
		m := chat.Outgoing{ChatID: u.ChatID, Text: "card", Buttons: [][]chat.Button{{{Text: "A", Data: "a"}, {Text: "B", Data: "b"}}}}
		if u.Kind == chat.KindCallback {
			presses = append(presses, u)
			m = chat.Outgoing{ChatID: u.ChatID, EditMessageID: u.MessageID, Text: "card " + u.CallbackData, Buttons: [][]chat.Button{{{Text: "C", Data: "c"}}}}
		}
		_, err := s.Send(ctx, m)
		return err
	})
	var out bytes.Buffer
	c, err := console.New(console.Config{In: strings.NewReader("show\n2\n1\n3\n"), Out: &out, Handler: h, Logger: discard(), FirstMessageID: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := "card\n[1] A  [2] B\n(updated) card b\n[3] C\n! [1] no longer works: its message has changed or is older than the last 100 with buttons. Send the command again for new ones.\n(updated) card c\n[4] C\n"
	if got := out.String(); got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
	if len(presses) != 2 || presses[0].CallbackData != "b" || presses[1].CallbackData != "c" || presses[1].MessageID != 1 {
		t.Errorf("presses = %+v", presses)
	}
}
