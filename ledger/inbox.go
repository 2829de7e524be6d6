package ledger

import (
	"context"
	"time"
)

// InboxEntry is one incoming chat update kept by the store between being
// fetched and being answered (see InboxStore).
type InboxEntry struct {
	ID      int64     // the transport's update ID (Telegram's update_id), unique
	UserID  int64     // the sender
	ChatID  int64     // where the answer goes
	SentAt  time.Time // when the sender sent it (zero if unknown)
	Payload string    // the update, encoded by the transport; never a secret in the clear (the transport leaves out or seals a text holding one)
	Handled bool      // handled; Reply is what is left to send
	Reply   string    // the answer still to send, encoded by the transport
}

// InboxStore keeps a chat transport's incoming updates durably, so the
// transport can confirm them to the chat service as soon as they are
// stored, handle them at its own pace and answer them after a crash.
// Implementations are safe for concurrent use.
type InboxStore interface {
	// InboxAdd stores entries whose ID is not stored yet (others are
	// ignored) and sets the meta value offsetKey to offset, in one
	// transaction: the offset never passes an update that is not stored.
	InboxAdd(ctx context.Context, entries []InboxEntry, offsetKey, offset string) error
	// InboxUsers returns the users that have entries not handled yet.
	InboxUsers(ctx context.Context) ([]int64, error)
	// InboxNext returns up to limit of the user's entries not handled
	// yet with ID above after, in ID order.
	InboxNext(ctx context.Context, userID, after int64, limit int) ([]InboxEntry, error)
	// InboxUnsent returns the handled entries whose reply is not sent yet,
	// in ID order.
	InboxUnsent(ctx context.Context) ([]InboxEntry, error)
	// InboxHandled marks an entry handled with the reply still to send;
	// an empty reply deletes the entry (nothing is left to do).
	InboxHandled(ctx context.Context, id int64, reply string) error
	// InboxDelete deletes entries whose answer was sent.
	InboxDelete(ctx context.Context, ids []int64) error
}
