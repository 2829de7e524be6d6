package telegram

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// resume queues the answers a previous run stored but did not send, and
// starts a worker for every user with stored updates not handled yet.
func (t *Transport) resume(ctx, hctx context.Context) error {
	unsent, err := t.cfg.Store.InboxUnsent(ctx)
	if err != nil {
		return fmt.Errorf("telegram: read unsent answers: %w", err)
	}
	for _, e := range unsent {
		var msgs []chat.Outgoing
		if err := json.Unmarshal([]byte(e.Reply), &msgs); err != nil || len(msgs) == 0 {
			t.log.Error("dropping an unreadable stored answer", "update", e.ID, "err", err)
			t.deleteEntries(hctx, []int64{e.ID})
			continue
		}
		t.deliverLater(hctx, e.ChatID, e.ID, msgs)
	}
	users, err := t.cfg.Store.InboxUsers(ctx)
	if err != nil {
		return fmt.Errorf("telegram: read stored updates: %w", err)
	}
	if len(unsent) > 0 || len(users) > 0 {
		t.log.Info("resuming stored updates", "answers_to_send", len(unsent), "users_with_updates", len(users))
	}
	for _, id := range users {
		t.kick(ctx, hctx, id)
	}
	return nil
}

// kick tells userID's worker that new entries are stored, starting it if
// it is not running.
func (t *Transport) kick(ctx, hctx context.Context, userID int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if w := t.users[userID]; w != nil {
		w.dirty = true
		return
	}
	t.users[userID] = &userWork{}
	t.wg.Add(1)
	go t.work(ctx, hctx, userID)
}

// work handles userID's stored updates in order, InboxBatch at a time,
// and exits when none is left or ctx has ended (the rest stay stored).
func (t *Transport) work(ctx, hctx context.Context, userID int64) {
	defer t.wg.Done()
	var after int64
	for attempt := 0; ; {
		t.mu.Lock()
		t.users[userID].dirty = false
		t.mu.Unlock()
		if ctx.Err() != nil {
			break
		}
		batch, err := t.cfg.Store.InboxNext(hctx, userID, after, t.cfg.InboxBatch)
		if err != nil {
			attempt++
			t.log.Warn("reading stored updates failed, will retry", "user", userID, "err", t.scrubErr(err))
			if t.cfg.Sleep(ctx, t.cfg.RetryBackoff.delay(attempt)) != nil {
				break
			}
			continue
		}
		attempt = 0
		if len(batch) == 0 {
			t.mu.Lock()
			if !t.users[userID].dirty {
				delete(t.users, userID)
				t.mu.Unlock()
				return
			}
			t.mu.Unlock()
			continue
		}
		for _, e := range batch {
			if ctx.Err() != nil || !t.waitOutbox(ctx, e.ChatID) || !t.processEntry(ctx, hctx, e) {
				goto out // shutting down: it stays stored
			}
			after = e.ID
		}
	}
out:
	t.mu.Lock()
	delete(t.users, userID)
	t.mu.Unlock()
}

// maxWaiting bounds the answers waiting in memory for one chat: a worker
// whose chat has this many waits before handling more, so a backlog
// answered faster than Telegram takes the answers stays on disk.
const maxWaiting = 256

// waitOutbox waits while chatID has maxWaiting answers queued. It returns
// false if ctx ended.
func (t *Transport) waitOutbox(ctx context.Context, chatID int64) bool {
	for {
		t.mu.Lock()
		n := 0
		if ob := t.chats[chatID]; ob != nil {
			n = len(ob.queue)
		}
		t.mu.Unlock()
		if n < maxWaiting {
			return true
		}
		if t.cfg.Sleep(ctx, t.cfg.Pacing.Chat) != nil {
			return false
		}
	}
}

