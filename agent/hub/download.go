package hub

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
	"github.com/gpuledger/gpuledger/ledger"
)

// Paths of the agent download endpoints.
const (
	PathAgentDownload = "/agent/download"
	PathAgentChecksum = "/agent/download.sha256"
	PathAgentInstall  = "/agent/install.sh"
)

// HeaderChecksum carries the hex SHA-256 of the agent binary on
// GET /agent/download, so a client can verify what it received.
const HeaderChecksum = "X-Checksum-Sha256"

// DownloadConfig configures Downloads.
type DownloadConfig struct {
	// Binary is the path of the agent binary handed out. When it is empty
	// or the file is missing, the endpoints answer 503 and say so.
	Binary string
	// PublicURL is the server URL written into install.sh: where the
	// script downloads the binary from and where the agent reports.
	PublicURL string
	// Tokens, when set, makes install.sh refuse tokens that are unknown or
	// revoked, so a typo is caught before anything is installed: a
	// rental's agent token, or an enrolment token (wire.IsEnrolToken),
	// each looked up where the hub keeps its kind.
	Tokens *Tokens
	// Logger receives errors; default slog.Default(). Tokens are never
	// logged.
	Logger *slog.Logger
	// StallTimeout is how long the binary's download may wait on a client
	// that reads nothing; default DefaultStallTimeout. The server's write
	// timeout does not cut a download short: every piece written moves the
	// connection's write deadline StallTimeout ahead, so a client on a slow
	// link that keeps reading finishes, and one that stopped is cut off
	// StallTimeout later (it can resume with a Range request).
	StallTimeout time.Duration
}

// DefaultStallTimeout is DownloadConfig.StallTimeout's default: the
// server's write timeout for everything else.
const DefaultStallTimeout = 30 * time.Second

// downloadPiece is the most written to a download at once, between moves
// of the write deadline: a client that reads downloadPiece bytes per
// StallTimeout (about 550 bytes a second at the defaults) is never cut off.
const downloadPiece = 16 << 10

// Downloads serves the agent binary, its checksum and an install script
// (GET /agent/download, /agent/download.sha256, /agent/install.sh). The
// checksum is computed once per version of the file (size and mtime) and
// cached. It is safe for concurrent use.
type Downloads struct {
	cfg DownloadConfig
	log *slog.Logger

	mu  sync.Mutex
	sum cachedSum
}

type cachedSum struct {
	size  int64
	mtime time.Time
	hex   string
}

// CheckPublicURL returns an error when s cannot be the server URL written
// into install.sh: agents fetch the binary and send heartbeats there, so
// it must be an http or https URL with a host. It may have a path (a
// reverse proxy serving the hub under a prefix); it may not have a query
// or a fragment, since every address handed out is the URL plus a path.
func CheckPublicURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("public URL %q is not an http(s) URL like https://ledger.example.com", s)
	}
	if strings.ContainsAny(s, "?#") {
		return fmt.Errorf("public URL %q has a query or a fragment; give the address only, like https://ledger.example.com or https://example.com/ledger", s)
	}
	return nil
}

// NewDownloads returns the download endpoints for cfg. A missing binary is
// not an error (the endpoints say it is missing); a PublicURL that is not
// an http or https URL is.
func NewDownloads(cfg DownloadConfig) (*Downloads, error) {
	if err := CheckPublicURL(cfg.PublicURL); err != nil {
		return nil, fmt.Errorf("hub: downloads: %w", err)
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.StallTimeout <= 0 {
		cfg.StallTimeout = DefaultStallTimeout
	}
	return &Downloads{cfg: cfg, log: cfg.Logger}, nil
}

// Register adds the download routes to mux.
func (d *Downloads) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET "+PathAgentDownload, d.serveBinary)
	mux.HandleFunc("GET "+PathAgentChecksum, d.serveChecksum)
	mux.HandleFunc("GET "+PathAgentInstall, d.serveInstall)
}

// errNoBinary is answered when the configured binary cannot be read.
var errNoBinary = errors.New("the agent binary is not available on this server")

