package bot

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"strings"
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
	// maxButtonPayload keeps action + payload + MAC within MaxButtonData.
	maxButtonPayload = MaxButtonData - macChars - 2 - maxButtonAction
	maxButtonAction  = 5 // "pterm"
)

// Button actions of the core. Other parts (the idle card of the scheduler)
// register their own with Core.HandleButton.
const (
	actConfirm = "pc" // confirm a proposed rental
	actEdit    = "pe" // show the /rent text of a proposal to change
	actCancel  = "px" // drop a proposal
)

// signer makes and checks button data. It is safe for concurrent use (it
// holds only the key).
type signer struct {
	key []byte
}

func (s signer) mac(userID int64, action, payload string) string {
	m := hmac.New(sha256.New, s.key)
	var id [8]byte
	binary.BigEndian.PutUint64(id[:], uint64(userID))
	m.Write(id[:])
	// Lengths first, so ("ab","c") and ("a","bc") differ.
	m.Write([]byte{byte(len(action)), byte(len(payload))})
	m.Write([]byte(action))
	m.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:macBytes])
}

// sign returns the button data for userID. ok is false when action or
// payload are too long or contain ':' (a programming error the caller
// reports).
func (s signer) sign(userID int64, action, payload string) (string, bool) {
	if action == "" || len(action) > maxButtonAction || len(payload) > maxButtonPayload ||
		strings.Contains(action, ":") || strings.Contains(payload, ":") {
		return "", false
	}
	return action + ":" + payload + ":" + s.mac(userID, action, payload), true
}

// verify checks data against the presser's user ID and returns its action
// and payload.
func (s signer) verify(presser int64, data string) (action, payload string, ok bool) {
	if len(data) > MaxButtonData {
		return "", "", false
	}
	action, rest, ok1 := strings.Cut(data, ":")
	payload, mac, ok2 := strings.Cut(rest, ":")
	if !ok1 || !ok2 || action == "" || len(mac) != macChars {
		return "", "", false
	}
	want := s.mac(presser, action, payload)
	if !hmac.Equal([]byte(mac), []byte(want)) {
		return "", "", false
	}
	return action, payload, true
}
