// Package dashtest signs Telegram Mini App initData the way Telegram does,
// for tests of the dashboard's sign-in (Go tests and the browser tests).
package dashtest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// InitData returns initData for user as Telegram would give it to a Mini
// App of the bot with botToken at authDate: query_id, user (JSON with id,
// first_name and language_code), auth_date and hash.
func InitData(botToken string, user int64, authDate time.Time) string {
	u, _ := json.Marshal(map[string]any{"id": user, "first_name": "Test", "language_code": "en"})
	return Sign(botToken, map[string]string{
		"query_id":  "AAH" + strconv.FormatInt(user, 36),
		"user":      string(u),
		"auth_date": strconv.FormatInt(authDate.Unix(), 10),
	})
}

// Sign returns fields URL-encoded with the hash Telegram adds: the
// data-check-string is every field sorted by key as "key=value" joined by
// "\n"; the secret key is HMAC-SHA256 of the bot token under the key
// "WebAppData"; hash is the hex HMAC-SHA256 of the data-check-string under
// the secret key.
func Sign(botToken string, fields map[string]string) string {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	lines := make([]string, len(keys))
	q := url.Values{}
	for i, k := range keys {
		lines[i] = k + "=" + fields[k]
		q.Set(k, fields[k])
	}
	q.Set("hash", Hash(botToken, strings.Join(lines, "\n")))
	return q.Encode()
}

// Hash returns the hex hash of a data-check-string for botToken.
func Hash(botToken, dataCheckString string) string {
	secret := hmac.New(sha256.New, []byte("WebAppData"))
	secret.Write([]byte(botToken))
	mac := hmac.New(sha256.New, secret.Sum(nil))
	mac.Write([]byte(dataCheckString))
	return hex.EncodeToString(mac.Sum(nil))
}
