package hub

import (
	"context"
	"net/http"
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
	return t.IssueBy(ctx, userID, 0, rental)
}

// IssueBy is Issue on a team's ledger userID by its member by, who is
// recorded with the token (ledger.TokenStore.IssueTokenBy): removing them
// from the team revokes it.
func (t *Tokens) IssueBy(ctx context.Context, userID, by int64, rental string) (string, error) {
	tok, err := newToken("")
	if err != nil {
		return "", err
	}
	hash := hashToken(tok)
	h := t.hub
	rec, err := h.store.IssueTokenBy(ctx, userID, by, rental, hash, h.now())
	if err != nil {
		return "", err
	}
	h.mu.Lock()
	h.forgetTokensLocked(rec.RentalID)
	h.tokens.putLocked(hash, rec, h.now())
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

// authenticate checks the bearer token of r as a rental's agent token and
// takes one request from its bucket. It returns the token's record (also
// for a revoked token, so the caller can tell a released rental's agent).
func (h *Hub) authenticate(ctx context.Context, r *http.Request) (ledger.AgentToken, authResult, error) {
	return authToken(ctx, h, h.tokens, bearer(r))
}

// maxCachedTokens bounds each map of a tokenCache: beyond it the map is
// cleared (and filled again by the lookups that follow).
const maxCachedTokens = 10000

// tokenCache is the hub's memory of one kind of token (a rental's agent
// token, ledger.AgentToken, or an enrolment token, ledger.EnrolToken), by
// the SHA-256 of the token: a token the store holds is trusted for
// Config.TokenTTL and keeps its rate bucket across reloads; a hash the
// store does not hold is refused for a minute without asking it again,
// so made-up tokens cost one lookup a minute each. Each kind keeps its
// own: a token unknown as one kind may be valid as the other. The maps
// are guarded by Hub.mu.
type tokenCache[T any] struct {
	what    string                                              // the kind, for the log
	load    func(ctx context.Context, hash [32]byte) (T, error) // the store's lookup: ENOTFOUND when none
	valid   func(*T) bool                                       // false once revoked
	entries map[[32]byte]*tokenEntry[T]
	unknown map[[32]byte]time.Time // hashes the store does not hold, until
}

type tokenEntry[T any] struct {
	tok      T
	loadedAt time.Time
	bucket   bucket
}

func newTokenCache[T any](what string, load func(context.Context, [32]byte) (T, error), valid func(*T) bool) *tokenCache[T] {
	return &tokenCache[T]{what: what, load: load, valid: valid,
		entries: map[[32]byte]*tokenEntry[T]{}, unknown: map[[32]byte]time.Time{}}
}

// authToken checks the token raw of c's kind and takes one request from
// its bucket (one bucket per token). It returns the token's record, also
// for a revoked or rate-limited token.
func authToken[T any](ctx context.Context, h *Hub, c *tokenCache[T], raw string) (T, authResult, error) {
	var none T
	if raw == "" || len(raw) > 256 {
		return none, authUnknown, nil
	}
	hash := hashToken(raw)
	now := h.now()
	h.mu.Lock()
	if until, bad := c.unknown[hash]; bad && now.Before(until) {
		h.mu.Unlock()
		return none, authUnknown, nil
	}
	e := c.entries[hash]
	fresh := e != nil && now.Sub(e.loadedAt) < h.cfg.TokenTTL && !now.Before(e.loadedAt)
	h.mu.Unlock()
	if !fresh {
		tok, err := c.load(ctx, hash)
		if ledger.ErrorCode(err) == ledger.ENOTFOUND {
			h.mu.Lock()
			if len(c.unknown) > maxCachedTokens {
				clear(c.unknown)
			}
			c.unknown[hash] = now.Add(time.Minute)
			h.mu.Unlock()
			return none, authUnknown, nil
		}
		if err != nil {
			h.log.Error("hub: "+c.what+" lookup", "err", err)
			return none, authError, err
		}
		h.mu.Lock()
		if e = c.entries[hash]; e == nil {
			e = c.newEntryLocked(hash)
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
	if !c.valid(&e.tok) {
		return tok, authRevoked, nil
	}
	return tok, authOK, nil
}

// newEntryLocked adds an empty entry for hash. h.mu is held.
func (c *tokenCache[T]) newEntryLocked(hash [32]byte) *tokenEntry[T] {
	if len(c.entries) > maxCachedTokens {
		clear(c.entries)
	}
	e := &tokenEntry[T]{}
	c.entries[hash] = e
	return e
}

// putLocked caches tok, stored just now under hash (a new token, with a
// full bucket). h.mu is held.
func (c *tokenCache[T]) putLocked(hash [32]byte, tok T, now time.Time) {
	c.storedLocked(hash)
	e := c.newEntryLocked(hash)
	e.tok, e.loadedAt = tok, now
}

// storedLocked forgets that the store did not hold hash: a token was
// stored under it. h.mu is held.
func (c *tokenCache[T]) storedLocked(hash [32]byte) { delete(c.unknown, hash) }

// dropLocked forgets the token with hash (revoked): the next request
// reads it again. h.mu is held.
func (c *tokenCache[T]) dropLocked(hash [32]byte) { delete(c.entries, hash) }

// forgetLocked forgets the cached tokens for which match is true. h.mu is
// held.
func (c *tokenCache[T]) forgetLocked(match func(*T) bool) {
	for k, e := range c.entries {
		if match(&e.tok) {
			delete(c.entries, k)
		}
	}
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
