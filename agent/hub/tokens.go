package hub

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// Tokens issues and revokes agent tokens. It implements the conversation
// core's AgentTokens hook (bot.AgentTokens). A token is 32 random bytes in
// unpadded base64url, returned once and never stored or logged: the store
// keeps its SHA-256. One token per rental: issuing a new one revokes the
// old; a release revokes it.
type Tokens struct {
	hub *Hub
}

// Tokens returns the hub's token service.
func (h *Hub) Tokens() *Tokens { return &Tokens{hub: h} }

// Issue returns a new token for the user's unreleased rental called
// rental, revoking the rental's earlier token. Errors: ENOTFOUND,
// ECONFLICT (released).
func (t *Tokens) Issue(ctx context.Context, userID int64, rental string) (string, error) {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", err
	}
	tok := base64.RawURLEncoding.EncodeToString(raw[:])
	hash := hashToken(tok)
	h := t.hub
	rec, err := h.store.IssueToken(ctx, userID, rental, hash, h.now())
	if err != nil {
		return "", err
	}
	h.mu.Lock()
	h.forgetTokensLocked(rec.RentalID)
	delete(h.unknown, hash)
	h.tokens[hash] = &tokenEntry{tok: rec, loadedAt: h.now()}
	h.mu.Unlock()
	return tok, nil
}

// AgentState returns the latest state of a rental's agent (what /why shows
// of who is connected), and whether one was ever seen.
func (t *Tokens) AgentState(rentalID int64) (ledger.AgentState, bool) {
	return t.hub.AgentState(rentalID)
}

// Revoke revokes the rental's tokens (after a release recorded by hand).
func (t *Tokens) Revoke(ctx context.Context, rentalID int64) error {
	h := t.hub
	if err := h.store.RevokeTokens(ctx, rentalID, h.now()); err != nil {
		return err
	}
	h.mu.Lock()
	h.forgetTokensLocked(rentalID)
	h.mu.Unlock()
	return nil
}

// authResult is what authenticate found.
type authResult int

const (
	authOK authResult = iota
	authUnknown
	authRevoked
	authLimited
	authError
)

// authenticate checks the bearer token of r and takes one request from its
// bucket. It returns the token's record (also for a revoked token, so the
// caller can tell a released rental's agent).
func (h *Hub) authenticate(ctx context.Context, r *http.Request) (ledger.AgentToken, authResult, error) {
	raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	raw = strings.TrimSpace(raw)
	if !ok || raw == "" || len(raw) > 256 {
		return ledger.AgentToken{}, authUnknown, nil
	}
	hash := hashToken(raw)
	now := h.now()
	h.mu.Lock()
	if until, bad := h.unknown[hash]; bad && now.Before(until) {
		h.mu.Unlock()
		return ledger.AgentToken{}, authUnknown, nil
	}
	e := h.tokens[hash]
	fresh := e != nil && now.Sub(e.loadedAt) < h.cfg.TokenTTL && !now.Before(e.loadedAt)
	h.mu.Unlock()
	if !fresh {
		tok, err := h.store.TokenByHash(ctx, hash)
		if ledger.ErrorCode(err) == ledger.ENOTFOUND {
			h.mu.Lock()
			if len(h.unknown) > 10000 {
				clear(h.unknown)
			}
			h.unknown[hash] = now.Add(time.Minute)
			h.mu.Unlock()
			return ledger.AgentToken{}, authUnknown, nil
		}
		if err != nil {
			h.log.Error("hub: token lookup", "err", err)
			return ledger.AgentToken{}, authError, err
		}
		h.mu.Lock()
		if e = h.tokens[hash]; e == nil {
			e = &tokenEntry{}
			h.tokens[hash] = e
		}
		e.tok, e.loadedAt = tok, now
		h.mu.Unlock()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	tok := e.tok
	if !e.bucket.take(now, h.cfg.RateBurst, h.cfg.RateEvery) {
		return tok, authLimited, nil
	}
	if !tok.Valid() {
		return tok, authRevoked, nil
	}
	return tok, authOK, nil
}

// bucket is a token bucket: up to burst requests, refilled by one every
// `every`. A clock that jumps back refills nothing.
type bucket struct {
	level float64
	last  time.Time
	init  bool
}

func (b *bucket) take(now time.Time, burst int, every time.Duration) bool {
	if !b.init {
		b.level, b.last, b.init = float64(burst), now, true
	}
	if d := now.Sub(b.last); d > 0 {
		b.level = min(float64(burst), b.level+float64(d)/float64(every))
		b.last = now
	} else if d < 0 {
		b.last = now
	}
	if b.level < 1 {
		return false
	}
	b.level--
	return true
}
