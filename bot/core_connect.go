package bot

import (
	"context"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// Connections is what the chat needs from the platform connectors
// (connsync.Syncer implements it): /connect, /disconnect, /reconcile, and
// whether /release should offer to terminate a rental on its platform.
// Implementations are safe for concurrent use and never log or return the
// key; every method is bounded by ctx, so a slow platform never holds the
// chat longer than the caller allows.
type Connections interface {
	// Connect checks key with one harmless call to platform and, when the
	// platform accepts it, stores it sealed as the user's connector for
	// that platform (replacing an earlier key). It returns the stored
	// connector (Hint, AddedAt, CheckedAt set). Errors: errors.Is
	// connector.ErrUnauthorized (the platform rejected the key),
	// connector.ErrUnavailable, *connector.RateLimitedError,
	// connector.ErrBadAnswer (nothing stored; try again later), a
	// ledger.Error EINVALID (an unknown platform, an unusable key).
	Connect(ctx context.Context, userID int64, platform, key string) (ledger.Connector, error)
	// Connectors returns the user's connectors by platform name.
	Connectors(ctx context.Context, userID int64) ([]ledger.Connector, error)
	// Disconnect removes the user's connector for platform: rentals keep
	// their platform IDs and nothing is released. Errors: ENOTFOUND (none).
	Disconnect(ctx context.Context, userID int64, platform string) error
	// Reconcile compares the ledger with what each connected platform
	// billed in [from, to), one Reconciliation per connector; a platform
	// whose side could not be read has Err set rather than failing the
	// call.
	Reconcile(ctx context.Context, userID int64, from, to time.Time) ([]ledger.Reconciliation, error)
	// Live reports whether the rental is an instance of a connected platform that the platform
	// still lists as not terminated (so /release can offer to terminate it there).
	Live(ctx context.Context, r *ledger.Rental) (platform string, ok bool)
}
