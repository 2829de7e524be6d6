package ledger

import (
	"context"
	"time"
)

// Notifications the scheduler sends: cards that are edited in place as
// the situation changes, and one-off notices that must go out at most once
// (a nightly summary, a budget level, a deadline warning).

// CardKind is the kind of situation a card is about.
type CardKind string

// Card kinds.
const (
	CardIdle        CardKind = "idle"        // idle rental: Release now / Snooze 1h / Keep
	CardSilent      CardKind = "silent"      // the agent went silent
	CardJob         CardKind = "job"         // the wrapped job finished
	CardLease       CardKind = "lease"       // a lease is about to end
	CardLongRun     CardKind = "longrun"     // a rental without an agent has run long
	CardUnconfirmed CardKind = "unconfirmed" // released, but the agent still reports
	CardOrder       CardKind = "order"       // an automatic or requested release in flight
	CardReceipt     CardKind = "receipt"     // the rental's first bench: Keep / Release now
)

// Card is one message about one situation of one rental (one incident):
// sent once, then edited in place. A new incident of the same kind (the
// host idle again after being busy) starts a new card.
type Card struct {
	ID          int64
	UserID      int64
	RentalID    int64
	Kind        CardKind
	Incident    string    // identifies the situation, e.g. the idle streak's start
	MessageID   int       // the sent message, 0 until sent
	Text        string    // the text last sent, to skip needless edits
	FirstAt     time.Time // when it was first sent (the warning time)
	LastAt      time.Time // when it was last sent or edited with a notification
	Reminders   int       // reminders sent after the first
	SnoozeUntil time.Time
	Kept        bool // the user pressed Keep: no more reminders, no automatic action
	Closed      bool // the situation ended (busy again, released)
	Pending     bool // held back by quiet hours: send when they end
}

// ReminderDelay returns the delay before the n-th reminder (n ≥ 1) of a
// card: 1h, 2h, 4h, ... capped at 24h, so an ignored card does not nag.
func ReminderDelay(n int) time.Duration {
	if n < 1 {
		n = 1
	}
	d := time.Hour
	for i := 1; i < n && d < 24*time.Hour; i++ {
		d *= 2
	}
	return min(d, 24*time.Hour)
}

// InQuietHours reports whether t falls in the user's quiet hours (a daily
// window in their zone that may wrap past midnight). Quiet hours hold
// routine messages; a pending automatic action is never held.
func InQuietHours(u *User, t time.Time) bool {
	from, to := u.Settings.QuietFrom, u.Settings.QuietTo
	if from < 0 || to < 0 || from == to {
		return false
	}
	lt := t.In(u.Location())
	m := lt.Hour()*60 + lt.Minute()
	if from < to {
		return m >= from && m < to
	}
	return m >= from || m < to
}

// QuietEnd returns the end of the quiet hours that contain t (t itself
// when t is not in quiet hours).
func QuietEnd(u *User, t time.Time) time.Time {
	if !InQuietHours(u, t) {
		return t
	}
	lt := t.In(u.Location())
	y, mo, d := lt.Date()
	end := time.Date(y, mo, d, u.Settings.QuietTo/60, u.Settings.QuietTo%60, 0, 0, lt.Location())
	if !end.After(lt) {
		end = time.Date(y, mo, d+1, u.Settings.QuietTo/60, u.Settings.QuietTo%60, 0, 0, lt.Location())
	}
	return end
}

// NotifyStore keeps cards and once-only notices. Implementations are safe
// for concurrent use.
type NotifyStore interface {
	// Card returns the latest card of the rental and kind (closed or not),
	// or ENOTFOUND.
	Card(ctx context.Context, rentalID int64, kind CardKind) (Card, error)
	// CardByMessage returns the card shown in a message, or ENOTFOUND.
	CardByMessage(ctx context.Context, userID int64, messageID int) (Card, error)
	// SaveCard inserts (ID 0) or updates a card and returns it.
	SaveCard(ctx context.Context, c Card) (Card, error)
	// OpenCards returns the cards not closed, of every user.
	OpenCards(ctx context.Context) ([]Card, error)

	// MarkNotice records key (e.g. "summary:42:2026-11-01") and reports
	// whether it is new: false means it was already recorded, and the
	// notice must not be sent again.
	MarkNotice(ctx context.Context, userID int64, key string, at time.Time) (bool, error)
	// UnmarkNotice forgets key, after the notice it guarded failed to send.
	UnmarkNotice(ctx context.Context, key string) error
	// HasNotice reports whether key was recorded.
	HasNotice(ctx context.Context, key string) (bool, error)
}

// Notice is a message about a change, for the outbox: written in the
// transaction of the change it reports, deleted once sent. Text renders
// it with the rental as the transaction wrote it (its final name, "-2"
// appended when the one asked for was taken); it is called inside the
// transaction and must do no I/O.
type Notice struct {
	Topic  string // the sender that drains it, e.g. "sync:runpod" (1..64 bytes)
	Silent bool   // sent without a sound
	Text   func(r *Rental) string
}

// OutboxItem is a notice written and not yet sent.
type OutboxItem struct {
	ID     int64
	UserID int64
	Topic  string
	Text   string // HTML, rendered when the change was written
	Silent bool
	At     time.Time // when it was written
}

// MaxOutboxText bounds a notice's text in bytes (Telegram's limit is
// 4096 characters; the store refuses more than this).
const MaxOutboxText = 8192

// OutboxStore keeps the notices written with the changes they report.
// Delivery is at least once: the sender sends a pending item and then
// deletes it, so a crash between the two sends it again after the
// restart (one duplicate at most), and a crash before the send loses
// nothing. Implementations are safe for concurrent use; one topic is
// drained by one sender at a time.
type OutboxStore interface {
	// Outbox returns the user's pending items of topic, oldest first, at
	// most limit.
	Outbox(ctx context.Context, userID int64, topic string, limit int) ([]OutboxItem, error)
	// SentOutbox deletes item id once it is sent (or given up); an id
	// already gone is no error.
	SentOutbox(ctx context.Context, id int64) error
	// Tell writes n for user alone, as a change of its own (a notice
	// whose change is already stored). Errors: EINVALID (no topic, no
	// text, a text over MaxOutboxText), ENOTFOUND ("not_registered").
	Tell(ctx context.Context, userID int64, n Notice) (OutboxItem, error)
}
