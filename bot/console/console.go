// Package console is the terminal transport of the conversation core: each
// input line is one message from the owner, replies are printed as plain
// text, inline buttons become numbered choices answered by typing the
// number (numbers are unique across the session, so an older message's
// buttons keep working after newer ones arrive), and documents and photos
// are written to files. It ends cleanly at end of input, so
// `gpuledger < commands.txt` runs a script.
package console

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpuledger/gpuledger/chat"
)

// Config configures a Console. Handler is required.
type Config struct {
	In      io.Reader // os.Stdin
	Out     io.Writer // os.Stdout
	Handler chat.Handler
	// UserID is the owner's ID; the chat ID is the same (1).
	UserID int64
	// LangCode is passed as the client's language hint ("").
	LangCode string
	// Dir is where documents and photos are written (".").
	Dir    string
	Logger *slog.Logger // slog.Default()
	// FirstMessageID is the ID of the first message sent. Default: the
	// wall clock in milliseconds at New, so that a run's IDs do not repeat
	// an earlier run's: the scheduler keeps a card's message ID in the
	// database and may edit that card after a restart, which must not
	// land on (and take the buttons of) a new message.
	FirstMessageID int
}

// KeptMessages is how many messages' buttons the console keeps pressable:
// the most recent ones that have buttons. An older message's numbers say
// that they no longer work, so memory stays bounded in a long session.
const KeptMessages = 100

// Console is the terminal transport. It is a chat.Sender, safe for
// concurrent use (the scheduler may print while a line is handled).
type Console struct {
	cfg Config

	mu     sync.Mutex
	nextID int
	// Buttons are numbered across the session: a message's buttons get
	// the numbers after the last ones given out (lastNum), so typing a
	// number means the same button whatever arrived since. keyed holds the
	// live blocks, oldest first, at most KeptMessages of them.
	lastNum int
	keyed   []block
	// shown is what the last KeptMessages messages printed (their text
	// and button labels), oldest first, so an edit that changes nothing
	// a reader sees, or only refreshes a card's figures, prints nothing.
	shown []printed
}

// printed is what one message showed: its plain text and button labels.
type printed struct {
	msgID  int
	text   string
	labels string
}

// block is the buttons of one message, numbered first, first+1, ...
type block struct {
	msgID   int
	first   int
	buttons []chat.Button
}

// New returns a Console for cfg.
func New(cfg Config) (*Console, error) {
	if cfg.Handler == nil {
		return nil, errors.New("console: Config.Handler is nil")
	}
	if cfg.In == nil {
		cfg.In = os.Stdin
	}
	if cfg.Out == nil {
		cfg.Out = os.Stdout
	}
	if cfg.UserID == 0 {
		cfg.UserID = 1
	}
	if cfg.Dir == "" {
		cfg.Dir = "."
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.FirstMessageID <= 0 {
		cfg.FirstMessageID = int(time.Now().UnixMilli())
	}
	return &Console{cfg: cfg, nextID: cfg.FirstMessageID - 1}, nil
}

// Run reads lines until end of input or until ctx ends, handling each in
// turn, and returns nil then. A line that is a button's number presses
// that button, whichever message it belongs to; a number given out earlier
// whose message has since lost its buttons (answered, changed, or older
// than the last KeptMessages with buttons) is answered here with a note
// and reaches no handler. A handler error is printed and the next line is
// read: at a terminal the user can simply retype.
func (c *Console) Run(ctx context.Context) error {
	lines := make(chan string)
	readErr := make(chan error, 1)
	go func() {
		// This goroutine stays blocked in Read if ctx ends first; it ends
		// with the process or when the input is closed.
		sc := bufio.NewScanner(c.cfg.In)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
		readErr <- sc.Err()
		close(lines)
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case line, ok := <-lines:
			if !ok {
				if err := <-readErr; err != nil {
					return fmt.Errorf("console: read input: %w", err)
				}
				return nil
			}
			line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
			if line == "" {
				continue
			}
			u, ok := c.update(line)
			if !ok {
				c.printf("! [%s] no longer works: its message has changed or is older than the last %d with buttons. Send the command again for new ones.\n", line, KeptMessages)
				continue
			}
			if err := c.cfg.Handler.Handle(ctx, u, c); err != nil {
				c.cfg.Logger.Error("handling input failed", "err", err)
				c.printf("! could not handle that: %v\n", err)
			}
		}
	}
}

