package dashboard

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// grant is a live one-time code or session: who it signs in and until
// when. The code or token itself is never kept, only its SHA-256 (the
// maps' key), so a memory dump signs nobody in.
type grant struct {
	user    int64
	name    string // Telegram first name or username, from initData
	lang    string // the user's language once their book was read
	created time.Time
	expires time.Time
}

type grantKey struct{}

// newSecret returns 32 random bytes, base64url, and their SHA-256.
func newSecret() (string, [32]byte, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", [32]byte{}, fmt.Errorf("dashboard: random: %w", err)
	}
	s := base64.RawURLEncoding.EncodeToString(b[:])
	return s, sha256.Sum256([]byte(s)), nil
}

// put stores g under h in m, keeping at most perUser live grants of
// g.user (perUser 0: no such limit) and max in all: expired ones go
// first, then the oldest. The caller holds s.mu.
func put(m map[[32]byte]*grant, h [32]byte, g *grant, now time.Time, perUser, max int) {
	for perUser > 0 {
		var oldest [32]byte
		n, found := 0, false
		for k, o := range m {
			if o.user != g.user || !o.expires.After(now) {
				continue
			}
			n++
			if !found || o.created.Before(m[oldest].created) {
				oldest, found = k, true
			}
		}
		if n < perUser {
			break
		}
		delete(m, oldest)
	}
	if len(m) >= max {
		for k, o := range m {
			if !o.expires.After(now) {
				delete(m, k)
			}
		}
	}
	for len(m) >= max {
		var oldest [32]byte
		found := false
		for k, o := range m {
			if !found || o.created.Before(m[oldest].created) {
				oldest, found = k, true
			}
		}
		delete(m, oldest)
	}
	m[h] = g
}

// Link returns a one-time sign-in link for the user (bot.DashboardLinks):
// PublicURL + PathLogin + "?code=CODE", valid for LinkTTL. A user has at
// most five live links (a sixth evicts the oldest); the server at most
// 10,000.
func (s *Server) Link(ctx context.Context, userID int64) (string, time.Time, error) {
	if s.publicURL == "" {
		return "", time.Time{}, errors.New("dashboard: no public URL: set GPULEDGER_PUBLIC_URL to the hub's address")
	}
	code, h, err := newSecret()
	if err != nil {
		return "", time.Time{}, err
	}
	now := s.now()
	g := &grant{user: userID, created: now, expires: now.Add(LinkTTL)}
	s.mu.Lock()
	put(s.links, h, g, now, maxLinksPerUser, maxLinks)
	s.mu.Unlock()
	return s.publicURL + PathLogin + "?code=" + code, g.expires, nil
}

// Revoke makes a link from Link unusable and frees its place among the
// user's live links (bot.LinkRevoker: the bot could not deliver it).
// Anything that is not a live link of this server is ignored.
func (s *Server) Revoke(_ context.Context, link string) {
	u, err := url.Parse(link)
	if err != nil {
		return
	}
	code := u.Query().Get("code")
	if code == "" {
		return
	}
	h := sha256.Sum256([]byte(code))
	s.mu.Lock()
	delete(s.links, h)
	s.mu.Unlock()
}

// newSession starts a session for user and returns its token.
func (s *Server) newSession(user int64, name string, now time.Time) (string, time.Time, error) {
	tok, h, err := newSecret()
	if err != nil {
		return "", time.Time{}, err
	}
	g := &grant{user: user, name: name, created: now, expires: now.Add(SessionTTL)}
	s.mu.Lock()
	put(s.sessions, h, g, now, 0, maxSessions)
	s.mu.Unlock()
	return tok, g.expires, nil
}

// handleLogin consumes a one-time code, sets the session cookie and
// redirects to the page. HEAD looks without consuming (link previews and
// scanners send it). Every refusal is a small HTML page in both
// languages that says to send /dashboard again.
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	if len(r.URL.RawQuery) > MaxQuery {
		s.loginPage(w, r, http.StatusBadRequest, "login_bad")
		return
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	code := q.Get("code")
	if err != nil || len(q["code"]) > 1 || len(code) > 64 {
		s.loginPage(w, r, http.StatusBadRequest, "login_bad")
		return
	}
	if code == "" {
		s.loginPage(w, r, http.StatusUnauthorized, "login_missing")
		return
	}
	h := sha256.Sum256([]byte(code))
	now := s.now()
	s.mu.Lock()
	g, ok := s.links[h]
	live := ok && g.expires.After(now)
	if ok && (!live || r.Method != http.MethodHead) {
		delete(s.links, h)
	}
	s.mu.Unlock()
	if !live {
		s.loginPage(w, r, http.StatusGone, "login_expired")
		return
	}
	if !s.isAllowed(g.user) {
		s.loginPage(w, r, http.StatusForbidden, "login_not_allowed")
		return
	}
	if r.Method == http.MethodHead {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		return
	}
	tok, _, err := s.newSession(g.user, "", now)
	if err != nil {
		s.log.Error("dashboard: new session", "err", err)
		s.loginPage(w, r, http.StatusInternalServerError, "login_internal")
		return
	}
	// The paths as the browser sees them: behind a proxy that strips a
	// prefix, the path this server was asked for lacks it.
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: tok, Path: s.prefix + PathApp, MaxAge: int(SessionTTL / time.Second),
		HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, s.prefix+PathApp, http.StatusSeeOther)
}

