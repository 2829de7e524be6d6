package dashboard

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// Store is what the dashboard reads: one user's book, a rental's hourly
// heartbeat roll-ups and whether it ever had an agent token.
// ledger/sqlite's DB implements it. Every call is a read.
type Store interface {
	Book(ctx context.Context, userID int64) (*ledger.Book, error)
	HourStats(ctx context.Context, rentalID int64, from, to time.Time) ([]ledger.HourStat, error)
	TokenIssued(ctx context.Context, userID, rentalID int64) (bool, error)
}

// Config configures a Server. Store is required.
type Config struct {
	Store Store
	// Benches is where the receipts and the compare table are read; nil
	// uses Store when it implements BenchReader (ledger/sqlite's DB does),
	// else the pages show no receipt and an empty table.
	Benches BenchReader
	// BotToken is the Telegram bot's token, the key initData is signed
	// with; "" turns Telegram sign-in off (initData is then refused with
	// a message saying to use /dashboard's link).
	BotToken string
	// PublicURL is GPULEDGER_PUBLIC_URL, the hub's address as users reach
	// it (no trailing slash needed). Links and AppURL are built on it;
	// the cookie is Secure when it is https. It may have a path, for a
	// reverse proxy that serves the hub under a prefix and strips it: the
	// paths the browser is given (the login's redirect, the cookie's Path,
	// a month's export_url) then start with it.
	PublicURL string
	// Allowed says whether a user may use the dashboard, asked at every
	// request (bot.Access.Allowed, the chat's own decision, so that a
	// user the chat lets in or no longer does is let in or refused here
	// at once); nil refuses everyone.
	Allowed func(userID int64) bool
	// Personal says whether an allowed user has a ledger of their own
	// (bot.Access.Personal): a person admitted to a team from outside
	// the allow list (GPULEDGER_TEAM_OUTSIDERS) has none, and gets 403
	// from the personal pages (the month, a rental, the CSV, the compare
	// table) while their teams' views still answer. Asked at every
	// request; nil: Allowed.
	Personal func(userID int64) bool
	// Teams is where the team views read teams and their members; nil
	// uses Store when it implements ledger.TeamStore (ledger/sqlite's DB
	// does), else the user has no team views.
	Teams ledger.TeamStore
	// MaxAuthAge is how old initData's auth_date may be
	// (GPULEDGER_APP_AUTH_MAX_AGE). Default DefaultMaxAuthAge.
	MaxAuthAge time.Duration
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Logger receives internal errors in full. Default slog.Default().
	Logger *slog.Logger
}

// Sign-in limits.
const (
	DefaultMaxAuthAge = time.Hour
	LinkTTL           = 10 * time.Minute // a one-time link's life
	SessionTTL        = time.Hour        // a session's life
	MaxInitData       = 8 << 10          // bytes of initData accepted
	MaxQuery          = 1 << 10          // bytes of a query string accepted
	maxFuture         = time.Minute      // how far auth_date may be ahead of the clock
	maxLinksPerUser   = 5
	maxLinks          = 10000
	maxSessions       = 10000
	maxUsedInitData   = 100000
)

// Server serves the dashboard. It is safe for concurrent use.
type Server struct {
	store      Store
	benches    BenchReader
	botToken   string
	publicURL  string
	prefix     string // PublicURL's path ("" or "/ledger"): what the browser sees before PathApp
	secure     bool
	maxAge     time.Duration
	now        func() time.Time
	log        *slog.Logger
	allowed    func(int64) bool
	personal   func(int64) bool
	teams      ledger.TeamStore
	files      map[string]*staticFile
	mu         sync.Mutex // guards the three maps below
	links      map[[32]byte]*grant
	sessions   map[[32]byte]*grant
	usedInit   map[[32]byte]time.Time // hash of exchanged initData → when it goes stale
	hours      hourCache
	handlerMux http.Handler
}

// New returns a Server for cfg, or an error naming the field that is wrong.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("dashboard: Config.Store is required")
	}
	pub := strings.TrimRight(cfg.PublicURL, "/")
	prefix := ""
	if pub != "" {
		u, err := url.Parse(pub)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.ContainsAny(pub, "?#") {
			return nil, fmt.Errorf("dashboard: Config.PublicURL %q is not an http(s) URL like https://hub.example.com (a path is allowed, a query or fragment is not)", cfg.PublicURL)
		}
		prefix = u.EscapedPath()
	}
	if cfg.MaxAuthAge < 0 {
		return nil, fmt.Errorf("dashboard: Config.MaxAuthAge %s is negative; give a duration such as 1h", cfg.MaxAuthAge)
	}
	s := &Server{
		store:     cfg.Store,
		botToken:  cfg.BotToken,
		publicURL: pub,
		prefix:    prefix,
		secure:    strings.HasPrefix(pub, "https://"),
		maxAge:    cfg.MaxAuthAge,
		now:       cfg.Now,
		log:       cfg.Logger,
		links:     map[[32]byte]*grant{},
		sessions:  map[[32]byte]*grant{},
		usedInit:  map[[32]byte]time.Time{},
	}
	if s.maxAge == 0 {
		s.maxAge = DefaultMaxAuthAge
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.allowed = cfg.Allowed
	s.personal = cfg.Personal
	if s.personal == nil {
		s.personal = cfg.Allowed
	}
	s.teams = cfg.Teams
	if s.teams == nil {
		s.teams, _ = cfg.Store.(ledger.TeamStore)
	}
	s.benches = cfg.Benches
	if s.benches == nil {
		s.benches, _ = cfg.Store.(BenchReader)
	}
	files, err := loadStatic()
	if err != nil {
		return nil, err
	}
	s.files = files
	s.handlerMux = s.routes()
	return s, nil
}

