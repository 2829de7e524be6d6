// Package vast is the connector.Client for Vast.ai's REST API.
//
// Sources, read 2026-12 (the OpenAPI files of github.com/vast-ai/docs,
// published as docs.vast.ai/api-reference, and vast-ai/vast-cli):
//
//   - Instances: GET /api/v1/instances/ (show_instances.yaml), keyset
//     pages of at most 25 (limit, after_token ← next_token, null on the
//     last page). The older GET /api/v0/instances/ answers 410 for
//     accounts made after June 2, 2026 (auto_get_api_v0_instances_*.yaml)
//     and vast-cli's show_instances pages through v1 since; so does this.
//   - Stop: PUT /api/v0/instances/{id}/ {"state":"stopped"} →
//     {"success":true} (manage_instance.yaml). Destroy: DELETE
//     /api/v0/instances/{id}/ (destroy_instance.yaml).
//   - Balance and Check: GET /api/v0/users/current (vast-cli show_user;
//     auto_get_api_v0_users_current_*.yaml).
//   - Billed: GET /api/v0/charges/ (show charges,
//     docs.vast.ai/api-reference/billing/show-charges).
//   - Errors and limits: docs.vast.ai/api-reference/rate-limits-and-errors.
//
// The key goes in "Authorization: Bearer KEY", never in the URL.
package vast

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/internal/clip"
	"github.com/gpuledger/gpuledger/ledger"
)

// DefaultBaseURL is Vast.ai's documented API base (GPULEDGER_VAST_URL
// overrides it). The paged instance list lives beside it, at /api/v1.
const DefaultBaseURL = "https://console.vast.ai/api/v0"

// PageSize is the most instances one page of GET /api/v1/instances/
// holds ("Default 25, max 25", show_instances.yaml).
const PageSize = 25

// MaxPages bounds one listing (25 × 400 = 10,000 instances): a platform
// that keeps answering next_token does not keep us calling.
const MaxPages = 400

// DefaultPageGap is the pause between two pages of one listing. The list
// endpoint's documented minimum interval is 1.0 s per identity
// (show_instances.yaml x-rate-limit threshold 1.0); a little more leaves
// room for clock jitter between us and Vast.ai.
const DefaultPageGap = 1200 * time.Millisecond

// MinInterval is the least time between two polls. Vast.ai enforces a
// minimum interval per endpoint and identity (rate-limits-and-errors);
// the documented thresholds of the endpoints we call are 1 s (the
// instance list, a stop, the charges), 2 s (users/current) and 3 s (a
// destroy), plus undocumented "max-calls-per-period limits for short
// bursts". 30 s keeps a poll of many pages, a balance read, and the
// wiring's re-reads after a stop well clear of all of them. The legacy
// v0 list was limited to one call per 20 s
// (auto_get_api_v0_instances_*.yaml); 30 s is clear of that too.
const MinInterval = 30 * time.Second

// ErrRefused: Vast.ai answered 200 with "success": false (a stop of an
// instance in a state that cannot stop, a host account asked for
// charges); the error carries the platform's msg.
var ErrRefused = errors.New("vast: the platform refused")

// Config configures a Client.
type Config struct {
	APIKey string
	// BaseURL is the v0 base (DefaultBaseURL when empty), without a
	// trailing slash; a base given without the /api/v0 suffix is taken
	// as the host. The v1 list is at the same host's /api/v1.
	BaseURL string
	// HTTPClient must have a Timeout; connector.HTTP's default (20 s)
	// when nil.
	HTTPClient *http.Client
	// PageGap is the pause between pages of one listing
	// (DefaultPageGap when zero).
	PageGap time.Duration
}

// Client is a Vast.ai account. It is safe for concurrent use, but the
// caller should not run two listings at once (they share one rate limit).
type Client struct {
	v0, v1  connector.HTTP
	pageGap time.Duration
}

