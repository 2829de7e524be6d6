package console_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/bot/console"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// scriptHandler is a small stand-in for the core: it proposes a rental
// with buttons, edits the card on a press, exports a file, and fails on
// "boom".
type scriptHandler struct {
	got []bot.Update
}

func (h *scriptHandler) Handle(ctx context.Context, u bot.Update, s bot.Sender) error {
	h.got = append(h.got, u)
	switch {
	case u.Kind == bot.KindCallback:
		if err := s.AnswerCallback(ctx, u.CallbackID, "OK"); err != nil {
			return err
		}
		_, err := s.Send(ctx, bot.Outgoing{ChatID: u.ChatID, EditMessageID: u.MessageID, Text: "✓ <b>box1</b> " + u.CallbackData})
		return err
	case u.Text == "rented 4090":
		_, err := s.Send(ctx, bot.Outgoing{ChatID: u.ChatID, Text: "Rent <b>box1</b> &lt;autodl&gt; 4090 at ¥1.88/h?",
			Buttons: [][]bot.Button{{{Text: "Confirm", Data: "confirmed"}, {Text: "Edit", Data: "edit"}}, {{Text: "Cancel", Data: "cancelled"}}}})
		return err
	case u.Text == "/export":
		_, err := s.Send(ctx, bot.Outgoing{ChatID: u.ChatID, Text: "<i>ledger</i>", Document: &bot.File{Name: "../../ledger.csv", Data: []byte("a,b\n")}})
		return err
	case u.Text == "boom":
		return errors.New("database is locked")
	}
	_, err := s.Send(ctx, bot.Outgoing{ChatID: u.ChatID, Text: "echo: " + u.Text})
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
	c, err := console.New(console.Config{In: strings.NewReader(in), Out: &out, Handler: h, Dir: dir, Logger: discard()})
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
	if press.Kind != bot.KindCallback || press.CallbackData != "edit" || press.UserID != 1 || press.ChatID != 1 || press.MessageID != 1 || press.Key != "" {
		t.Errorf("press = %+v", press)
	}
	if h.got[0].Kind != bot.KindText || h.got[0].ChatType != bot.ChatPrivate || h.got[4].Kind != bot.KindText || h.got[4].Text != "9" || len(h.got) != 7 {
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
	var out bytes.Buffer
	c, err := console.New(console.Config{In: strings.NewReader(in), Out: &out, Handler: core, Dir: t.TempDir(), Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	got := out.String()
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

// newCore opens a SQLite file in t.TempDir and the real core over it.
func newCore(t *testing.T, now func() time.Time) (*sqlite.DB, *bot.Core) {
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
	core, err := bot.New(ctx, bot.Config{Store: db, Owner: 1, TZ: "Asia/Shanghai", Now: now, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	return db, core
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
	var out bytes.Buffer
	c, err := console.New(console.Config{In: strings.NewReader(in), Out: &out, Handler: core, Dir: t.TempDir(), Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	got := out.String()
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