// processEntry handles one stored update and keeps its answer: transient
// failures are retried for as long as they last; other failures
// MaxAttempts times, then the update is answered with FailedText and
// dropped. It returns false if it stopped because ctx ended.
func (t *Transport) processEntry(ctx, hctx context.Context, e ledger.InboxEntry) bool {
	defer t.forgetHeld(e.ID)
	var su storedUpdate
	if err := json.Unmarshal([]byte(e.Payload), &su); err != nil || su.UserID == 0 {
		t.log.Error("dropping an unreadable stored update", "update", e.ID, "err", err)
		t.deleteEntries(hctx, []int64{e.ID})
		return true
	}
	u := su.Update
	if u.SentAt.IsZero() {
		u.SentAt = e.SentAt
	}
	log := t.log.With("update", u.Key, "user", u.UserID)
	// An entry stored by an earlier run may have been applied before the
	// crash that kept its answer from being stored.
	u.Redelivered = e.ID < int64(t.earlier)
	failures := 0
	var c *capture
	secret := false // a handler attempt deleted the message: it held a secret
	lost := false   // the text held a secret that could not be had back
	if su.Held {
		text, ok := t.heldText(e.ID, su, log)
		u.Text, lost = text, !ok
	}
	if lost {
		c = &capture{t: t, chatID: u.ChatID}
		t.lostSecret(hctx, u, c, log)
	}
	for attempt := 1; !lost; attempt++ {
		if c != nil {
			secret = secret || c.secret.Load()
		}
		c = &capture{t: t, chatID: u.ChatID, cbID: u.CallbackID}
		var stop *time.Timer
		if c.cbID != "" {
			stop = time.AfterFunc(t.cfg.CallbackGrace, func() { c.ensureAnswered(hctx, "") })
		}
		err := t.handle(hctx, u, c)
		if stop != nil {
			stop.Stop()
		}
		if err == nil {
			break
		}
		c.ensureAnswered(hctx, "") // stop the spinner while we retry
		u.Redelivered = true       // the failed attempt may have applied it
		if ledger.Transient(err) {
			if ledger.ErrorCode(err) == ledger.EFULL {
				t.tellDiskFull(hctx, u.UserID, u.ChatID, e.Payload)
			}
			lvl := slog.LevelDebug
			if attempt == 1 || attempt%20 == 0 {
				lvl = slog.LevelWarn // a long outage logs a line now and then, not one per try
			}
			log.Log(hctx, lvl, "handling update failed, will retry until it succeeds", "attempt", attempt, "err", t.scrubErr(err))
		} else {
			failures++
			if failures >= t.cfg.MaxAttempts {
				log.Error("update dropped after repeated failures", "attempts", attempt, "err", t.scrubErr(err))
				c = &capture{t: t, chatID: u.ChatID}
				if u.Kind != chat.KindCallback {
					c.msgs = []chat.Outgoing{{ChatID: u.ChatID, Text: t.cfg.FailedText(u.LangCode)}}
				}
				break
			}
			log.Warn("handling update failed, will retry", "attempt", attempt, "err", t.scrubErr(err))
		}
		if t.cfg.Sleep(ctx, t.cfg.RetryBackoff.delay(attempt)) != nil {
			return false
		}
	}
	c.ensureAnswered(hctx, "")
	secret = secret || c.secret.Load()
	t.diskOK(u.UserID)
	msgs := c.taken()
	reply := ""
	if len(msgs) > 0 {
		b, err := json.Marshal(msgs)
		if err != nil {
			log.Error("encoding the answer failed", "err", err)
		} else {
			reply = string(b)
		}
	}
	err := t.cfg.Store.InboxHandled(hctx, e.ID, reply)
	if err != nil {
		// The change stands; the answer is sent from memory. Should the
		// process die before the entry is deleted, the next run hands
		// the update over again and the core answers from the ledger.
		log.Warn("marking the update handled failed; answering anyway", "err", t.scrubErr(err))
	} else if secret {
		t.scrubStore(hctx, log)
	}
	if len(msgs) > 0 {
		t.deliverLater(hctx, u.ChatID, e.ID, msgs)
	}
	if err != nil && secret {
		t.forgetSecret(ctx, hctx, e.ID, reply, log)
	}
	return true
}