// loginPage writes a refusal of a one-time link as HTML, English then
// Chinese (the user is not known yet, so both).
func (s *Server) loginPage(w http.ResponseWriter, r *http.Request, status int, key string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return
	}
	en, zh := html.EscapeString(messages.Text(chat.LangEN, key)), html.EscapeString(messages.Text(chat.LangZH, key))
	fmt.Fprintf(w, "<!doctype html>\n<html><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">"+
		"<title>gpuledger</title></head><body><p lang=\"en\">%s</p><p lang=\"zh\">%s</p></body></html>\n", en, zh)
}

// initUser is the part of initData's user field the dashboard reads.
type initUser struct {
	ID        json.Number `json:"id"`
	FirstName string      `json:"first_name"`
	Username  string      `json:"username"`
}

// authError is a refused initData: the ErrorAnswer code and message key.
type authError struct{ code, key string }

// checkInitData validates initData as Telegram's Web Apps documentation
// specifies ("Validating data received via the Mini App") and returns the
// user, their display name and the hash (the replay key).
func (s *Server) checkInitData(raw string, now time.Time) (int64, string, [32]byte, *authError) {
	var none [32]byte
	bad := &authError{"auth_invalid", "auth_invalid"}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return 0, "", none, bad
	}
	hashes := q["hash"]
	if len(hashes) != 1 {
		return 0, "", none, bad
	}
	got, err := hex.DecodeString(hashes[0])
	if err != nil || len(got) != sha256.Size {
		return 0, "", none, bad
	}
	keys := make([]string, 0, len(q))
	for k, v := range q {
		if len(v) != 1 {
			return 0, "", none, &authError{"auth_invalid", "auth_duplicate"}
		}
		if k != "hash" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	lines := make([]string, len(keys))
	for i, k := range keys {
		lines[i] = k + "=" + q.Get(k)
	}
	secret := hmac.New(sha256.New, []byte("WebAppData"))
	secret.Write([]byte(s.botToken))
	mac := hmac.New(sha256.New, secret.Sum(nil))
	mac.Write([]byte(strings.Join(lines, "\n")))
	if !hmac.Equal(mac.Sum(nil), got) {
		return 0, "", none, bad
	}
	at, err := strconv.ParseInt(q.Get("auth_date"), 10, 64)
	if err != nil || at <= 0 {
		return 0, "", none, &authError{"auth_invalid", "auth_no_date"}
	}
	authDate := time.Unix(at, 0)
	if authDate.After(now.Add(maxFuture)) {
		return 0, "", none, &authError{"auth_invalid", "auth_future"}
	}
	if now.Sub(authDate) > s.maxAge {
		return 0, "", none, &authError{"auth_stale", "auth_stale"}
	}
	var u initUser
	dec := json.NewDecoder(strings.NewReader(q.Get("user")))
	dec.UseNumber()
	if err := dec.Decode(&u); err != nil {
		return 0, "", none, &authError{"auth_invalid", "auth_no_user"}
	}
	id, err := strconv.ParseInt(string(u.ID), 10, 64)
	if err != nil || id == 0 {
		return 0, "", none, &authError{"auth_invalid", "auth_no_user"}
	}
	name := u.FirstName
	if name == "" {
		name = u.Username
	}
	return id, name, [32]byte(got), nil
}

