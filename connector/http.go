package connector

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/internal/clip"
	"github.com/gpuledger/gpuledger/ledger"
)

// MaxBody is the largest answer a connector reads (4 MiB): a page of
// instances is a few KiB; anything larger is not the documented API.
const MaxBody = 4 << 20

// DefaultRetryAfter is the wait after a 429 that gives no hint.
const DefaultRetryAfter = 30 * time.Second

// HTTP is the JSON-over-HTTP discipline every connector uses: one request,
// an answer of at most MaxBody bytes that must be JSON, statuses mapped to
// the package's errors, and the key kept out of every error text.
type HTTP struct {
	Platform string       // profile key, for errors
	Base     string       // base URL without a trailing slash
	Client   *http.Client // must have a Timeout; default 20 s
	// Auth sets the request's credentials (a header, never the URL, so
	// that no log of a URL carries the key). Whatever it sets goes to
	// Base's origin only: a redirect to another origin (scheme, host or
	// port) is refused with ErrBadAnswer, not followed.
	Auth func(*http.Request)
	// Secret is the key, removed from any error text that might quote it.
	Secret string
	// Explain, where set, reads the body of an answer that is not 2xx (429
	// aside) as the platform's own error envelope: detail replaces the raw
	// snippet in the error text (clipped, redacted; "" keeps the snippet),
	// and a non-nil kind replaces the error the status alone would give,
	// for a platform whose code says more than its status (Lambda's
	// "global/invalid-api-key").
	Explain func(status int, body []byte) (detail string, kind error)
}

// client returns the client to send with: a copy of Client (sharing its
// transport and connections) whose redirects stay within the request's
// origin (see sameOrigin).
func (h *HTTP) client() *http.Client {
	c := http.Client{Timeout: 20 * time.Second}
	if h.Client != nil {
		c = *h.Client
	}
	next := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := sameOrigin(req, via); err != nil {
			return err
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}

// errOtherOrigin is returned by the redirect check for a redirect that
// leaves the origin the request was sent to.
type errOtherOrigin struct{ to string }

func (e *errOtherOrigin) Error() string {
	return "redirected to another origin (" + e.to + "), where the key is not sent"
}

// sameOrigin refuses a redirect to another origin (scheme, host and port)
// than the first request's: the key travels in a header (Go's client
// would still send Authorization to another port of the same host, or to
// a subdomain) or in the query string (which a redirect may carry along),
// and it belongs to the configured platform only.
func sameOrigin(req *http.Request, via []*http.Request) error {
	if len(via) == 0 {
		return nil
	}
	from, to := origin(via[0].URL), origin(req.URL)
	if from != to {
		return &errOtherOrigin{to: to}
	}
	return nil
}

// origin is "scheme://host:port" of u, lower case, with the scheme's
// default port written out, so that https://a and https://A:443 compare
// equal.
func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// Do sends method path (appended to Base) with body encoded as JSON (nil:
// none) and decodes a 2xx answer into out (nil: ignored) with numbers kept
// as json.Number. Errors: ErrUnauthorized (401, 403), ErrNotFound (404),
// *RateLimitedError (429), ErrUnavailable (5xx, 408, a transport error or
// timeout), ErrBadAnswer (another status, a body that is not JSON, over
// MaxBody, or that does not fit out).
func (h *HTTP) Do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("connector: %s: encode: %w", h.Platform, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, h.Base+path, rd)
	if err != nil {
		return fmt.Errorf("connector: %s: request: %w", h.Platform, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if h.Auth != nil {
		h.Auth(req)
	}
	res, err := h.client().Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var oe *errOtherOrigin
		if errors.As(err, &oe) {
			// Not worth retrying soon: the platform moved, or something
			// between us and it answers in its place.
			return fmt.Errorf("%w: %s %s; check the platform's API address", ErrBadAnswer, h.Platform, oe.Error())
		}
		return fmt.Errorf("%w: %s: %s", ErrUnavailable, h.Platform, h.redact(err.Error()))
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, MaxBody+1))
	if err != nil {
		return fmt.Errorf("%w: %s: reading the answer: %s", ErrUnavailable, h.Platform, h.redact(err.Error()))
	}
	snippet := func() string { return h.redact(clip.Bytes(strings.TrimSpace(string(b)), 200, "…")) }
	if s := res.StatusCode; h.Explain != nil && (s < 200 || s > 299) && s != http.StatusTooManyRequests {
		detail, kind := h.Explain(s, b)
		if detail != "" {
			detail = h.redact(clip.Bytes(detail, 200, "…"))
			snippet = func() string { return detail }
		}
		if kind != nil {
			return fmt.Errorf("%w: %s answered %d: %s", kind, h.Platform, s, snippet())
		}
	}
	switch s := res.StatusCode; {
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		return fmt.Errorf("%w: %s answered %d: %s", ErrUnauthorized, h.Platform, s, snippet())
	case s == http.StatusNotFound:
		return fmt.Errorf("%w: %s answered 404: %s", ErrNotFound, h.Platform, snippet())
	case s == http.StatusTooManyRequests:
		return &RateLimitedError{Platform: h.Platform, RetryAfter: RetryAfter(res.Header, time.Now())}
	case s >= 500 || s == http.StatusRequestTimeout:
		return fmt.Errorf("%w: %s answered %d: %s", ErrUnavailable, h.Platform, s, snippet())
	case s < 200 || s > 299:
		return fmt.Errorf("%w: %s answered %d: %s", ErrBadAnswer, h.Platform, s, snippet())
	}
	if len(b) > MaxBody {
		return fmt.Errorf("%w: %s: the answer is over %d bytes", ErrBadAnswer, h.Platform, MaxBody)
	}
	if out == nil {
		return nil
	}
	if ct := res.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err == nil && mt != "application/json" && !strings.HasSuffix(mt, "+json") {
			return fmt.Errorf("%w: %s answered %s, not JSON: %s", ErrBadAnswer, h.Platform, mt, snippet())
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("%w: %s: %s", ErrBadAnswer, h.Platform, clip.Bytes(err.Error(), 200, "…"))
	}
	return nil
}