// update turns an input line into the core's Update. It reports false for
// the number of a button that no longer works.
func (c *Console) update(line string) (chat.Update, bool) {
	u := chat.Update{
		Kind:     chat.KindText,
		UserID:   c.cfg.UserID,
		ChatID:   c.cfg.UserID,
		ChatType: chat.ChatPrivate,
		LangCode: c.cfg.LangCode,
		Text:     line,
	}
	n, err := strconv.Atoi(line)
	if err != nil || n < 1 || strconv.Itoa(n) != line {
		return u, true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if n > c.lastNum {
		return u, true // never a button's number: plain text
	}
	for _, b := range c.keyed {
		if n >= b.first && n < b.first+len(b.buttons) {
			u.Kind = chat.KindCallback
			u.Text = ""
			u.CallbackData = b.buttons[n-b.first].Data
			u.MessageID = b.msgID
			u.CallbackID = fmt.Sprintf("console:%d:%d", b.msgID, n)
			return u, true
		}
	}
	return u, false
}

// setButtons replaces message id's buttons (an edit replaces a message's
// keyboard, as Telegram's does) with btns numbered after the last number
// given out, dropping the oldest block beyond KeptMessages. It returns
// the first number. c.mu is held.
func (c *Console) setButtons(id int, btns []chat.Button) int {
	kept := c.keyed[:0]
	for _, b := range c.keyed {
		if b.msgID != id {
			kept = append(kept, b)
		}
	}
	clear(c.keyed[len(kept):])
	c.keyed = kept
	if len(btns) == 0 {
		return 0
	}
	first := c.lastNum + 1
	c.lastNum += len(btns)
	if len(c.keyed) >= KeptMessages {
		n := len(c.keyed) - KeptMessages + 1
		clear(c.keyed[:n])
		c.keyed = c.keyed[n:]
	}
	c.keyed = append(c.keyed, block{msgID: id, first: first, buttons: btns})
	return first
}

// unchanged reports whether an edit to now.msgID can go unprinted: it
// shows what was printed last for that message (a terminal cannot edit in
// place, and a reader would see the same card twice), or it is a refresh
// of the card's figures (chat.Outgoing.Refresh) with the same buttons.
// Either way the message's buttons keep their numbers and take btns'
// payloads. An edit of a message not printed in this session (or long
// ago) is printed. c.mu is held.
func (c *Console) unchanged(now printed, refresh bool, btns []chat.Button) bool {
	i := slices.IndexFunc(c.shown, func(p printed) bool { return p.msgID == now.msgID })
	if i < 0 || c.shown[i].labels != now.labels || c.shown[i].text != now.text && !refresh {
		return false
	}
	j := slices.IndexFunc(c.keyed, func(b block) bool { return b.msgID == now.msgID })
	switch {
	case j >= 0:
		c.keyed[j].buttons = btns
	case len(btns) > 0:
		return false // its numbers no longer work: print new ones
	}
	c.shown[i].text = now.text
	return true
}

// remember records what message p.msgID printed, dropping the oldest
// beyond KeptMessages. c.mu is held.
func (c *Console) remember(p printed) {
	c.shown = slices.DeleteFunc(c.shown, func(q printed) bool { return q.msgID == p.msgID })
	if len(c.shown) >= KeptMessages {
		c.shown = slices.Delete(c.shown, 0, len(c.shown)-KeptMessages+1)
	}
	c.shown = append(c.shown, p)
}

// labelsOf is the buttons' labels as one string.
func labelsOf(btns []chat.Button) string {
	var b strings.Builder
	for _, btn := range btns {
		b.WriteString(btn.Text)
		b.WriteByte(0)
	}
	return b.String()
}

func (c *Console) printf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(c.cfg.Out, format, args...)
}