// New returns a client for cfg; an error if the key or base is unusable.
func New(cfg Config) (*Client, error) {
	key := strings.TrimSpace(cfg.APIKey)
	if key == "" || strings.ContainsAny(key, " \t\r\n") {
		return nil, errors.New("vast: the API key is empty or has spaces in it")
	}
	base := strings.TrimRight(strings.TrimSpace(cfg.BaseURL), "/")
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
		return nil, fmt.Errorf("vast: the base URL %q is not an http(s) URL", clip.Bytes(base, 80, "…"))
	}
	root := strings.TrimSuffix(base, "/api/v0")
	auth := func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+key) }
	h := connector.HTTP{Platform: "vast", Client: cfg.HTTPClient, Auth: auth, Secret: key}
	c := &Client{v0: h, v1: h, pageGap: cfg.PageGap}
	c.v0.Base, c.v1.Base = root+"/api/v0", root+"/api/v1"
	if c.pageGap <= 0 {
		c.pageGap = DefaultPageGap
	}
	return c, nil
}

var _ connector.Client = (*Client)(nil)

// Platform is the ledger's profile key.
func (c *Client) Platform() string { return "vast" }

// MinInterval: see the constant.
func (c *Client) MinInterval() time.Duration { return MinInterval }

// Check reads GET /users/current: ErrUnauthorized for a rejected key.
func (c *Client) Check(ctx context.Context) error {
	_, err := c.Account(ctx)
	return err
}

// Account is what GET /api/v0/users/current says about money
// (auto_get_api_v0_users_current_*.yaml).
type Account struct {
	ID int64
	// Balance is "balance": "Account credit balance (USD)".
	Balance ledger.Decimal
	// Credit is "credit": "Promotional credit (USD)"; CreditOK false when
	// absent or null. Not added to Balance: the docs do not say whether
	// the balance already counts it.
	Credit   ledger.Decimal
	CreditOK bool
}

// Account reads the account's balance and promotional credit.
func (c *Client) Account(ctx context.Context) (Account, error) {
	var raw map[string]any
	if err := c.v0.Do(ctx, http.MethodGet, "/users/current", nil, &raw); err != nil {
		return Account{}, err
	}
	if err := refused(raw); err != nil {
		return Account{}, err
	}
	var a Account
	if v, ok := raw["id"]; ok && v != nil {
		n, ok := v.(json.Number)
		id, err := n.Int64()
		if !ok || err != nil {
			return Account{}, bad("users/current: id %v is not an integer", v)
		}
		a.ID = id
	}
	b, ok := raw["balance"]
	if !ok || b == nil {
		return Account{}, bad("users/current: no balance")
	}
	d, err := money(b)
	if err != nil {
		return Account{}, fmt.Errorf("vast: users/current: balance: %w", err)
	}
	a.Balance = d
	if v, ok := raw["credit"]; ok && v != nil {
		d, err := money(v)
		if err != nil {
			return Account{}, fmt.Errorf("vast: users/current: credit: %w", err)
		}
		a.Credit, a.CreditOK = d, true
	}
	return a, nil
}

// Balance returns the account's "balance" in USD. Vast.ai reports no
// spend rate on the account (sum the instances' prices for one).
func (c *Client) Balance(ctx context.Context) (connector.Balance, error) {
	a, err := c.Account(ctx)
	if err != nil {
		return connector.Balance{}, err
	}
	return connector.Balance{Amount: a.Balance, Currency: ledger.USD}, nil
}

// Stop stops the instance: PUT /api/v0/instances/{id}/ {"state":
// "stopped"}. The GPU is released and its billing ends; the disk keeps
// billing (docs.vast.ai/cli/reference/show-instances). ErrNotFound for
// an instance Vast.ai does not know; ErrRefused for a success:false.
func (c *Client) Stop(ctx context.Context, id string) error {
	return c.act(ctx, http.MethodPut, id, map[string]string{"state": "stopped"})
}

