package bot

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/gpuledger/gpuledger/ledger"
)

// Who may use the bot: the users listed in Config.AllowedUsers, the
// Config.Owner (the console's user), and the owner who claimed the bot with
// the one-time code. Everyone else gets one polite refusal and then
// silence, so a stranger who keeps writing costs one database row, not a
// reply per message.
//
// Meta keys kept in the store.
const (
	metaOwner     = "owner"                           // the claimed owner's user ID, decimal
	metaClaimHash = "claim_code_sha256"               // hex SHA-256 of the lower-case claim code
	metaSecret    = "bot_secret"                      // hex HMAC key for button data, when Config.Secret is empty
	metaRefused   = "refused:"                        // + user ID: the user was refused once
	claimAlphabet = "abcdefghjkmnpqrstuvwxyz23456789" // no 0/o, 1/l/i: easy to copy by hand
	claimLen      = 12
	// maxClaimTries bounds wrong codes per user per process run: enough for
	// typos, far too few to guess 12 characters of 31.
	maxClaimTries = 5
)

// Access decides who may use the ledger: the allow list, the owner, the
// claim. The server makes one before the chat core, the dashboard and the
// Telegram transport and hands it to each, so that all three let in the
// same people and a claim in the chat lets its owner into the dashboard
// at once. Safe for concurrent use.
type Access struct {
	store   ledger.Store
	allowed map[int64]bool
	// outsiders are the people a team's invite admitted though they are
	// not in allowed (GPULEDGER_TEAM_OUTSIDERS): they reach their teams
	// only, never a ledger of their own. Guarded by mu.
	outsiders map[int64]bool

	mu        sync.Mutex
	owner     int64          // claimed or configured owner; 0 none
	claimHash string         // "" when no claim is possible
	refused   map[int64]bool // refused once (cache of meta)
	tries     map[int64]int  // wrong claim codes per user
	claimCode string         // the code generated at this start, to print
}

// LoadAccess reads the owner and the claim code's hash, generating a new
// code when the bot has no owner, no allow list and no code yet. allowed
// is GPULEDGER_ALLOWED_USERS; owner a user who is the owner without
// claiming (the terminal console's), 0 for none.
func LoadAccess(ctx context.Context, st ledger.Store, allowed []int64, owner int64) (*Access, error) {
	a := &Access{
		store:     st,
		allowed:   make(map[int64]bool, len(allowed)),
		owner:     owner,
		refused:   make(map[int64]bool),
		tries:     make(map[int64]int),
		outsiders: make(map[int64]bool),
	}
	for _, id := range allowed {
		a.allowed[id] = true
	}
	if owner != 0 {
		a.allowed[owner] = true
	}
	if ts, ok := st.(ledger.TeamStore); ok {
		ids, err := ts.Outsiders(ctx)
		if err != nil {
			return nil, fmt.Errorf("bot: read the teams' outsiders: %w", err)
		}
		for _, id := range ids {
			a.outsiders[id] = true
		}
	}
	v, ok, err := st.Meta(ctx, metaOwner)
	if err != nil {
		return nil, fmt.Errorf("bot: read owner: %w", err)
	}
	if ok && v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("bot: meta %s=%q is not a user ID: %w", metaOwner, v, err)
		}
		a.allowed[id] = true
		if a.owner == 0 {
			a.owner = id
		}
		return a, nil
	}
	if len(allowed) > 0 || owner != 0 {
		return a, nil // an allow list or a console: nothing to claim
	}
	h, ok, err := st.Meta(ctx, metaClaimHash)
	if err != nil {
		return nil, fmt.Errorf("bot: read claim code: %w", err)
	}
	if ok && h != "" {
		a.claimHash = h // printed at an earlier start; unchanged
		return a, nil
	}
	code, err := newClaimCode()
	if err != nil {
		return nil, err
	}
	h = hashCode(code)
	if err := st.SetMeta(ctx, metaClaimHash, h); err != nil {
		return nil, fmt.Errorf("bot: store claim code: %w", err)
	}
	a.claimHash, a.claimCode = h, code
	return a, nil
}

func newClaimCode() (string, error) {
	var b [claimLen]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("bot: claim code: %w", err)
	}
	out := make([]byte, claimLen)
	for i, c := range b {
		out[i] = claimAlphabet[int(c)%len(claimAlphabet)]
	}
	return string(out), nil
}

func hashCode(code string) string {
	s := sha256.Sum256([]byte(strings.ToLower(strings.TrimSpace(code))))
	return hex.EncodeToString(s[:])
}

// ClaimCode returns the one-time owner claim code generated at this start,
// for the server to print, or "" when none was generated: the bot has an
// owner or an allow list, or a code was generated at an earlier start (it
// is kept only hashed; it stays valid until the bot is claimed).
func (a *Access) ClaimCode() string { return a.claimCode }

