package chat

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gpuledger/gpuledger/internal/clip"
)

// Button data is what Telegram hands back when a button is pressed. Anyone
// can send a callback query with any data they like, so data is never
// trusted: it carries an action, a short payload and a MAC over (the user
// the button was made for, action, payload) keyed with the server's
// secret. The MAC is checked against the user who PRESSED the button, so a
// button made for one user does nothing when another presses it (in a
// group) and altered data is rejected.
//
// Format: ACTION ":" PAYLOAD ":" MAC, where MAC is the first 12 bytes of
// HMAC-SHA256 in unpadded base64url (16 characters). 96 bits are far more
// than an online guesser can try through Telegram.
const (
	macBytes = 12
	macChars = 16 // base64url of macBytes
	// MaxButtonData is Telegram's limit on callback_data, in bytes.
	MaxButtonData = 64
	// MaxButtonAction is the longest action ("pterm").
	MaxButtonAction = 5
	// MaxButtonPayload keeps action + payload + MAC within MaxButtonData.
	MaxButtonPayload = MaxButtonData - macChars - 2 - MaxButtonAction
)

// ButtonPress is a button press whose data was verified against the user
// who pressed it.
type ButtonPress struct {
	Update  Update    // the callback update (Key, UserID, ChatID, MessageID, CallbackID)
	Action  string    // the action the button was signed with
	Payload string    // its payload
	Now     time.Time // the clock, read once for this update
	// Lang and Loc are the presser's language and zone (nil: UTC), set
	// by whoever dispatches (the core, which has read the user): for the
	// toasts of stale and forged presses and of handlers' errors.
	Lang string
	Loc  *time.Location

	// Teams are the presser's team ledgers with their role in each
	// ("owner", "admin", "member"), set by whoever dispatches (the core
	// reads them), so that a card's button made for a team's ledger
	// works for each of its current members and for nobody else.
	Teams map[int64]string
	// Ledger is the ledger the button was made for, set by Dispatch: the
	// presser's own (Update.UserID), or the team ledger of Teams whose
	// button it is. Handlers read and write this ledger, never
	// Update.UserID's, and act as Update.UserID (ledger.Action.By).
	Ledger int64
	// Role is the presser's role in Ledger's team, set by Dispatch; "" on
	// their own ledger.
	Role string
}

// ActsOn is the ledger the press acts on: Ledger, or the presser's own
// when no Dispatch set it (a handler called directly).
func (p ButtonPress) ActsOn() int64 {
	if p.Ledger != 0 {
		return p.Ledger
	}
	return p.Update.UserID
}

// By is the person an action of the press names (ledger.Action.By): the
// presser on a team's ledger (Role set), whom the store checks and
// journals; 0 on their own ledger.
func (p ButtonPress) By() int64 {
	if p.Role != "" {
		return p.Update.UserID
	}
	return 0
}

// MayChange reports whether the presser may change a record of Ledger
// owned by owner: anything on their own ledger; on a team's, their own
// records, or any as an owner or admin of the team. Releasing and
// stopping are such changes; snoozing a card is not.
func (p ButtonPress) MayChange(owner int64) bool {
	return p.Role == "" || p.Role == "owner" || p.Role == "admin" || owner == p.Update.UserID
}

// ButtonFunc handles the presses of one action. On success it answers the
// press itself (Sender.AnswerCallback, with its toast, after any edit of
// the card) and returns nil. On failure it answers nothing and returns the
// error: Dispatch has the ErrorText given to NewButtons word it for the
// presser and answers with that toast, so no handler renders an error.
// A handler passes Update.Key to the one store call the press causes.
type ButtonFunc func(ctx context.Context, p ButtonPress, s Sender) error

// ErrorText words a handler's error as the toast (plain text) the presser reads, in
// their language and zone (the server builds it on the views: a ledger
// refusal in words, anything else logged and answered "something went
// wrong"). A press is answered, never delivered again: the user presses
// again.
type ErrorText func(ctx context.Context, p ButtonPress, err error) string

// Buttons signs buttons and routes their presses: the one home of the
// button data's format and key, of which part of the server owns which
// action, and of the toast a failed press gets. Each part registers its
// actions with Handle when it is made, before the transport runs; Sign and
// Dispatch are safe for concurrent use.
type Buttons struct {
	key     []byte
	errText ErrorText

	mu  sync.RWMutex
	fns map[string]ButtonFunc
}

// NewButtons returns the router for key (the server's button secret: the
// same key keeps buttons already sent valid across restarts) that words
// handlers' errors with errText. An empty key or a nil errText is a
// programming error: it panics.
func NewButtons(key []byte, errText ErrorText) *Buttons {
	if len(key) == 0 || errText == nil {
		panic("chat: NewButtons needs a key and an ErrorText")
	}
	return &Buttons{key: append([]byte(nil), key...), errText: errText, fns: make(map[string]ButtonFunc)}
}

