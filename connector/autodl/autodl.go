// Package autodl is the connector for AutoDL's official developer API
// (https://api.autodl.com): the wallet balance for every account, and the
// Pro instances (容器实例Pro) of accounts that have passed real-name
// verification.
//
// AutoDL's ordinary container instances have no official API (community
// tools log into the web console with a phone number and password; this
// package does not). For them the on-instance agent is the only witness,
// and Instances does not list them.
//
// Sources: autodl.com/docs/common_api (host, the raw token in
// Authorization, the envelope, the wallet balance); the Pro endpoints,
// their bodies and answers as Minato-Aqukin/AutoDL-cli calls and records
// them (src/core/endpoints/instance.ts, src/core/schemas.ts,
// tests/fixtures/responses.ts), which cite AutoDL's Pro API page
// (autodl.com/docs/instance_pro_api, not found in a stored copy).
//
// What a caller must know:
//   - Every answer is HTTP 200 with {code, msg, data, request_id}; only
//     code "Success" is success. AutoDL documents no list of codes, so a
//     non-Success answer is classified by its code and message: auth words
//     (Unauthorized, token, auth, 鉴权) are ErrUnauthorized, 频繁 ("too
//     frequent") a *connector.RateLimitedError with the default wait,
//     不存在 ErrNotFound, anything else ErrBadAnswer carrying the code, the
//     clipped message and the request_id. HTTP 401/403 are ErrUnauthorized
//     (AutoDL-cli saw 401 for a dead token).
//   - Money is integer thousandths of a yuan; a float or a decimal string
//     is ErrBadAnswer, never rounded.
//   - Real-name verification (实名认证): an account without it has no Pro
//     instances, and Instances answers an empty list for the refusal; if
//     the wallet itself is refused for it, Check is ErrUnauthorized saying
//     so. The refusal's exact code is undocumented: it is recognised by 实名
//     in the message (what AutoDL-cli maps). Should AutoDL answer it with an
//     auth-looking code and no 实名, Instances is ErrUnauthorized.
//   - No rate limit is documented: MinInterval is a conservative 60 s.
//   - Billing is not reported (Billed is ErrNotSupported); balance deltas
//     are the caller's.
//   - After Stop, re-read until the instance is Stopped: a power_off sent
//     while an instance is still starting was seen not to take effect.
//     Terminate may block up to Config.ShutdownWait while the instance
//     shuts down, as AutoDL releases only a shut-down instance.
package autodl

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/internal/clip"
	"github.com/gpuledger/gpuledger/ledger"
)

// Platform is the ledger's profile key for AutoDL.
const Platform = "autodl"

// DefaultBase is the API host "API服务端HOST地址为:https://api.autodl.com"
// (autodl.com/docs/common_api); GPULEDGER_AUTODL_URL replaces it (Spec).
const DefaultBase = "https://api.autodl.com"

// MinInterval is the least time between two polls. AutoDL documents no
// rate limit; 60 s is a conservative choice (AutoDL-cli's dashboard lists
// every 10 s and reads the balance every 60 s), equal to the default
// GPULEDGER_SYNC, and a minute is fine-grained against a per-second bill
// deducted hourly.
const MinInterval = 60 * time.Second

// Paths of the developer API.
const (
	pathBalance  = "/api/v1/dev/wallet/balance"
	pathList     = "/api/v1/dev/instance/pro/list"
	pathStatus   = "/api/v1/dev/instance/pro/status"
	pathSnapshot = "/api/v1/dev/instance/pro/snapshot"
	pathPowerOff = "/api/v1/dev/instance/pro/power_off"
	pathRelease  = "/api/v1/dev/instance/pro/release"
)

// pageSize is the list's page_size (AutoDL-cli walks pages of 100);
// maxPages bounds the walk so that an answer claiming endless pages ends.
const (
	pageSize = 100
	maxPages = 50
)

// Config is what a Client needs.
type Config struct {
	// Token is the developer token (控制台 -> 设置 -> 开发者Token), sent as
	// the whole Authorization header, with no "Bearer" (common_api:
	// headers = {"Authorization": "token"}; AutoDL-cli sends it the same
	// way). Required.
	Token string
	// Base is the API base URL without a trailing slash; DefaultBase if
	// empty.
	Base string
	// HTTP is the client used; it must have a Timeout (default 20 s).
	HTTP *http.Client
	// ShutdownWait bounds how long Terminate waits for a powered-off
	// instance to reach "shutdown" before it releases it (AutoDL refuses
	// to release an instance that is not shut down); default 3 min.
	// ShutdownPoll is the gap between status reads meanwhile; default 5 s.
	ShutdownWait time.Duration
	ShutdownPoll time.Duration
}

// Client is one AutoDL account. It is safe for concurrent use.
type Client struct {
	cfg  Config
	http *connector.HTTP

	mu sync.Mutex
	// prices caches each running instance's snapshot by power-on, so that
	// a poll costs one list call, not one snapshot per instance.
	prices map[string]priced
}

// priced is what a snapshot told of one power-on of an instance.
type priced struct {
	startedAt time.Time
	price     ledger.Decimal
	priceOK   bool
	gpu       string
}