// handleSession exchanges initData (the body, text/plain) for a session
// token, once per initData.
func (s *Server) handleSession(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxInitData+1))
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, "bad_request", "err_body")
		return
	}
	if len(body) > MaxInitData {
		s.fail(w, r, http.StatusRequestEntityTooLarge, "too_large", "err_too_large", MaxInitData)
		return
	}
	raw := strings.TrimSpace(string(body))
	if raw == "" {
		s.fail(w, r, http.StatusUnauthorized, "auth_missing", "auth_missing")
		return
	}
	if s.botToken == "" {
		s.fail(w, r, http.StatusUnauthorized, "auth_invalid", "auth_no_bot")
		return
	}
	now := s.now()
	user, name, h, aerr := s.checkInitData(raw, now)
	if aerr != nil {
		s.fail(w, r, http.StatusUnauthorized, aerr.code, aerr.key)
		return
	}
	if !s.isAllowed(user) {
		s.fail(w, r, http.StatusForbidden, "not_allowed", "not_allowed")
		return
	}
	s.mu.Lock()
	_, used := s.usedInit[h]
	if !used {
		s.markUsed(h, now)
	}
	s.mu.Unlock()
	if used {
		s.fail(w, r, http.StatusUnauthorized, "auth_replayed", "auth_replayed")
		return
	}
	tok, exp, err := s.newSession(user, name, now)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, SessionAnswer{Token: tok, ExpiresAt: exp})
}

// markUsed remembers an exchanged initData until it would be stale
// anyway (plus the future margin); beyond maxUsedInitData entries the
// stale ones are dropped, then the ones closest to going stale. The
// caller holds s.mu.
func (s *Server) markUsed(h [32]byte, now time.Time) {
	if len(s.usedInit) >= maxUsedInitData {
		for k, until := range s.usedInit {
			if !until.After(now) {
				delete(s.usedInit, k)
			}
		}
		for len(s.usedInit) >= maxUsedInitData {
			var first [32]byte
			found := false
			for k, until := range s.usedInit {
				if !found || until.Before(s.usedInit[first]) {
					first, found = k, true
				}
			}
			delete(s.usedInit, first)
		}
	}
	s.usedInit[h] = now.Add(s.maxAge + maxFuture)
}

// pageHandler answers one signed-in user's request with their book.
type pageHandler func(w http.ResponseWriter, r *http.Request, g *grant, b *ledger.Book)

// api authenticates the request (a bearer token, else the cookie),
// checks that the user is still allowed and has a ledger of their own
// (403 "not_personal" for a team's outsider), reads their book and
// calls h.
func (s *Server) api(h pageHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		g, ok := s.session(w, r)
		if !ok {
			return
		}
		if !s.isPersonal(g.user) {
			g.lang = s.langOf(r.Context(), g.user)
			r = r.WithContext(context.WithValue(r.Context(), grantKey{}, g))
			s.fail(w, r, http.StatusForbidden, "not_personal", "not_personal")
			return
		}
		b, err := s.book(r.Context(), g)
		if err != nil {
			s.internal(w, r, err)
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), grantKey{}, g))
		h(w, r, g, b)
	}
}

// book reads the signed-in user's own book (an empty one when they have
// none yet) and sets g's language from it.
func (s *Server) book(ctx context.Context, g *grant) (*ledger.Book, error) {
	b, err := s.store.Book(ctx, g.user)
	if ledger.ErrorCode(err) == ledger.ENOTFOUND {
		b, err = &ledger.Book{User: ledger.User{ID: g.user, Lang: chat.LangEN}}, nil
	}
	if err != nil {
		return nil, err
	}
	g.lang = chat.NormLang(b.User.Lang)
	return b, nil
}

// session authenticates the request (a bearer token, else the cookie)
// and checks that the user is still allowed; it returns a copy of the
// session's grant, or ok false when it answered a refusal.
func (s *Server) session(w http.ResponseWriter, r *http.Request) (*grant, bool) {
	tok := ""
	if a := r.Header.Get("Authorization"); a != "" {
		t, ok := strings.CutPrefix(a, "Bearer ")
		if !ok || strings.TrimSpace(t) == "" {
			s.fail(w, r, http.StatusUnauthorized, "auth_invalid", "auth_bad_header")
			return nil, false
		}
		tok = strings.TrimSpace(t)
	} else if c, err := r.Cookie(CookieName); err == nil {
		tok = c.Value
	}
	if tok == "" {
		s.fail(w, r, http.StatusUnauthorized, "auth_missing", "auth_missing")
		return nil, false
	}
	now := s.now()
	hs := sha256.Sum256([]byte(tok))
	s.mu.Lock()
	g, ok := s.sessions[hs]
	if ok && !g.expires.After(now) {
		delete(s.sessions, hs)
	}
	var copyG grant
	if ok {
		copyG = *g
	}
	s.mu.Unlock()
	switch {
	case !ok:
		s.fail(w, r, http.StatusUnauthorized, "auth_invalid", "auth_unknown_session")
		return nil, false
	case !copyG.expires.After(now):
		s.fail(w, r, http.StatusUnauthorized, "auth_stale", "auth_session_ended")
		return nil, false
	case !s.isAllowed(copyG.user):
		s.fail(w, r, http.StatusForbidden, "not_allowed", "not_allowed")
		return nil, false
	}
	return &copyG, true
}