// Terminate destroys the instance and its data: DELETE
// /api/v0/instances/{id}/. ErrNotFound when it is already gone.
func (c *Client) Terminate(ctx context.Context, id string) error {
	return c.act(ctx, http.MethodDelete, id, nil)
}

func (c *Client) act(ctx context.Context, method, id string, body any) error {
	if _, err := strconv.ParseUint(id, 10, 63); err != nil {
		// Vast.ai's IDs are integers (manage_instance.yaml); anything else
		// would change the path.
		return fmt.Errorf("%w: vast: %q is not a Vast.ai instance ID", connector.ErrNotFound, clip.Bytes(id, 40, "…"))
	}
	var raw map[string]any
	if err := c.v0.Do(ctx, method, "/instances/"+id+"/", body, &raw); err != nil {
		return err
	}
	if err := refused(raw); err != nil {
		return err
	}
	if s, ok := raw["success"]; ok && s != true {
		return bad("%s instance %s: success is %v", method, id, s)
	}
	return nil
}

// refused turns a {"success": false, "msg": …} answer into ErrRefused
// (rate-limits-and-errors: "The most common error response shape").
func refused(raw map[string]any) error {
	if raw == nil {
		return bad("the answer is not a JSON object")
	}
	if s, ok := raw["success"]; !ok || s != false {
		return nil
	}
	msg := ""
	for _, k := range []string{"msg", "message", "error"} {
		if v, ok := raw[k].(string); ok && v != "" {
			msg = v
			break
		}
	}
	if msg == "" {
		msg = "no message"
	}
	return fmt.Errorf("%w: %s", ErrRefused, clip.Bytes(msg, 200, "…"))
}

func bad(format string, args ...any) error {
	return fmt.Errorf("%w: vast: %s", connector.ErrBadAnswer, clip.Bytes(fmt.Sprintf(format, args...), 200, "…"))
}

// money reads a price or an amount, given as a JSON number or a string
// (connector.Decimal: the literal's own digits, never a float64). Vast.ai
// computes prices in Python floats and prints them with repr, so a
// dph_total such as 0.30000000000000004 is possible: more than the 9
// decimals a ledger.Decimal keeps. Such a literal is rounded to 9
// decimals, half away from zero, from its digits (an error of at most
// $0.0000000005 an hour), rather than making the whole answer unusable.
// Negative amounts are kept (a balance can be negative).
func money(v any) (ledger.Decimal, error) { return connector.Rounded(v) }

// epoch reads Vast.ai's epoch seconds (start_date is a float, e.g.
// 1668804745.1223178; charges give integers) exactly from the literal's
// digits, to the nanosecond (digits beyond are truncated). null, absent
// or 0: zero time.
func epoch(v any) (time.Time, error) {
	if v == nil {
		return time.Time{}, nil
	}
	var s string
	switch x := v.(type) {
	case json.Number:
		s = x.String()
	case string:
		s = strings.TrimSpace(x)
	default:
		return time.Time{}, fmt.Errorf("%w: %T is not a time", connector.ErrBadAnswer, v)
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || strings.Contains(s, "/") || len(s) > 64 || r.Sign() < 0 {
		return time.Time{}, fmt.Errorf("%w: %q is not epoch seconds", connector.ErrBadAnswer, clip.Bytes(s, 40, "…"))
	}
	if r.Sign() == 0 {
		return time.Time{}, nil
	}
	ns := new(big.Int).Quo(new(big.Int).Mul(r.Num(), big.NewInt(1e9)), r.Denom())
	// Up to the year 2262, which int64 nanoseconds reach.
	if !ns.IsInt64() {
		return time.Time{}, fmt.Errorf("%w: %q is too far in the future", connector.ErrBadAnswer, clip.Bytes(s, 40, "…"))
	}
	return time.Unix(0, ns.Int64()).UTC(), nil
}
