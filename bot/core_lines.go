package bot

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// Multi-line messages. People paste lists of commands, one per line. A
// message whose non-empty lines (two or more) all start with a slash runs
// each line as its own command, with the same checks, in order, and is
// answered once. Each line carries its own key (the update's key plus
// ":line:N"), so it applies exactly once even when the message is
// delivered again; a line that fails (a bad command, a missing rental) is
// answered with its error and the other lines still apply: they are
// independent commands, as if sent one by one. The answer says which
// lines failed. A transient failure (a full disk) stops the message and
// is returned, so the whole message is delivered again; the lines already
// applied are then recognised by their keys.

// maxLines bounds the lines run from one message (Telegram's 4096
// characters allow about 200 short commands).
const maxLines = 200

// commandLines returns the lines of text when it is a list of commands:
// two or more non-empty lines, each starting with a slash. Otherwise nil.
func commandLines(text string) []string {
	if !strings.Contains(text, "\n") {
		return nil
	}
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if !isCommand(l) {
			return nil
		}
		lines = append(lines, l)
	}
	if len(lines) < 2 || len(lines) > maxLines {
		return nil
	}
	return lines
}

// lines runs each line of a multi-line message and sends one answer.
func (r *req) lines(lines []string) error {
	col := &collector{s: r.s}
	var failed []string
	n := 0
	for i, line := range lines {
		sub := *r
		sub.s, sub.marked, sub.failed, sub.inLines = col, false, false, true
		sub.u.Text = line
		if r.u.Key != "" {
			sub.u.Key = r.u.Key + ":line:" + strconv.Itoa(i+1)
		}
		col.begin(i + 1)
		if err := sub.fail(sub.line()); err != nil {
			return err // transient: the whole message comes again
		}
		if sub.failed {
			failed = append(failed, strconv.Itoa(i+1))
		}
		n++
	}
	body := col.text()
	if body == "" {
		return nil // every line was a redelivery already answered
	}
	head := r.t("lines_ok", strconv.Itoa(n))
	if len(failed) > 0 {
		// A refusal for /undo, journaled with the message's key.
		r.rejected = true
		if err := r.mark(); err != nil && ledger.ErrorCode(err) != ledger.EDUPLICATE {
			r.c.log.Error("bot: journal a refused line", "user", r.u.UserID, "err", err)
		}
		head = r.t("lines_failed", strconv.Itoa(n-len(failed)), strconv.Itoa(n), strings.Join(failed, ", "))
	}
	return r.send(r.plain(head + "\n\n" + body))
}

// line parses and runs one line of a multi-line message.
func (r *req) line() error {
	cmd, err := command.ParseFor(r.c.botName, r.u.Text, r.now, r.loc)
	if err != nil {
		return err
	}
	return r.dispatch(cmd)
}

// collector is the Sender of the lines of one message: plain replies to
// the message's chat are kept, numbered by line, to be sent as one
// answer; anything else (buttons, files, edits) goes out at once.
type collector struct {
	s    chat.Sender
	mu   sync.Mutex
	line int
	b    strings.Builder
}

func (c *collector) begin(line int) {
	c.mu.Lock()
	c.line = line
	c.mu.Unlock()
}

func (c *collector) Send(ctx context.Context, m chat.Outgoing) (int, error) {
	if len(m.Buttons) > 0 || m.Document != nil || m.Photo != nil || m.EditMessageID != 0 {
		return c.s.Send(ctx, m)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.b.Len() > 0 {
		c.b.WriteString("\n")
	}
	fmt.Fprintf(&c.b, "<b>%d.</b> %s", c.line, m.Text)
	return 0, nil
}

func (c *collector) AnswerCallback(ctx context.Context, callbackID, text string) error {
	return c.s.AnswerCallback(ctx, callbackID, text)
}

func (c *collector) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.String()
}