// open opens the binary and returns it with its SHA-256 (hex).
func (d *Downloads) open() (*os.File, fs.FileInfo, string, error) {
	if d.cfg.Binary == "" {
		return nil, nil, "", fmt.Errorf("%w: no path is configured (set GPULEDGER_AGENT_BINARY)", errNoBinary)
	}
	f, err := os.Open(d.cfg.Binary)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, "", fmt.Errorf("%w: %s does not exist (set GPULEDGER_AGENT_BINARY to the portable build)", errNoBinary, d.cfg.Binary)
		}
		return nil, nil, "", fmt.Errorf("%w: %v", errNoBinary, err)
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, "", fmt.Errorf("%w: %s is not a regular file", errNoBinary, d.cfg.Binary)
	}
	d.mu.Lock()
	c := d.sum
	d.mu.Unlock()
	if c.hex != "" && c.size == st.Size() && c.mtime.Equal(st.ModTime()) {
		return f, st, c.hex, nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		f.Close()
		return nil, nil, "", fmt.Errorf("%w: read %s: %v", errNoBinary, d.cfg.Binary, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, nil, "", fmt.Errorf("%w: %v", errNoBinary, err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	d.mu.Lock()
	d.sum = cachedSum{size: st.Size(), mtime: st.ModTime(), hex: sum}
	d.mu.Unlock()
	return f, st, sum, nil
}

// Checksum returns the hex SHA-256 of the agent binary.
func (d *Downloads) Checksum() (string, error) {
	f, _, sum, err := d.open()
	if err != nil {
		return "", err
	}
	f.Close()
	return sum, nil
}

// AgentBinary returns the path the binary is served from, and nil when
// /agent/download can serve it, else why not (the bot's /agent says so;
// see bot.AgentDownloads). The file is looked at on every call: a binary
// put in place later is served without a restart.
func (d *Downloads) AgentBinary() (string, error) {
	_, err := d.Checksum()
	return d.cfg.Binary, err
}

func (d *Downloads) unavailable(w http.ResponseWriter, err error) {
	d.log.Warn("agent download unavailable", "err", err)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusServiceUnavailable)
	fmt.Fprintln(w, err.Error())
}

func (d *Downloads) serveBinary(w http.ResponseWriter, r *http.Request) {
	f, st, sum, err := d.open()
	if err != nil {
		d.unavailable(w, err)
		return
	}
	defer f.Close()
	w.Header().Set(HeaderChecksum, sum)
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="gpuledger-agent"`)
	// A strong validator: the same bytes always have the same ETag.
	w.Header().Set("ETag", `"sha256-`+sum+`"`)
	// ServeContent answers Range and If-Range, so a cut download resumes
	// where it stopped (curl -C -, wget -c).
	http.ServeContent(newProgressWriter(w, d.cfg.StallTimeout), r, "gpuledger-agent", st.ModTime(), f)
}

// progressWriter writes a response in pieces of at most downloadPiece
// bytes and moves the connection's write deadline stall ahead before
// each, so that the server's WriteTimeout (meant for short answers) does
// not cut off a long download that is progressing. It does not implement
// io.ReaderFrom on purpose: sendfile would write the whole file under
// one deadline.
type progressWriter struct {
	http.ResponseWriter
	rc    *http.ResponseController
	stall time.Duration
	// noDeadline is set once the writer turns out not to support
	// deadlines (a test recorder): the pieces are still written.
	noDeadline bool
}

func newProgressWriter(w http.ResponseWriter, stall time.Duration) *progressWriter {
	p := &progressWriter{ResponseWriter: w, rc: http.NewResponseController(w), stall: stall}
	// The request has been read: the server's read deadline must not end
	// the connection (and cancel the request) while the body is sent.
	if err := p.rc.SetReadDeadline(time.Time{}); err != nil {
		p.noDeadline = true
	}
	return p
}

func (p *progressWriter) Write(b []byte) (int, error) {
	written := 0
	for len(b) > 0 {
		n := min(len(b), downloadPiece)
		if !p.noDeadline {
			if err := p.rc.SetWriteDeadline(time.Now().Add(p.stall)); err != nil {
				p.noDeadline = true
			}
		}
		m, err := p.ResponseWriter.Write(b[:n])
		written += m
		if err != nil {
			return written, err
		}
		b = b[n:]
	}
	return written, nil
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (p *progressWriter) Unwrap() http.ResponseWriter { return p.ResponseWriter }

func (d *Downloads) serveChecksum(w http.ResponseWriter, _ *http.Request) {
	sum, err := d.Checksum()
	if err != nil {
		d.unavailable(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	// The format of sha256sum, so `sha256sum -c` can read it.
	fmt.Fprintf(w, "%s  gpuledger-agent\n", sum)
}

// serveInstall answers a POSIX sh script that installs and starts the
// agent for the token in ?token= (or the Authorization header). Errors
// are answered as scripts too, which print the reason and exit 1, so that
// `curl -sSL URL | sh` fails loudly.
func (d *Downloads) serveInstall(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store") // the body holds the token
	w.Header().Set("Content-Type", "text/x-shellscript; charset=utf-8")
	tok := r.URL.Query().Get("token")
	if tok == "" {
		tok, _ = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		tok = strings.TrimSpace(tok)
	}
	if tok == "" {
		failScript(w, http.StatusBadRequest, "no token: use the install command that /agent or /agent NAME shows (it ends in ?token=...)")
		return
	}
	if !validToken(tok) {
		failScript(w, http.StatusBadRequest, "malformed token: copy the whole install command that /agent or /agent NAME shows")
		return
	}
	rental := ""
	if d.cfg.Tokens != nil && wire.IsEnrolToken(tok) {
		rec, err := d.cfg.Tokens.hub.store.EnrolTokenByHash(r.Context(), hashToken(tok))
		switch {
		case ledger.ErrorCode(err) == ledger.ENOTFOUND:
			failScript(w, http.StatusForbidden, msgEnrolUnknown)
			return
		case err != nil:
			d.log.Error("install script: enrolment token lookup", "err", err)
			failScript(w, StatusOf(err), "the server could not check the token; try again")
			return
		case !rec.Valid():
			failScript(w, http.StatusForbidden, msgEnrolRevoked)
			return
		}
	} else if d.cfg.Tokens != nil {
		rec, err := d.cfg.Tokens.lookup(r.Context(), tok)
		switch {
		case ledger.ErrorCode(err) == ledger.ENOTFOUND:
			failScript(w, http.StatusForbidden, "unknown agent token: run /agent NAME again and use the new command")
			return
		case err != nil:
			d.log.Error("install script: token lookup", "err", err)
			failScript(w, StatusOf(err), "the server could not check the token; try again")
			return
		case !rec.Valid():
			failScript(w, http.StatusForbidden, "this agent token was revoked (the rental was released or a newer token was issued): run /agent NAME again")
			return
		}
		rental = rec.Rental
	}
	sum, err := d.Checksum()
	if err != nil {
		d.log.Warn("agent download unavailable", "err", err)
		failScript(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	script, err := InstallScript(InstallParams{Server: d.cfg.PublicURL, Token: tok, Rental: rental, SHA256: sum})
	if err != nil {
		failScript(w, http.StatusInternalServerError, err.Error())
		return
	}
	io.WriteString(w, script)
}

// validToken accepts what Tokens.Issue makes (unpadded base64url) and
// nothing that would need quoting in a shell script.
func validToken(tok string) bool {
	if len(tok) < 16 || len(tok) > 256 {
		return false
	}
	for _, c := range tok {
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}

// lookup returns the stored record of tok without taking from its rate
// bucket. Errors: ENOTFOUND.
func (t *Tokens) lookup(ctx context.Context, tok string) (ledger.AgentToken, error) {
	return t.hub.store.TokenByHash(ctx, hashToken(tok))
}

func failScript(w http.ResponseWriter, code int, msg string) {
	w.WriteHeader(code)
	fmt.Fprintf(w, "#!/bin/sh\necho %s >&2\nexit 1\n", shQuote("gpuledger install: "+msg))
}

// shQuote quotes s for a POSIX shell: within single quotes nothing is
// special but the single quote itself.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// RedactQuery returns the request URI of r with the values of secret
// query parameters (token) replaced, for access logs.
func RedactQuery(u *url.URL) string {
	if u.RawQuery == "" {
		return u.Path
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return u.Path + "?[unparsable query]"
	}
	for k := range q {
		switch strings.ToLower(k) {
		case "token", "access_token", "key", "secret", "code":
			q[k] = []string{"REDACTED"}
		}
	}
	return u.Path + "?" + q.Encode()
}

// AccessLog wraps next with a log line per request (method, path with
// secrets redacted, status, bytes, duration) at debug level, and at info
// for the download endpoints, which people use by hand. The
// Authorization header and query tokens never reach the log.
func AccessLog(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		level := slog.LevelDebug
		if strings.HasPrefix(r.URL.Path, "/agent/") {
			level = slog.LevelInfo
		}
		log.Log(r.Context(), level, "http request",
			"method", r.Method,
			"uri", RedactQuery(r.URL),
			"status", rec.status,
			"bytes", rec.bytes,
			"duration_ms", time.Since(start).Milliseconds(),
			"remote", r.RemoteAddr,
		)
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
	wrote  bool
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.wrote = true
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