// Send prints m (see chat.Sender): HTML reduced to plain text (a link
// whole, on its line, to copy), buttons as numbered choices (numbered
// after every earlier message's, so those stay pressable; a web-app
// button is left out, as a terminal cannot open a Mini App), an edit prefixed "(updated)" (its buttons replace the edited
// message's), a document or photo written to a file in Dir with its path
// printed. An edit that shows what its message showed already, or only
// refreshes a card's figures (chat.Outgoing.Refresh), prints nothing: the
// scheduler edits an idle card at every check. It returns the message's ID.
func (c *Console) Send(ctx context.Context, m chat.Outgoing) (int, error) {
	var saved string
	if f, kind := fileOf(m); f != nil {
		path, err := c.save(f)
		if err != nil {
			return 0, err
		}
		saved = fmt.Sprintf("[%s saved: %s]\n", kind, path)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	id := m.EditMessageID
	if id == 0 {
		c.nextID++
		id = c.nextID
	}
	var b strings.Builder
	b.WriteString(saved)
	if text := PlainText(m.Text); text != "" {
		if m.EditMessageID != 0 {
			b.WriteString("(updated) ")
		}
		b.WriteString(text)
		b.WriteString("\n")
	}
	var btns []chat.Button
	for _, row := range m.Buttons {
		for _, btn := range row {
			if btn.WebApp == "" { // a Mini App opens only inside Telegram
				btns = append(btns, btn)
			}
		}
	}
	now := printed{msgID: id, text: PlainText(m.Text), labels: labelsOf(btns)}
	if m.EditMessageID != 0 && saved == "" && c.unchanged(now, m.Refresh, btns) {
		return id, nil
	}
	c.remember(now)
	if first := c.setButtons(id, btns); len(btns) > 0 {
		labels := make([]string, len(btns))
		for i, btn := range btns {
			labels[i] = fmt.Sprintf("[%d] %s", first+i, btn.Text)
		}
		b.WriteString(strings.Join(labels, "  "))
		b.WriteString("\n")
	}
	if _, err := io.WriteString(c.cfg.Out, b.String()); err != nil {
		return 0, fmt.Errorf("console: write: %w", err)
	}
	return id, nil
}

func fileOf(m chat.Outgoing) (*chat.File, string) {
	switch {
	case m.Document != nil:
		return m.Document, "document"
	case m.Photo != nil:
		return m.Photo, "photo"
	}
	return nil, ""
}

// save writes f into Dir under its base name, adding "-1", "-2"... before
// the extension rather than overwriting an existing file. The file is the
// owner's only (0600): an export holds the whole ledger.
func (c *Console) save(f *chat.File) (string, error) {
	name := filepath.Base(filepath.Clean("/" + f.Name))
	if name == "/" || name == "." {
		name = "file"
	}
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	for i := 0; ; i++ {
		cand := name
		if i > 0 {
			cand = fmt.Sprintf("%s-%d%s", stem, i, ext)
		}
		path := filepath.Join(c.cfg.Dir, cand)
		fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("console: save %s: %w", cand, err)
		}
		_, err = fh.Write(f.Data)
		if cerr := fh.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return "", fmt.Errorf("console: save %s: %w", cand, err)
		}
		return path, nil
	}
}

// AnswerCallback prints the toast text, if any (see chat.Sender).
func (c *Console) AnswerCallback(ctx context.Context, callbackID, text string) error {
	if text != "" {
		c.printf("» %s\n", PlainText(text))
	}
	return nil
}

// PlainText reduces Telegram HTML to what a terminal shows: tags removed,
// entities decoded (chat.StripHTML), trailing line breaks dropped.
func PlainText(s string) string {
	return strings.TrimRight(chat.StripHTML(s), "\n")
}