// validAction reports whether action can be signed: 1 to MaxButtonAction
// bytes without ':'.
func validAction(action string) bool {
	return action != "" && len(action) <= MaxButtonAction && !strings.Contains(action, ":")
}

// Handle registers fn for the presses of action. Two owners of one action,
// an action that cannot be signed, or a nil fn is a programming error
// caught when the server is built: it panics, as http.ServeMux does.
func (b *Buttons) Handle(action string, fn ButtonFunc) {
	if !validAction(action) || fn == nil {
		panic(fmt.Sprintf("chat: button action %q: 1 to %d bytes without ':', and a handler", action, MaxButtonAction))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, dup := b.fns[action]; dup {
		panic(fmt.Sprintf("chat: button action %q registered twice", action))
	}
	b.fns[action] = fn
}

func (b *Buttons) mac(userID int64, action, payload string) string {
	m := hmac.New(sha256.New, b.key)
	var id [8]byte
	binary.BigEndian.PutUint64(id[:], uint64(userID))
	m.Write(id[:])
	// Lengths first, so ("ab","c") and ("a","bc") differ.
	m.Write([]byte{byte(len(action)), byte(len(payload))})
	m.Write([]byte(action))
	m.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:macBytes])
}

// Sign returns the callback data of a button for userID: only a press by
// that user is accepted. The action is at most MaxButtonAction bytes and
// the payload at most MaxButtonPayload (a rental or order ID), neither
// with ':'.
func (b *Buttons) Sign(userID int64, action, payload string) (string, error) {
	if !validAction(action) || len(payload) > MaxButtonPayload || strings.Contains(payload, ":") {
		return "", fmt.Errorf("chat: button data for action %q, payload %q: too long or contains ':'", action, payload)
	}
	return action + ":" + payload + ":" + b.mac(userID, action, payload), nil
}

// verify checks data against the presser's user ID and returns its action
// and payload.
func (b *Buttons) verify(presser int64, data string) (action, payload string, ok bool) {
	if len(data) > MaxButtonData {
		return "", "", false
	}
	action, rest, ok1 := strings.Cut(data, ":")
	payload, mac, ok2 := strings.Cut(rest, ":")
	if !ok1 || !ok2 || action == "" || len(mac) != macChars {
		return "", "", false
	}
	if !hmac.Equal([]byte(mac), []byte(b.mac(presser, action, payload))) {
		return "", "", false
	}
	return action, payload, true
}

// buttonTexts are the toasts of presses no handler runs.
var buttonTexts = Catalog{
	"not_yours": {
		"This button is not yours (or it is no longer valid).",
		"这个按钮不是给你的（或已失效）。"},
	"button_stale": {
		"This button no longer works.",
		"这个按钮已失效。"},
}

// maxToast is how much of a toast is shown: Telegram allows 200
// characters.
const maxToast = 190

// Dispatch verifies the data of the press p.Update against the user who
// pressed it and runs the handler of its action. A forged or altered
// press, or one of a button made for another user, changes nothing and is
// told so; a verified press of an action nobody handles (a button of an
// older version) is told the button no longer works; both in p.Lang. A
// handler's error is worded by the ErrorText and answered. Dispatch
// returns only a failure to answer.
func (b *Buttons) Dispatch(ctx context.Context, p ButtonPress, s Sender) error {
	action, payload, ok := b.verify(p.Update.UserID, p.Update.CallbackData)
	p.Ledger, p.Role = p.Update.UserID, ""
	if !ok {
		// A team's card: made for the team's ledger, pressed by a member.
		for ledgerID, role := range p.Teams {
			if action, payload, ok = b.verify(ledgerID, p.Update.CallbackData); ok {
				p.Ledger, p.Role = ledgerID, role
				break
			}
		}
	}
	if !ok {
		return b.answer(ctx, s, p, buttonTexts.Text(p.Lang, "not_yours"))
	}
	b.mu.RLock()
	fn := b.fns[action]
	b.mu.RUnlock()
	if fn == nil {
		return b.answer(ctx, s, p, buttonTexts.Text(p.Lang, "button_stale"))
	}
	p.Action, p.Payload = action, payload
	if err := fn(ctx, p, s); err != nil {
		return b.answer(ctx, s, p, b.errText(ctx, p, err))
	}
	return nil
}

// answer stops the press's spinner with toast (plain text), clipped to
// what Telegram shows.
func (b *Buttons) answer(ctx context.Context, s Sender, p ButtonPress, toast string) error {
	if err := s.AnswerCallback(ctx, p.Update.CallbackID, clip.Bytes(toast, maxToast, "…")); err != nil {
		return fmt.Errorf("chat: answer the press of %q: %w", p.Action, err)
	}
	return nil
}
