// Package console is the terminal transport of the conversation core: each
// input line is one message from the owner, replies are printed as plain
// text, inline buttons become numbered choices answered by typing the
// number, and documents and photos are written to files. It ends cleanly at
// end of input, so `gpuledger < commands.txt` runs a script.
package console

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/gpuledger/gpuledger/bot"
)

// Config configures a Console. Handler is required.
type Config struct {
	In      io.Reader // os.Stdin
	Out     io.Writer // os.Stdout
	Handler bot.Handler
	// UserID is the owner's ID; the chat ID is the same (1).
	UserID int64
	// LangCode is passed as the client's language hint ("").
	LangCode string
	// Dir is where documents and photos are written (".").
	Dir    string
	Logger *slog.Logger // slog.Default()
}

// Console is the terminal transport. It is a bot.Sender, safe for
// concurrent use (the scheduler may print while a line is handled).
type Console struct {
	cfg Config

	mu      sync.Mutex
	nextID  int
	buttons []bot.Button // the latest message's buttons, in numbering order
	buttonM int          // the message they belong to
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
	return &Console{cfg: cfg}, nil
}

// Run reads lines until end of input or until ctx ends, handling each in
// turn, and returns nil then. A line that is the number of one of the
// latest message's buttons presses that button. A handler error is printed
// and the next line is read: at a terminal the user can simply retype.
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
			u := c.update(line)
			if err := c.cfg.Handler.Handle(ctx, u, c); err != nil {
				c.cfg.Logger.Error("handling input failed", "err", err)
				c.printf("! could not handle that: %v\n", err)
			}
		}
	}
}

// update turns an input line into the core's Update.
func (c *Console) update(line string) bot.Update {
	u := bot.Update{
		Kind:     bot.KindText,
		UserID:   c.cfg.UserID,
		ChatID:   c.cfg.UserID,
		ChatType: bot.ChatPrivate,
		LangCode: c.cfg.LangCode,
		Text:     line,
	}
	if n, err := strconv.Atoi(line); err == nil {
		c.mu.Lock()
		if n >= 1 && n <= len(c.buttons) {
			u.Kind = bot.KindCallback
			u.Text = ""
			u.CallbackData = c.buttons[n-1].Data
			u.MessageID = c.buttonM
			u.CallbackID = fmt.Sprintf("console:%d:%d", c.buttonM, n)
		}
		c.mu.Unlock()
	}
	return u
}

func (c *Console) printf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(c.cfg.Out, format, args...)
}

// Send prints m (see bot.Sender): HTML reduced to plain text, buttons as
// numbered choices (which replace any earlier ones), an edit prefixed
// "(updated)", a document or photo written to a file in Dir with its path
// printed. It returns the message's ID.
func (c *Console) Send(ctx context.Context, m bot.Outgoing) (int, error) {
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
	c.buttons, c.buttonM = nil, id
	if len(m.Buttons) > 0 {
		var labels []string
		for _, row := range m.Buttons {
			for _, btn := range row {
				c.buttons = append(c.buttons, btn)
				labels = append(labels, fmt.Sprintf("[%d] %s", len(c.buttons), btn.Text))
			}
		}
		b.WriteString(strings.Join(labels, "  "))
		b.WriteString("\n")
	}
	if _, err := io.WriteString(c.cfg.Out, b.String()); err != nil {
		return 0, fmt.Errorf("console: write: %w", err)
	}
	return id, nil
}

func fileOf(m bot.Outgoing) (*bot.File, string) {
	switch {
	case m.Document != nil:
		return m.Document, "document"
	case m.Photo != nil:
		return m.Photo, "photo"
	}
	return nil, ""
}

// save writes f into Dir under its base name, adding "-1", "-2"... before
// the extension rather than overwriting an existing file.
func (c *Console) save(f *bot.File) (string, error) {
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
		fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
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

// AnswerCallback prints the toast text, if any (see bot.Sender).
func (c *Console) AnswerCallback(ctx context.Context, callbackID, text string) error {
	if text != "" {
		c.printf("» %s\n", PlainText(text))
	}
	return nil
}

// PlainText reduces Telegram HTML to what a terminal shows: tags removed,
// entities decoded. The core escapes user text, so every literal "<" in
// markup starts a tag.
func PlainText(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			b.WriteString(s)
			break
		}
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		s = s[i+j+1:]
	}
	return strings.TrimRight(html.UnescapeString(b.String()), "\n")
}
