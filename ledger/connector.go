package ledger

import (
	"context"
	"time"
)

// Connector is one user's connection to a platform's API: the platform
// key sealed by the caller (connector/vault) and what the sync loop last
// learnt with it. The store never sees the key in the clear.
type Connector struct {
	UserID   int64
	Platform string // the profile key: "runpod", "vast", "lambda", "autodl"
	KeyEnc   []byte // the sealed key, opaque to the store
	Hint     string // at most the key's last 4 characters, for the /connect listing

	AddedAt      time.Time // when this key was saved (a replaced key: when it was replaced)
	CheckedAt    time.Time // when the platform last accepted the key (the check before saving, then each clean sync)
	RejectedAt   time.Time // when the platform first rejected this key; zero while it is accepted
	RejectedSaid bool      // the user was told of the rejection (it is told once)
	LastSyncAt   time.Time // the end of the last sync round, clean or not; zero before the first
	LastError    string    // what that round failed with ("" when it was clean), without the key
	// Outage is the kind of the platform outage the user was told of and
	// not yet told over ("" none), and OutageSince when its failures
	// began: "you will be told when it answers again" outlives a restart.
	Outage      string
	OutageSince time.Time
}

// Rejected reports whether the platform rejected the key: the connector
// rests until the key is replaced with SaveConnector.
func (c Connector) Rejected() bool { return !c.RejectedAt.IsZero() }

// ConnectorStore keeps the users' platform connectors. Implementations are
// safe for concurrent use. Times are stored to the second. Connectors are
// not journaled: /undo does not restore a replaced or deleted key.
type ConnectorStore interface {
	// SaveConnector stores c, replacing the user's connector for the same
	// platform: a replaced key starts afresh (its rejection, last sync and
	// last error are cleared). A zero AddedAt is the store's now.
	// Errors: EINVALID (no user, a malformed platform name, no KeyEnc, a
	// KeyEnc over 4096 bytes, a Hint over 4 characters), ENOTFOUND (the
	// user is not registered).
	SaveConnector(ctx context.Context, c Connector) error
	// Connectors returns the user's connectors by platform name.
	Connectors(ctx context.Context, userID int64) ([]Connector, error)
	// AllConnectors returns every user's connectors, by user then
	// platform, the rejected ones included (the sync loop skips those).
	AllConnectors(ctx context.Context) ([]Connector, error)
	// DeleteConnector removes the user's connector for platform.
	// Errors: ENOTFOUND (none).
	DeleteConnector(ctx context.Context, userID int64, platform string) error
	// MarkRejected records that the platform rejected the key keyEnc at
	// (the first rejection's time is kept) and reports whether the user
	// was already told; the first call returns false and marks it told,
	// so the caller tells the user at most once per key. keyEnc is the
	// sealed key the caller used: if the key was replaced meanwhile, the
	// new one is not marked and ECONFLICT is returned (tell no one).
	// Errors: ENOTFOUND (no connector), ECONFLICT (the key was replaced).
	MarkRejected(ctx context.Context, userID int64, platform string, keyEnc []byte, at time.Time) (alreadySaid bool, err error)
	// MarkSynced records the end of a sync round at at: errText is what it
	// failed with, "" for a clean round, which also sets CheckedAt (the
	// key worked). errText is cut to 1000 bytes; it must not hold the key.
	// Errors: ENOTFOUND (no connector).
	MarkSynced(ctx context.Context, userID int64, platform string, at time.Time, errText string) error
	// MarkOutage records that the user was told of an outage of kind
	// (at most 32 bytes) whose failures began at since, or, with kind "",
	// that it was told over. SaveConnector clears it with the old key.
	// Errors: EINVALID (kind too long), ENOTFOUND (no connector).
	MarkOutage(ctx context.Context, userID int64, platform, kind string, since time.Time) error
}