// forgetSecret marks entry id handled, which drops its stored text, after
// a first try failed, and then scrubs the store: the text holds a secret
// (an API key) that must not stay in the database for the rest of the
// run. It tries until the store takes it or ctx ends, holding up this
// user's next updates, which need the same store. Should ctx end first,
// the entry is still unhandled, so the next start hands the update over
// again and its handling deletes the text then.
func (t *Transport) forgetSecret(ctx, hctx context.Context, id int64, reply string, log *slog.Logger) {
	for attempt := 1; ; attempt++ {
		if t.cfg.Sleep(ctx, t.cfg.RetryBackoff.delay(attempt)) != nil {
			log.Error("the stored text of an update that held a secret is still in the database; the next start handles it again and drops it")
			return
		}
		err := t.cfg.Store.InboxHandled(hctx, id, reply)
		if err == nil {
			t.scrubStore(hctx, log)
			return
		}
		if attempt == 1 || attempt%20 == 0 {
			log.Warn("dropping the stored text of an update that held a secret failed, will retry", "attempt", attempt, "err", t.scrubErr(err))
		}
	}
}

// capture is the Sender a handler gets for a stored update. Plain
// messages (text and buttons) to the update's own chat are kept, to be
// stored with the entry and sent by the chat's outbox; edits, files,
// button-press answers and messages to another chat go out at once. The
// last is the answer to a command sent in a group, which goes to the
// sender's private chat: the handler must learn at once whether Telegram
// lets the bot write there (chat.ErrNoPrivateChat), to tell the group. It also remembers whether the update's button press was
// answered, so the transport answers it when the handler did not, and
// never twice.
type capture struct {
	t        *Transport
	chatID   int64
	cbID     string
	answered atomic.Bool
	secret   atomic.Bool // the handler deleted the update's message
	mu       sync.Mutex
	msgs     []chat.Outgoing
}

func (c *capture) Send(ctx context.Context, m chat.Outgoing) (int, error) {
	if m.EditMessageID != 0 || m.Document != nil || m.Photo != nil || m.Text == "" ||
		(m.ChatID != 0 && m.ChatID != c.chatID) {
		return c.t.Send(ctx, m)
	}
	if m.ChatID == 0 {
		m.ChatID = c.chatID
	}
	c.mu.Lock()
	c.msgs = append(c.msgs, m)
	c.mu.Unlock()
	return 0, nil
}

// DeleteMessage deletes a message at once (chat.Deleter) and remembers
// that this update held a secret, so the store is scrubbed once the
// update's stored text is dropped.
func (c *capture) DeleteMessage(ctx context.Context, chatID int64, messageID int) error {
	c.secret.Store(true)
	return c.t.DeleteMessage(ctx, chatID, messageID)
}

// scrubStore wipes from the store's files the update text just dropped
// (see Scrubber). A failure is logged: the text is gone from the table,
// and the next scrub or the store's own reuse of the pages overwrites it.
func (t *Transport) scrubStore(ctx context.Context, log *slog.Logger) {
	s, ok := t.cfg.Store.(Scrubber)
	if !ok {
		return
	}
	if err := s.ScrubDeleted(ctx); err != nil {
		log.Warn("wiping a secret's stored update from the database files failed", "err", t.scrubErr(err))
	}
}

func (c *capture) taken() []chat.Outgoing {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.msgs
}

func (c *capture) AnswerCallback(ctx context.Context, callbackID, text string) error {
	if callbackID == c.cbID && c.answered.Swap(true) {
		return nil
	}
	return c.t.AnswerCallback(ctx, callbackID, text)
}

// ensureAnswered answers the update's button press if nobody has.
func (c *capture) ensureAnswered(ctx context.Context, text string) {
	if c.cbID == "" || c.answered.Swap(true) {
		return
	}
	if err := c.t.AnswerCallback(ctx, c.cbID, text); err != nil {
		c.t.log.Warn("answering button press failed", "callback", c.cbID, "err", c.t.scrubErr(err))
	}
}

// outbox holds the answers waiting for one chat, with the entries they
// answer. A sender goroutine runs while it is not empty.
type outbox struct {
	queue []answer
}