var _ connector.Client = (*Client)(nil)

// New returns a Client for cfg; an error if the token is empty or the base
// is not an http(s) URL.
func New(cfg Config) (*Client, error) {
	if strings.TrimSpace(cfg.Token) == "" {
		return nil, errors.New("autodl: Config.Token is empty")
	}
	if cfg.Base == "" {
		cfg.Base = DefaultBase
	}
	cfg.Base = strings.TrimRight(cfg.Base, "/")
	if u, err := url.Parse(cfg.Base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("autodl: Config.Base %q is not an http(s) URL", clip.Bytes(cfg.Base, 80, "…"))
	}
	if cfg.ShutdownWait <= 0 {
		cfg.ShutdownWait = 3 * time.Minute
	}
	if cfg.ShutdownPoll <= 0 {
		cfg.ShutdownPoll = 5 * time.Second
	}
	token := cfg.Token
	return &Client{
		cfg: cfg,
		http: &connector.HTTP{
			Platform: Platform,
			Base:     cfg.Base,
			Client:   cfg.HTTP,
			Auth:     func(r *http.Request) { r.Header.Set("Authorization", token) },
			Secret:   token,
		},
		prices: map[string]priced{},
	}, nil
}

// Platform returns "autodl".
func (c *Client) Platform() string { return Platform }

// MinInterval returns MinInterval.
func (c *Client) MinInterval() time.Duration { return MinInterval }

// Check reads the wallet balance, the one call every token may make.
// ErrUnauthorized when the token is rejected (HTTP 401/403 or an
// auth-looking code) or the account lacks the real-name verification the
// developer API asks for.
func (c *Client) Check(ctx context.Context) error {
	_, err := c.Wallet(ctx)
	return err
}

// Wallet is the whole answer of the wallet balance call, in yuan, exact.
// Each field is documented as "Int … 除以1000等于元" (thousandths of a
// yuan; autodl.com/docs/common_api).
type Wallet struct {
	Assets     ledger.Decimal // assets: 当前余额, the current balance
	Voucher    ledger.Decimal // voucher_balance: 当前代金券可用余额, vouchers still usable
	Accumulate ledger.Decimal // accumulate: 累计消费金额, all spending to date
	VoucherOK  bool           // false when the answer has no voucher_balance
	AccumOK    bool           // false when the answer has no accumulate
}

// Wallet calls POST /api/v1/dev/wallet/balance (no body). assets is
// required; an amount that is not an integer (a float, "12.5") is
// ErrBadAnswer. Errors as Check.
func (c *Client) Wallet(ctx context.Context) (Wallet, error) {
	var data map[string]any
	if err := c.call(ctx, http.MethodPost, pathBalance, nil, &data); err != nil {
		if kindOf(err) == kindNotVerified {
			return Wallet{}, fmt.Errorf("%w: the account has not passed the real-name verification (实名认证) AutoDL's developer API requires: %w", connector.ErrUnauthorized, err)
		}
		return Wallet{}, err
	}
	var w Wallet
	var err error
	v, ok := data["assets"]
	if !ok || v == nil {
		return Wallet{}, fmt.Errorf("%w: autodl wallet/balance: no assets", connector.ErrBadAnswer)
	}
	if w.Assets, err = milli("assets", v); err != nil {
		return Wallet{}, err
	}
	if v, ok := data["voucher_balance"]; ok && v != nil {
		if w.Voucher, err = milli("voucher_balance", v); err != nil {
			return Wallet{}, err
		}
		w.VoucherOK = true
	}
	if v, ok := data["accumulate"]; ok && v != nil {
		if w.Accumulate, err = milli("accumulate", v); err != nil {
			return Wallet{}, err
		}
		w.AccumOK = true
	}
	return w, nil
}

// milli converts an amount in thousandths of a yuan (a JSON integer or an
// integer in a string) into yuan, exactly.
func milli(field string, v any) (ledger.Decimal, error) {
	d, err := connector.Scaled(v, 3)
	if err != nil {
		return ledger.Decimal{}, fmt.Errorf("autodl: %s: %w", field, err)
	}
	return d, nil
}

// Balance returns assets, the field the docs call 当前余额 ("current
// balance"): the money in the account. Vouchers are left out: the docs
// name them apart (当前代金券可用余额, "voucher balance still usable") and
// do not say that they pay for every charge, so a balance that counted
// them could promise a runway the wallet does not have. Wallet returns
// them for a caller that wants to show them beside it.
func (c *Client) Balance(ctx context.Context) (connector.Balance, error) {
	w, err := c.Wallet(ctx)
	if err != nil {
		return connector.Balance{}, err
	}
	return connector.Balance{Amount: w.Assets, Currency: ledger.CNY}, nil
}

// Billed returns ErrNotSupported: the developer API documents no billing
// or transaction list (balance deltas are the caller's to compute).
func (c *Client) Billed(ctx context.Context, from, to time.Time) ([]connector.BilledItem, error) {
	return nil, fmt.Errorf("%w: autodl documents no billing endpoint", connector.ErrNotSupported)
}