func (h *HTTP) redact(s string) string {
	if h.Secret == "" {
		return s
	}
	return strings.ReplaceAll(s, h.Secret, "REDACTED")
}

// RetryAfter reads a Retry-After header (seconds or an HTTP date) and
// returns the wait, at least 1 s and at most an hour; DefaultRetryAfter
// when there is none or it cannot be read.
func RetryAfter(hd http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(hd.Get("Retry-After"))
	d := DefaultRetryAfter
	if v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			d = time.Duration(n) * time.Second
		} else if t, err := http.ParseTime(v); err == nil {
			d = t.Sub(now)
		}
	}
	return min(max(d, time.Second), time.Hour)
}

// Decimal converts a JSON number or string holding a decimal ("0.74",
// 0.74, 74e-2) into an exact ledger.Decimal: the literal's own digits,
// never a float. An integer scaled by 10^-shift (AutoDL's thousandths of
// a yuan: shift 3) is Scaled. ErrBadAnswer for anything else (a bool, an
// object, NaN, more digits than a Decimal keeps).
func Decimal(v any) (ledger.Decimal, error) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = strings.TrimSpace(x)
	default:
		return ledger.Decimal{}, fmt.Errorf("%w: %T is not a number", ErrBadAnswer, v)
	}
	if d, err := ledger.ParseDecimal(s); err == nil {
		return d, nil
	}
	// An exponent form: exact through a rational, if it has a short
	// decimal expansion.
	r, ok := new(big.Rat).SetString(s)
	if !ok || strings.ContainsAny(s, "/") {
		return ledger.Decimal{}, fmt.Errorf("%w: %q is not a decimal number", ErrBadAnswer, clip.Bytes(s, 40, "…"))
	}
	txt := r.FloatString(ledger.MaxDecimalScale)
	d, err := ledger.ParseDecimal(strings.TrimRight(strings.TrimRight(txt, "0"), "."))
	if err != nil {
		return ledger.Decimal{}, fmt.Errorf("%w: %q: %w", ErrBadAnswer, clip.Bytes(s, 40, "…"), err)
	}
	if d.Rat().Cmp(r) != 0 {
		return ledger.Decimal{}, fmt.Errorf("%w: %q has more digits than the ledger keeps", ErrBadAnswer, clip.Bytes(s, 40, "…"))
	}
	return d, nil
}

// Rounded is Decimal for platforms whose backends print money from
// binary floats (RunPod's JavaScript, Vast.ai's Python repr), where a
// figure such as 0.30000000000000004 has more fraction digits than a
// ledger.Decimal keeps: such a literal is rounded to
// ledger.MaxDecimalScale digits, half away from zero, from its own digits
// through a rational (an error under 10^-9), rather than making the whole
// answer unusable. Anything Decimal refuses for another reason stays
// refused.
func Rounded(v any) (ledger.Decimal, error) {
	d, err := Decimal(v)
	if err == nil {
		return d, nil
	}
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = strings.TrimSpace(x)
	default:
		return ledger.Decimal{}, err
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || strings.Contains(s, "/") || len(s) > 64 {
		return ledger.Decimal{}, err
	}
	// FloatString rounds the last digit half away from zero.
	txt := r.FloatString(ledger.MaxDecimalScale)
	if strings.Contains(txt, ".") {
		txt = strings.TrimRight(strings.TrimRight(txt, "0"), ".")
	}
	d, err2 := ledger.ParseDecimal(txt)
	if err2 != nil {
		return ledger.Decimal{}, fmt.Errorf("%w: %q: %w", ErrBadAnswer, clip.Bytes(s, 40, "…"), err2)
	}
	return d, nil
}

// Scaled converts an integer count of 10^-shift units (AutoDL's
// thousandths of a yuan: shift 3) into an exact decimal.
func Scaled(v any, shift int) (ledger.Decimal, error) {
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = strings.TrimSpace(x)
	default:
		return ledger.Decimal{}, fmt.Errorf("%w: %T is not an integer", ErrBadAnswer, v)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || shift < 0 || shift > ledger.MaxDecimalScale {
		return ledger.Decimal{}, fmt.Errorf("%w: %q is not an integer amount", ErrBadAnswer, clip.Bytes(s, 40, "…"))
	}
	d := ledger.NewDecimal(n, shift)
	if _, err := ledger.ParseDecimal(d.String()); err != nil {
		// Within int64 but beyond what the ledger keeps (1e9 or more).
		return ledger.Decimal{}, fmt.Errorf("%w: %q: %w", ErrBadAnswer, clip.Bytes(s, 40, "…"), err)
	}
	return d, nil
}

// IsTransient reports whether err is worth retrying later: the platform
// unavailable or rate-limiting.
func IsTransient(err error) bool {
	var rl *RateLimitedError
	return errors.Is(err, ErrUnavailable) || errors.As(err, &rl)
}