// isAllowed reports whether userID may use the dashboard: asked at each
// request, so a user no longer allowed is refused from their next request
// on, session or not.
func (s *Server) isAllowed(userID int64) bool {
	return s.allowed != nil && s.allowed(userID)
}

// isPersonal reports whether userID has a ledger of their own here (an
// allowed user who is not only a team's outsider).
func (s *Server) isPersonal(userID int64) bool {
	return s.personal != nil && s.personal(userID)
}

// AppURL is the Mini App's URL for web-app buttons (bot.DashboardLinks):
// PublicURL + "/app/" when PublicURL is https, since Telegram opens no
// other; "" otherwise.
func (s *Server) AppURL() string {
	if !s.secure {
		return ""
	}
	return s.publicURL + PathApp
}

// Handler serves everything under PathApp; mount it at PathApp on the
// hub's mux.
func (s *Server) Handler() http.Handler { return s.handlerMux }

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(PathLogin, s.method(s.handleLogin, http.MethodGet, http.MethodHead))
	mux.HandleFunc(PathSession, s.method(s.handleSession, http.MethodPost))
	mux.HandleFunc(PathMe, s.method(s.apiTeam(s.handleMe), http.MethodGet, http.MethodHead))
	mux.HandleFunc(PathTeams, s.method(s.apiTeam(s.handleTeams), http.MethodGet, http.MethodHead))
	mux.HandleFunc(PathTeam, s.method(s.apiTeam(s.handleTeam), http.MethodGet, http.MethodHead))
	mux.HandleFunc(PathMonth, s.method(s.api(s.handleMonth), http.MethodGet, http.MethodHead))
	mux.HandleFunc(PathRental, s.method(s.api(s.handleRental), http.MethodGet, http.MethodHead))
	mux.HandleFunc(PathExport, s.method(s.api(s.handleExport), http.MethodGet, http.MethodHead))
	mux.HandleFunc(PathCompare, s.method(s.api(s.handleCompare), http.MethodGet, http.MethodHead))
	mux.HandleFunc(PathApp+"api/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, http.StatusNotFound, "not_found", "err_no_endpoint", r.URL.Path)
	})
	mux.HandleFunc(PathApp, s.method(s.handleStatic, http.MethodGet, http.MethodHead))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if strings.HasPrefix(r.URL.Path, PathApp+"api/") || r.URL.Path == PathLogin {
			h.Set("Cache-Control", "no-store")
		}
		mux.ServeHTTP(w, r)
	})
}

// CSP is the Content-Security-Policy of every answer: no inline script or
// style, nothing from elsewhere, and framing only by Telegram Web, which
// shows Mini Apps in its iframe.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors https://web.telegram.org"

// method answers 405 with Allow for any method but those given.
func (s *Server) method(h http.HandlerFunc, methods ...string) http.HandlerFunc {
	allow := strings.Join(methods, ", ")
	return func(w http.ResponseWriter, r *http.Request) {
		for _, m := range methods {
			if r.Method == m {
				h(w, r)
				return
			}
		}
		w.Header().Set("Allow", allow)
		s.fail(w, r, http.StatusMethodNotAllowed, "bad_request", "err_method", r.Method, allow)
	}
}

// query parses the request's query string: at most MaxQuery bytes, each
// parameter at most once. ok is false when it answered a refusal.
func (s *Server) query(w http.ResponseWriter, r *http.Request) (url.Values, bool) {
	raw := r.URL.RawQuery
	if len(raw) > MaxQuery {
		s.fail(w, r, http.StatusBadRequest, "bad_request", "err_query_long", MaxQuery)
		return nil, false
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, "bad_request", "err_query_bad")
		return nil, false
	}
	for k, v := range q {
		if len(v) > 1 {
			s.fail(w, r, http.StatusBadRequest, "bad_request", "err_query_repeated", k)
			return nil, false
		}
	}
	return q, true
}

// langOf is the language of a refusal before the user is known: Chinese
// when the browser prefers it, else English.
func langOf(r *http.Request) string {
	if g, ok := r.Context().Value(grantKey{}).(*grant); ok && g.lang != "" {
		return g.lang
	}
	al := strings.ToLower(r.Header.Get("Accept-Language"))
	if strings.HasPrefix(strings.TrimSpace(al), "zh") {
		return chat.LangZH
	}
	return chat.LangEN
}

// fail writes an ErrorAnswer with the message key rendered in the
// request's language.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, code, key string, args ...any) {
	s.writeJSON(w, r, status, ErrorAnswer{Code: code, Message: messages.Text(langOf(r), key, args...)})
}

// internal logs err in full and answers 500 with nothing of it.
func (s *Server) internal(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	s.log.Error("dashboard: internal error", "path", r.URL.Path, "err", err)
	s.writeJSON(w, r, http.StatusInternalServerError, ErrorAnswer{Code: "internal", Message: messages.Text(langOf(r), "err_internal")})
}

// gzipMin is the size from which an answer is sent gzipped to a client
// that accepts it (a rental's timeline can be a few hundred kilobytes).
const gzipMin = 1 << 10

func (s *Server) writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		s.log.Error("dashboard: encode answer", "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	b = append(b, '\n')
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Vary", "Accept-Encoding")
	if len(b) >= gzipMin && acceptsGzip(r.Header.Get("Accept-Encoding")) {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
		zw.Write(b)
		if zw.Close() == nil {
			h.Set("Content-Encoding", "gzip")
			b = buf.Bytes()
		}
	}
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(b)
	}
}
