package connsync

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/connector/vault"
	"github.com/gpuledger/gpuledger/ledger"
)

// MaxKeyBytes is the longest API key /connect accepts. The platforms'
// keys are 32 to 100 characters; anything much longer is a paste gone
// wrong (a whole message, a file), not a key.
const MaxKeyBytes = 512

// validateKey checks a key's form before anything is sent with it. Its
// errors never quote the key.
func validateKey(key string) error {
	switch {
	case key == "":
		return ledger.Errorf(ledger.EINVALID, "the API key is empty: send /connect PLATFORM KEY with the key the platform's console shows")
	case len(key) > MaxKeyBytes:
		return ledger.Errorf(ledger.EINVALID, "the API key is %d bytes, over the %d a key can be: copy only the key itself", len(key), MaxKeyBytes)
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c <= ' ' || c > '~' {
			return ledger.Errorf(ledger.EINVALID, "the API key holds a space, a line break or a character that is not printable ASCII (at byte %d): copy only the key itself", i+1)
		}
	}
	return nil
}

// Connect checks key with one harmless call to platform and, only when
// the platform accepts it, stores it sealed as the user's connector for
// that platform (replacing an earlier one), then schedules a sync round
// of it at once without waiting for it. The key is never logged, stored
// in the clear or returned.
//
// Errors: EINVALID (a platform /connect does not support, a key that is
// empty, over MaxKeyBytes or not printable ASCII: nothing is sent); the
// platform's refusal wrapped so that errors.Is and errors.As find
// connector.ErrUnauthorized, ErrUnavailable, ErrBadAnswer or
// *connector.RateLimitedError (nothing is stored); the store's errors.
func (s *Syncer) Connect(ctx context.Context, userID int64, platform, key string) (ledger.Connector, error) {
	platform = strings.ToLower(strings.TrimSpace(platform))
	if !s.supports(platform) {
		return ledger.Connector{}, ledger.Errorf(ledger.EINVALID, "%q is not a platform /connect knows: use one of %s", platform, s.cfg.Platforms)
	}
	if err := validateKey(key); err != nil {
		return ledger.Connector{}, err
	}
	cl, err := s.cfg.Clients(platform, key)
	if err != nil {
		return ledger.Connector{}, ledger.Errorf(ledger.EINVALID, "the %s API key cannot be used: %s", platform, redact(err.Error(), key))
	}
	cctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	err = cl.Check(cctx)
	cancel()
	if err != nil {
		return ledger.Connector{}, fmt.Errorf("connsync: check the %s key: %w", platform, err)
	}
	sealed, err := s.cfg.Vault.Seal([]byte(key), vault.ConnectorAD(userID, platform))
	if err != nil {
		return ledger.Connector{}, fmt.Errorf("connsync: seal the %s key: %w", platform, err)
	}
	now := s.now().UTC()
	c := ledger.Connector{UserID: userID, Platform: platform, KeyEnc: sealed, Hint: vault.Hint(key), AddedAt: now, CheckedAt: now}
	if err := s.store.SaveConnector(ctx, c); err != nil {
		return ledger.Connector{}, err
	}
	// A new key starts afresh: due now, no backoff, no incident.
	st := s.connState(userID, platform)
	s.mu.Lock()
	st.next, st.failures, st.incident, st.failingSince, st.restored = now, 0, "", time.Time{}, true
	s.mu.Unlock()
	s.wake()
	c.KeyEnc = nil // the caller has no use for the ciphertext
	return c, nil
}

// Connectors returns the user's connectors by platform, without their
// sealed keys. A connector whose key this server's secret does not open
// has LastError saying so (keyUnopened), whatever its last sync said:
// the listing tells the user what keeps it from syncing now.
func (s *Syncer) Connectors(ctx context.Context, userID int64) ([]ledger.Connector, error) {
	cs, err := s.store.Connectors(ctx, userID)
	if err != nil {
		return nil, err
	}
	for i := range cs {
		key, err := s.cfg.Vault.Open(cs[i].KeyEnc, vault.ConnectorAD(cs[i].UserID, cs[i].Platform))
		clear(key)
		if err != nil {
			cs[i].LastError = (&keyUnopened{err: err}).Error()
		}
		cs[i].KeyEnc = nil
	}
	return cs, nil
}

// incidentUnopened is connState.incident while the connector's key does
// not open: the user was told in this run.
const incidentUnopened = "unopened"

// keyUnopened is the error of a stored key the vault does not open. Its
// text says why in the user's terms and never holds the key; it wraps the
// vault's error (vault.ErrUnsealable and the specific one).
type keyUnopened struct{ err error }

func (e *keyUnopened) Error() string {
	if errors.Is(e.err, vault.ErrSecretChanged) {
		return "cannot open the stored key: GPULEDGER_SECRET differs from the one it was stored with"
	}
	if errors.Is(e.err, vault.ErrDamaged) {
		return "cannot open the stored key: it was altered, or belongs to another user or platform"
	}
	return "cannot open the stored key: it is not a sealed key this server can read"
}

func (e *keyUnopened) Unwrap() error { return e.err }

// message is the key of the message that tells the user.
func (e *keyUnopened) message() string {
	if errors.Is(e.err, vault.ErrSecretChanged) {
		return "unsealable"
	}
	return "key_damaged"
}

// Disconnect removes the user's connector for platform and forgets its
// schedule. The rentals it synced stay in the ledger. Errors: EINVALID
// (an unsupported platform), ENOTFOUND (no connector for it).
func (s *Syncer) Disconnect(ctx context.Context, userID int64, platform string) error {
	platform = strings.ToLower(strings.TrimSpace(platform))
	if !s.supports(platform) {
		return ledger.Errorf(ledger.EINVALID, "%q is not a platform /connect knows: use one of %s", platform, s.cfg.Platforms)
	}
	if err := s.store.DeleteConnector(ctx, userID, platform); err != nil {
		return err
	}
	s.mu.Lock()
	if st := s.conns[connKey{userID, platform}]; st != nil {
		st.next, st.failures, st.incident = time.Time{}, 0, ""
	}
	s.mu.Unlock()
	return nil
}

// wake makes Run look for due connectors now, without blocking.
func (s *Syncer) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// redact removes key from text, for the rare error that might echo it.
func redact(text, key string) string {
	if key == "" {
		return text
	}
	return strings.ReplaceAll(text, key, "[key]")
}

// isCode reports whether err is a *ledger.Error with code.
func isCode(err error, code string) bool {
	var le *ledger.Error
	return errors.As(err, &le) && le.Code == code
}