type answer struct {
	id int64 // the inbox entry answered; 0 for none
	m  chat.Outgoing
}

// deliverLater queues msgs, the answer to entry id, for chatID, starting
// the chat's sender if it is not running. (An answer addressed to another
// chat than the update's goes to that chat's outbox; the entry is deleted
// once every one of its messages is sent.)
func (t *Transport) deliverLater(hctx context.Context, chatID, id int64, msgs []chat.Outgoing) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, m := range msgs {
		if m.ChatID == 0 {
			m.ChatID = chatID
		}
		aid := int64(0)
		if i == len(msgs)-1 {
			aid = id // deleted after the last part
		}
		ob := t.chats[m.ChatID]
		if ob == nil {
			ob = &outbox{}
			t.chats[m.ChatID] = ob
			t.wg.Add(1)
			go t.deliver(hctx, m.ChatID)
		}
		ob.queue = append(ob.queue, answer{id: aid, m: m})
	}
}

// deliver sends chatID's waiting answers until none is left. It waits for
// the chat's next sending slot before taking what is queued, so answers
// that pile up while it waits go out merged into one message.
func (t *Transport) deliver(ctx context.Context, chatID int64) {
	defer t.wg.Done()
	for attempt := 0; ; {
		if t.cfg.Sleep(ctx, t.pace.wait(chatID)) != nil {
			return // shutting down: the stored answers are sent at the next start
		}
		t.mu.Lock()
		ob := t.chats[chatID]
		n, m := mergeAnswers(ob.queue)
		if n == 0 {
			delete(t.chats, chatID)
			t.mu.Unlock()
			return
		}
		taken := ob.queue[:n:n]
		t.mu.Unlock()

		_, err := t.Send(ctx, m)
		if to := chat.MigratedTo(err); to != 0 {
			// The group became a supergroup after the update came: its
			// answer goes to the same people under the chat's new ID.
			t.log.Info("the group was upgraded to a supergroup; sending the answer there", "chat", chatID, "to", to)
			m.ChatID, m.EditMessageID = to, 0
			_, err = t.Send(ctx, m)
		}
		if err != nil && ctx.Err() != nil {
			return
		}
		if err != nil && !permanent(err) {
			attempt++
			t.log.Warn("sending an answer failed, will retry", "chat", chatID, "attempt", attempt, "err", t.scrubErr(err))
			if t.cfg.Sleep(ctx, t.cfg.Backoff.delay(attempt)) != nil {
				return
			}
			continue
		}
		if err != nil {
			t.log.Warn("telegram refused an answer; dropping it", "chat", chatID, "err", t.scrubErr(err))
		}
		attempt = 0
		var ids []int64
		for _, a := range taken {
			if a.id != 0 {
				ids = append(ids, a.id)
			}
		}
		t.deleteEntries(ctx, ids)
		t.mu.Lock()
		ob.queue = ob.queue[n:]
		t.mu.Unlock()
	}
}

// permanent reports whether Telegram refused a send for good (4xx other
// than 429: blocked by the user, chat not found), so retrying is useless.
func permanent(err error) bool {
	te := apiError(err)
	return te != nil && te.Code >= 400 && te.Code < 500 && te.RetryAfter == 0
}

func (t *Transport) deleteEntries(ctx context.Context, ids []int64) {
	if len(ids) == 0 {
		return
	}
	if err := t.cfg.Store.InboxDelete(ctx, ids); err != nil {
		t.log.Warn("deleting answered updates failed; they are answered again at the next start", "updates", len(ids), "err", t.scrubErr(err))
	}
}

// mergeSep separates merged answers.
const mergeSep = "\n\n"