// WaitingForClaim reports whether the bot has no owner and no allow list
// yet, so the server can remind that the code printed at first start is
// still needed.
func (a *Access) WaitingForClaim() bool { return a.claimable() }

// Allowed reports whether id may use the ledger (the allow list, the
// owner, a person a team admitted from outside the list); the dashboard
// and the Telegram transport ask it too.
func (a *Access) Allowed(id int64) bool {
	if id == 0 {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.allowed[id] || a.outsiders[id]
}

// Personal reports whether id has a ledger of their own here: the allow
// list, the owner, the console. A person a team admitted from outside the
// allow list is Allowed but not Personal: they reach their teams only,
// and none of the operator's commands.
func (a *Access) Personal(id int64) bool {
	if id == 0 {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.allowed[id]
}

// forgetOutsiders takes every outsider off, when the server no longer
// lets a team's invite admit people outside the allow list: they are
// strangers again (their memberships stay in the store, and come back
// if the setting is turned on again).
func (a *Access) forgetOutsiders() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.outsiders)
}

// joinAllowed reports whether id may still try a team's join code: each
// person's wrong codes (allowed users and outsiders too) share the claim's
// bound, maxClaimTries in a run of the server.
func (a *Access) joinAllowed(id int64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.tries[id] < maxClaimTries
}

// joinFailed counts a person's refused join code.
func (a *Access) joinFailed(id int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tries[id]++
}

// Admit lets id in as a team's outsider, after a join the server allowed
// (the store keeps it: LoadAccess reads it back at the next start).
func (a *Access) Admit(id int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.outsiders[id] = true
}

// Forget takes an outsider off when they are in no team any more; a
// person of the allow list is not affected.
func (a *Access) Forget(id int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.outsiders, id)
}

// claimable reports whether the bot still waits for its owner's code.
func (a *Access) claimable() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.claimHash != "" && a.owner == 0
}

// claimResult is what a /start CODE from a stranger did.
type claimResult int

const (
	claimNo      claimResult = iota // nothing to claim, or the code is not for claiming
	claimOK                         // the user is now the owner
	claimWrong                      // a wrong code: say so
	claimSilence                    // too many wrong codes: say nothing
)

// claim makes id the owner if code is right. The owner is persisted before
// it takes effect, so a crash cannot leave an owner in memory only.
func (a *Access) claim(ctx context.Context, id int64, code string) (claimResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.claimHash == "" || a.owner != 0 {
		return claimNo, nil
	}
	if a.tries[id] >= maxClaimTries {
		return claimSilence, nil
	}
	if subtle.ConstantTimeCompare([]byte(hashCode(code)), []byte(a.claimHash)) != 1 {
		a.tries[id]++
		return claimWrong, nil
	}
	if err := a.store.SetMeta(ctx, metaOwner, strconv.FormatInt(id, 10)); err != nil {
		return claimNo, fmt.Errorf("bot: store owner: %w", err)
	}
	a.owner = id
	a.allowed[id] = true
	return claimOK, nil
}

// firstRefusal reports whether id has not been refused before, and records
// that it now has (in memory and in the store, so a restart keeps the
// silence).
func (a *Access) firstRefusal(ctx context.Context, id int64) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.refused[id] {
		return false, nil
	}
	key := metaRefused + strconv.FormatInt(id, 10)
	_, seen, err := a.store.Meta(ctx, key)
	if err != nil {
		return false, fmt.Errorf("bot: read refusal: %w", err)
	}
	if !seen {
		if err := a.store.SetMeta(ctx, key, "1"); err != nil {
			return false, fmt.Errorf("bot: store refusal: %w", err)
		}
	}
	a.refused[id] = true
	return !seen, nil
}

// ButtonSecret returns the key of the server's button data, kept in the
// store (created at first start): the key the core has always signed
// with, so buttons already sent keep working across restarts and
// upgrades. The server makes its chat.Buttons with it before the core.
func ButtonSecret(ctx context.Context, st ledger.MetaStore) ([]byte, error) {
	return loadSecret(ctx, st, nil)
}

// loadSecret returns the HMAC key for buttons: configured, else kept in
// the store (created at first start), so buttons survive a restart.
func loadSecret(ctx context.Context, st ledger.MetaStore, configured []byte) ([]byte, error) {
	if len(configured) > 0 {
		return configured, nil
	}
	v, ok, err := st.Meta(ctx, metaSecret)
	if err != nil {
		return nil, fmt.Errorf("bot: read secret: %w", err)
	}
	if ok {
		if b, err := hex.DecodeString(v); err == nil && len(b) >= 16 {
			return b, nil
		}
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("bot: secret: %w", err)
	}
	if err := st.SetMeta(ctx, metaSecret, hex.EncodeToString(b)); err != nil {
		return nil, fmt.Errorf("bot: store secret: %w", err)
	}
	return b, nil
}
