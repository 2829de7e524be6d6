package telegram

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"

	"github.com/gpuledger/gpuledger/chat"
)

// An update whose text holds a secret (Config.Secret: a platform API key
// sent with /connect, typed, edited in, or as a photo's caption) is stored
// in the inbox without its text, from the first write on: the inbox row
// is in the database file, its write-ahead log and every backup taken
// while the update waits (a platform check may take 30 s), so the text
// must never be there in the clear. The text is kept in memory for this
// run and, with a Sealer (the server seals with its vault key), sealed in
// the stored form as well.
//
// After a crash before the update was handled, the next start opens the
// sealed text and handles the update again (it is marked Redelivered), so
// the user's /connect finishes without being sent again. Where the text
// cannot be had back (no Sealer, or a server secret that differs from the
// one it was sealed with) the user's message is deleted from the chat
// and the user is asked to send it again (Config.ResendText): the key was
// never checked, so nothing of it is lost but the user's time.

// storedUpdate is an update as the inbox stores it: the update itself,
// with Text left out when it holds a secret (Held), and that text sealed
// by the Sealer (Sealed, if there is one). Entries stored before these
// fields existed read as plain updates.
type storedUpdate struct {
	chat.Update
	Held   bool   `json:"held,omitempty"`
	Sealed []byte `json:"sealed,omitempty"`
}

// inboxAD binds a sealed text to its update and user, so that a sealed
// text copied to another row does not open.
func inboxAD(updateID, userID int64) []byte {
	return []byte("gpuledger/inbox\x00" + strconv.FormatInt(updateID, 10) + "\x00" + strconv.FormatInt(userID, 10))
}

// storedForm encodes update id for the inbox. A text that holds a secret
// is left out, kept in memory and, with a Sealer, sealed.
func (t *Transport) storedForm(id int64, u chat.Update) (string, error) {
	s := storedUpdate{Update: u}
	if u.Text != "" && t.cfg.Secret(u.Text) {
		s.Text, s.Held = "", true
		t.mu.Lock()
		t.held[id] = u.Text
		t.mu.Unlock()
		if t.cfg.Sealer != nil {
			sealed, err := t.cfg.Sealer.Seal([]byte(u.Text), inboxAD(id, u.UserID))
			if err != nil {
				// The text stays in memory: only a crash before it is
				// handled would make the user send it again.
				t.log.Warn("sealing an update that holds a secret failed; it is kept in memory only", "update", u.Key, "err", t.scrubErr(err))
			} else {
				s.Sealed = sealed
			}
		}
	}
	b, err := json.Marshal(s)
	return string(b), err
}

// heldText returns the text left out of entry id's stored form: from
// memory, else opened from its sealed form. ok is false when neither has
// it (a restart without a Sealer, or with another secret).
func (t *Transport) heldText(id int64, s storedUpdate, log *slog.Logger) (string, bool) {
	t.mu.Lock()
	text, ok := t.held[id]
	t.mu.Unlock()
	if ok {
		return text, true
	}
	if len(s.Sealed) == 0 || t.cfg.Sealer == nil {
		return "", false
	}
	plain, err := t.cfg.Sealer.Open(s.Sealed, inboxAD(id, s.UserID))
	if err != nil {
		log.Warn("the stored text of an update that held a secret cannot be opened (the server's secret changed?); the user is asked to send it again", "err", err)
		return "", false
	}
	return string(plain), true
}

// forgetHeld drops the text of entry id kept in memory.
func (t *Transport) forgetHeld(id int64) {
	t.mu.Lock()
	delete(t.held, id)
	t.mu.Unlock()
}

// lostSecret answers an update whose text held a secret that could not be
// had back: its message is deleted from the chat (it still shows the key
// unless an earlier run deleted it) and, in a private chat and unless it
// was an edit, the user is asked to send it again. The capture c holds
// the answer.
func (t *Transport) lostSecret(ctx context.Context, u chat.Update, c *capture, log *slog.Logger) {
	if u.MessageID != 0 {
		if err := c.DeleteMessage(ctx, u.ChatID, u.MessageID); err != nil {
			log.Info("deleting a message that held a secret failed (deleted before the restart?)", "err", t.scrubErr(err))
		}
	}
	c.secret.Store(true)
	if !u.Edited && u.ChatType == chat.ChatPrivate { // a group is no place to send it again
		c.msgs = append(c.msgs, chat.Outgoing{ChatID: u.ChatID, Text: t.cfg.ResendText(u.LangCode)})
	}
}