// mergeAnswers returns how many of the queued answers go out as the next
// message, and that message: consecutive answers are joined while the
// text stays within MaxTextLen, and only the last may carry buttons (they
// belong under the text they follow). One answer is sent as it is (a
// longer one is split by Send).
func mergeAnswers(q []answer) (int, chat.Outgoing) {
	if len(q) == 0 {
		return 0, chat.Outgoing{}
	}
	m := q[0].m
	n := 1
	size := chat.UTF16Len(m.Text)
	var b strings.Builder
	b.WriteString(m.Text)
	for n < len(q) && len(m.Buttons) == 0 {
		next := q[n].m
		add := chat.UTF16Len(mergeSep) + chat.UTF16Len(next.Text)
		if size+add > MaxTextLen {
			break
		}
		b.WriteString(mergeSep)
		b.WriteString(next.Text)
		size += add
		m.Buttons = next.Buttons
		m.Silent = m.Silent && next.Silent
		n++
	}
	m.Text = b.String()
	return n, m
}

// queueStranger queues a stranger's update in memory, under the flood
// limit and the bound on strangers' waiting updates. Over either, it is
// dropped (a press is answered with a toast, so the spinner stops): the
// core answers a stranger once at most anyway.
func (t *Transport) queueStranger(ctx, hctx context.Context, u chat.Update) {
	it := &item{u: u}
	if ok, _ := t.flood.check(u.UserID, t.cfg.Now()); !ok {
		it.throttled = true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.queued >= t.cfg.StrangerQueue {
		it.throttled = true
		if u.Kind != chat.KindCallback {
			t.log.Debug("stranger's update dropped: too many waiting", "user", u.UserID)
			return
		}
	}
	t.queued++
	q, running := t.strangers[u.UserID]
	t.strangers[u.UserID] = append(q, it)
	if !running {
		t.wg.Add(1)
		go t.workStranger(ctx, hctx, u.UserID)
	}
}

// workStranger handles one stranger's queued updates in order.
func (t *Transport) workStranger(ctx, hctx context.Context, userID int64) {
	defer t.wg.Done()
	for {
		t.mu.Lock()
		q := t.strangers[userID]
		if len(q) == 0 || ctx.Err() != nil {
			t.queued -= len(q)
			delete(t.strangers, userID)
			t.mu.Unlock()
			return
		}
		it := q[0]
		t.strangers[userID] = q[1:]
		t.queued--
		t.mu.Unlock()
		t.processStranger(ctx, hctx, it)
	}
}

// processStranger handles a stranger's update directly (nothing stored),
// retrying a failing Handle up to MaxAttempts times.
func (t *Transport) processStranger(ctx, hctx context.Context, it *item) {
	c := &capture{t: t, cbID: it.u.CallbackID, chatID: it.u.ChatID}
	if it.throttled {
		if it.u.Kind == chat.KindCallback {
			c.ensureAnswered(hctx, t.cfg.SlowDownText(it.u.LangCode))
		}
		t.log.Debug("stranger's update dropped: over the flood limit", "user", it.u.UserID)
		return
	}
	log := t.log.With("update", it.u.Key, "user", it.u.UserID)
	for attempt := 1; ; attempt++ {
		c.mu.Lock()
		c.msgs = nil
		c.mu.Unlock()
		err := t.handle(hctx, it.u, c)
		if err == nil {
			break
		}
		c.ensureAnswered(hctx, "")
		if attempt >= t.cfg.MaxAttempts {
			log.Error("stranger's update skipped after repeated failures", "attempts", attempt, "err", t.scrubErr(err))
			return
		}
		if t.cfg.Sleep(ctx, t.cfg.RetryBackoff.delay(attempt)) != nil {
			return
		}
	}
	c.ensureAnswered(hctx, "")
	for _, m := range c.taken() {
		if _, err := t.Send(hctx, m); err != nil {
			log.Warn("sending a reply failed", "err", t.scrubErr(err))
		}
	}
}

// Idle reports whether no fetched update is waiting to be handled or
// answered in this process: no worker, stranger or chat sender is running.
// With the fake server's confirmed offset past an update, it tells a test
// (or a health check) that the update is finished, since an update is
// confirmed only after it was handed to a worker.
func (t *Transport) Idle() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.users) == 0 && len(t.strangers) == 0 && len(t.chats) == 0
}
