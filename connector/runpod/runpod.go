// Package runpod is the connector for RunPod: pods, their state and
// hourly price from the REST API v1 (rest.runpod.io/v1), stop and
// terminate through it, billed amounts from its /billing/pods, and the
// account's balance from the GraphQL API (api.runpod.io/graphql), which
// is where RunPod reports it (runpodctl's `user` command asks
// `myself { clientBalance currentSpendPerHr }` there).
//
// Sources: the v1 OpenAPI document (docs.runpod.io/api-reference/
// openapi.json; pages under docs.runpod.io/api-reference/pods and
// /billing), runpodctl (internal/api/client.go, pods.go, billing.go,
// gpu.go, graphql.go) and runpod-python (runpod/api/graphql.py).
//
// RunPod's docs (api-reference-v2/migrate-from-v1, 2026) mark REST v1 as
// deprecated and to be retired on 2026-11-15, and the GraphQL API as
// deprecated and to be retired in early 2027, in favour of REST v2 at
// api.runpod.io/v2 (lists wrapped in an object, other field names). This
// package speaks v1 and GraphQL; both URLs are configurable.
package runpod

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/internal/clip"
	"github.com/gpuledger/gpuledger/ledger"
)

// Defaults: the documented bases (the v1 OpenAPI document's server; the
// GraphQL URL runpodctl and runpod-python use).
const (
	DefaultBaseURL    = "https://rest.runpod.io/v1"
	DefaultGraphQLURL = "https://api.runpod.io/graphql"
)

// Platform is the ledger's profile key.
const Platform = "runpod"

// MinInterval is the least time between two polls of Instances. RunPod
// documents no quota for REST v1 or GraphQL; its v2 page
// (docs.runpod.io/api-reference-v2/rate-limits) only says quotas are per
// user over minute, hour and day windows at once, announced in
// RateLimit-Policy/RateLimit headers, with no figures. A poll is one GET
// /pods (plus a GraphQL balance query when the caller asks), so one a
// minute is at most 1,440 list calls a day, per user, shared with the
// user's own tools on the same account: conservative against any daily
// window, and the project's default sync period.
const MinInterval = 60 * time.Second

// Config is one RunPod account.
type Config struct {
	APIKey string
	// BaseURL is the REST v1 base (GPULEDGER_RUNPOD_URL); default
	// DefaultBaseURL.
	BaseURL string
	// GraphQLURL is the GraphQL endpoint (GPULEDGER_RUNPOD_GRAPHQL_URL);
	// default DefaultGraphQLURL.
	GraphQLURL string
	// HTTPClient must have a Timeout; default one of 20 s.
	HTTPClient *http.Client
}

// Client is a connector.Client for one RunPod account. It is safe for
// concurrent use.
type Client struct {
	key  string
	rest connector.HTTP
	gql  connector.HTTP
}

var _ connector.Client = (*Client)(nil)

// New returns a client for cfg; an error if the key is empty or a URL is
// not absolute.
func New(cfg Config) (*Client, error) {
	key := strings.TrimSpace(cfg.APIKey)
	if key == "" {
		return nil, errors.New("runpod: no API key")
	}
	base := strings.TrimRight(orDefault(cfg.BaseURL, DefaultBaseURL), "/")
	gql := orDefault(cfg.GraphQLURL, DefaultGraphQLURL)
	for _, u := range []string{base, gql} {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
			return nil, fmt.Errorf("runpod: %q is not an http(s) URL", clip.Bytes(u, 80, "…"))
		}
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 20 * time.Second}
	}
	// Bearer on both: the v1 OpenAPI's security scheme is "http bearer";
	// runpodctl sends Bearer to GraphQL too (internal/api/graphql.go),
	// where the docs show ?api_key=, which would put the key in URLs.
	auth := func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+key) }
	return &Client{
		key:  key,
		rest: connector.HTTP{Platform: Platform, Base: base, Client: hc, Auth: auth, Secret: key, Explain: explain(false)},
		gql:  connector.HTTP{Platform: Platform, Base: gql, Client: hc, Auth: auth, Secret: key},
	}, nil
}

func orDefault(s, def string) string {
	if s = strings.TrimSpace(s); s != "" {
		return s
	}
	return def
}

// Platform returns "runpod".
func (c *Client) Platform() string { return Platform }

// MinInterval returns MinInterval.
func (c *Client) MinInterval() time.Duration { return MinInterval }

// Check asks GraphQL `myself { id }`: the smallest authenticated answer
// RunPod has. ErrUnauthorized for a 401/403, an auth error in the
// "errors" array, or a null myself.
func (c *Client) Check(ctx context.Context) error {
	var out struct {
		Myself *struct {
			ID string `json:"id"`
		} `json:"myself"`
	}
	if err := c.query(ctx, `query { myself { id } }`, &out); err != nil {
		return err
	}
	if out.Myself == nil {
		return fmt.Errorf("%w: runpod: myself is null", connector.ErrUnauthorized)
	}
	if out.Myself.ID == "" {
		return fmt.Errorf("%w: runpod: myself has no id", connector.ErrBadAnswer)
	}
	return nil
}

// pod is what this package reads of a v1 pod (docs.runpod.io/
// api-reference/pods/GET/pods). Strings must be strings (another type
// fails the decode: ErrBadAnswer); costPerHr is documented as a number
// with the example "0.74", so both are read.
type pod struct {
	ID               *string `json:"id"`
	Name             string  `json:"name"`
	DesiredStatus    *string `json:"desiredStatus"`
	CostPerHr        any     `json:"costPerHr"`
	LastStartedAt    string  `json:"lastStartedAt"`
	LastStatusChange string  `json:"lastStatusChange"`
	// PublicIP is the pod's public IP address ("" while it is
	// initialising, or on a pod without one).
	PublicIP string `json:"publicIp"`
	GPU      *struct {
		ID          string `json:"id"`
		Count       int    `json:"count"`
		DisplayName string `json:"displayName"`
	} `json:"gpu"`
}

// Instances lists the account's pods with GET /pods: a bare JSON array,
// unpaged in v1 (the OpenAPI document has no page parameters; serverless
// workers are left out unless includeWorkers=true, which this does not
// send). Price is costPerHr, documented as "the cost in Runpod credits
// per hour of running a Pod", i.e. for the whole pod, not per GPU (the
// per-GPU figure is machine.currentPricePerGpu); credits are dollars
// (billing amounts are "in USD"). adjustedCostPerHr (after Savings Plans)
// is not used: a plan is prepaid, and the ledger meters the list price.
// A pod without costPerHr (or a null one) has PriceOK false; one whose
// id or desiredStatus is missing, or whose fields have the wrong type,
// makes the whole answer ErrBadAnswer. A 404 here is ErrBadAnswer too,
// never "no pods".
func (c *Client) Instances(ctx context.Context) ([]connector.Instance, error) {
	var pods []pod
	if err := c.rest.Do(ctx, http.MethodGet, "/pods", nil, &pods); err != nil {
		if errors.Is(err, connector.ErrNotFound) {
			// Not wrapped: a 404 to the list must never read as "no such
			// instance" (nor as an empty account).
			return nil, fmt.Errorf("%w: runpod: GET /pods: %s", connector.ErrBadAnswer, err.Error())
		}
		return nil, fmt.Errorf("runpod: list pods: %w", err)
	}
	if pods == nil {
		// JSON null, not an array.
		return nil, fmt.Errorf("%w: runpod: GET /pods answered null", connector.ErrBadAnswer)
	}
	out := make([]connector.Instance, 0, len(pods))
	seen := make(map[string]bool, len(pods))
	for i, p := range pods {
		in, err := p.instance()
		if err != nil {
			return nil, fmt.Errorf("runpod: pod %d: %w", i, err)
		}
		if seen[in.ID] {
			return nil, fmt.Errorf("%w: runpod: pod %q listed twice", connector.ErrBadAnswer, clip.Bytes(in.ID, 40, "…"))
		}
		seen[in.ID] = true
		out = append(out, in)
	}
	return out, nil
}

func (p pod) instance() (connector.Instance, error) {
	bad := func(f string, a ...any) (connector.Instance, error) {
		return connector.Instance{}, fmt.Errorf("%w: %s", connector.ErrBadAnswer, fmt.Sprintf(f, a...))
	}
	if p.ID == nil || strings.TrimSpace(*p.ID) == "" {
		return bad("no id")
	}
	if p.DesiredStatus == nil {
		return bad("pod %q has no desiredStatus", clip.Bytes(*p.ID, 40, "…"))
	}
	in := connector.Instance{
		ID:       *p.ID,
		Name:     p.Name,
		Currency: ledger.USD,
		RawState: *p.DesiredStatus,
		State:    state(*p.DesiredStatus),
	}
	if p.GPU != nil {
		in.GPU, in.GPUCount = p.GPU.DisplayName, p.GPU.Count
		if in.GPU == "" {
			in.GPU = p.GPU.ID
		}
		if in.GPUCount < 0 {
			return bad("pod %q has %d GPUs", clip.Bytes(in.ID, 40, "…"), in.GPUCount)
		}
	}
	if p.CostPerHr != nil {
		d, err := amount(p.CostPerHr)
		if err != nil {
			return bad("pod %q costPerHr: %v", clip.Bytes(in.ID, 40, "…"), err)
		}
		if d.Sign() < 0 {
			return bad("pod %q costPerHr is negative", clip.Bytes(in.ID, 40, "…"))
		}
		in.Price, in.PriceOK = d, true
	}
	if s := strings.TrimSpace(p.LastStartedAt); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return bad("pod %q lastStartedAt %q is not a time", clip.Bytes(in.ID, 40, "…"), clip.Bytes(s, 40, "…"))
		}
		in.StartedAt = t.UTC()
	}
	in.StateSince = statusChangeTime(p.LastStatusChange)
	a, err := connector.ParseAddress(p.PublicIP)
	if err != nil {
		return bad("pod %q publicIp: %v", clip.Bytes(in.ID, 40, "…"), err)
	}
	in.Address = a
	return in, nil
}

// state maps desiredStatus (the v1 enum: RUNNING, EXITED, TERMINATED) to
// what billing depends on. EXITED is a stopped pod: compute is not
// billed, its volume disk is.
func state(s string) connector.State {
	switch s {
	case "RUNNING":
		return connector.Running
	case "EXITED":
		return connector.Stopped
	case "TERMINATED":
		return connector.Terminated
	}
	return connector.Unknown
}

// statusChangeTime reads the time out of lastStatusChange, documented
// only as "a string describing the last lifecycle event", e.g. "Rented
// by User: Fri Jul 12 2024 15:14:40 GMT-0400 (Eastern Daylight Time)" (a
// JavaScript Date). Zero when it does not read: the caller then uses its
// poll time, marked approximate.
func statusChangeTime(s string) time.Time {
	_, rest, ok := strings.Cut(s, ": ")
	if !ok {
		return time.Time{}
	}
	if i := strings.Index(rest, " ("); i >= 0 {
		rest = rest[:i]
	}
	t, err := time.Parse("Mon Jan 02 2006 15:04:05 GMT-0700", strings.TrimSpace(rest))
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// Balance asks GraphQL `myself { clientBalance currentSpendPerHr }`
// (runpodctl internal/api/gpu.go GetUser; docs.runpod.io/runpodctl/
// reference/runpodctl-user shows `"clientBalance": 435.85`), in USD.
// spendLimit is not read: Balance has no place for it. A missing or null
// clientBalance is ErrBadAnswer; a missing currentSpendPerHr leaves
// SpendPerHourOK false.
func (c *Client) Balance(ctx context.Context) (connector.Balance, error) {
	var out struct {
		Myself *struct {
			ClientBalance     any `json:"clientBalance"`
			CurrentSpendPerHr any `json:"currentSpendPerHr"`
		} `json:"myself"`
	}
	if err := c.query(ctx, `query { myself { clientBalance currentSpendPerHr } }`, &out); err != nil {
		return connector.Balance{}, err
	}
	if out.Myself == nil {
		return connector.Balance{}, fmt.Errorf("%w: runpod: myself is null", connector.ErrUnauthorized)
	}
	if out.Myself.ClientBalance == nil {
		return connector.Balance{}, fmt.Errorf("%w: runpod: no clientBalance", connector.ErrBadAnswer)
	}
	amt, err := amount(out.Myself.ClientBalance)
	if err != nil {
		return connector.Balance{}, fmt.Errorf("runpod: clientBalance: %w", err)
	}
	b := connector.Balance{Amount: amt, Currency: ledger.USD}
	if v := out.Myself.CurrentSpendPerHr; v != nil {
		sp, err := amount(v)
		if err != nil {
			return connector.Balance{}, fmt.Errorf("runpod: currentSpendPerHr: %w", err)
		}
		b.SpendPerHour, b.SpendPerHourOK = sp, true
	}
	return b, nil
}

// Stop stops a pod with POST /pods/{id}/stop (docs.runpod.io/
// api-reference/pods/POST/pods/podId/stop): compute billing ends, the
// volume disk bills at the stopped rate. ErrNotFound for a 404, and for
// the 400 the reference documents as "Invalid Pod ID" (another 400 is
// ErrBadAnswer with RunPod's words). The answer's body
// is not read: the caller confirms by listing again.
func (c *Client) Stop(ctx context.Context, id string) error {
	return c.podAction(ctx, http.MethodPost, id, "/stop", "stop")
}

// Terminate deletes a pod with DELETE /pods/{id} (204 on success,
// docs.runpod.io/api-reference/pods/DELETE/pods/podId): everything not
// on a network volume is gone. ErrNotFound for a 404 or a 400 "Invalid
// Pod ID", which may also be what a pod already terminated answers.
func (c *Client) Terminate(ctx context.Context, id string) error {
	return c.podAction(ctx, http.MethodDelete, id, "", "terminate")
}

func (c *Client) podAction(ctx context.Context, method, id, suffix, what string) error {
	if strings.TrimSpace(id) == "" {
		return fmt.Errorf("%w: runpod: %s: no pod ID", connector.ErrNotFound, what)
	}
	h := c.rest // a copy: the 400 means "no such pod" only here
	h.Explain = explain(true)
	if err := h.Do(ctx, method, "/pods/"+url.PathEscape(id)+suffix, nil, nil); err != nil {
		return fmt.Errorf("runpod: %s %q: %w", what, clip.Bytes(id, 40, "…"), err)
	}
	return nil
}

// explain reads RunPod v1's error envelope, {"error": "…"} (runpodctl
// internal/api/client.go APIError), as the error's detail. With
// invalidID, a 400 whose text says the ID is invalid or unknown (the
// reference's "Invalid Pod ID" for stop and delete) is ErrNotFound; any
// other 400 stays a bad answer, because a stop can also be refused for a
// pod that exists (one with a network volume cannot be stopped, see
// docs/platforms.md), and that must never read as "gone".
func explain(invalidID bool) func(int, []byte) (string, error) {
	return func(status int, body []byte) (string, error) {
		var env struct {
			Error any `json:"error"`
		}
		detail := ""
		if json.Unmarshal(body, &env) == nil {
			if s, ok := env.Error.(string); ok {
				detail = s
			}
		}
		if m := strings.ToLower(detail); invalidID && status == http.StatusBadRequest &&
			(strings.Contains(m, "invalid pod id") || strings.Contains(m, "not found")) {
			return detail, connector.ErrNotFound
		}
		return detail, nil
	}
}

// billingRecord is one record of GET /billing/pods (the v1 OpenAPI's
// BillingRecords; runpodctl internal/api/billing.go): time is the start
// of the bucket, amount is "in USD", timeBilledMs milliseconds.
type billingRecord struct {
	Time         *string `json:"time"`
	Amount       any     `json:"amount"`
	TimeBilledMs any     `json:"timeBilledMs"`
	PodID        *string `json:"podId"`
}

// Billed asks GET /billing/pods?bucketSize=…&grouping=podId&startTime=…
// &endTime=… with the times in RFC 3339 UTC (the reference's
// "format: date-time", example 2023-01-01T00:00:00Z; runpodctl's flags
// say RFC3339). Buckets are days when from and to are both UTC
// midnights, hours otherwise; each record becomes one BilledItem for its
// bucket [time, time+bucket). The v1 reference does not say whether
// endTime is inclusive (its example is 23:59:59Z) or whether the window
// is widened to whole buckets (v2's page says it is): buckets that do not
// overlap [from, to) are dropped, and a bucket at an edge may reach
// outside it. A record without podId, time or amount is ErrBadAnswer.
func (c *Client) Billed(ctx context.Context, from, to time.Time) ([]connector.BilledItem, error) {
	from, to = from.UTC(), to.UTC()
	if !from.Before(to) {
		return nil, fmt.Errorf("runpod: billed: empty period %s to %s", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	bucket, size := "hour", time.Hour
	if from.Equal(from.Truncate(24*time.Hour)) && to.Equal(to.Truncate(24*time.Hour)) {
		bucket, size = "day", 24*time.Hour
	}
	q := url.Values{}
	q.Set("bucketSize", bucket)
	q.Set("grouping", "podId")
	q.Set("startTime", from.Format(time.RFC3339))
	q.Set("endTime", to.Format(time.RFC3339))
	var recs []billingRecord
	if err := c.rest.Do(ctx, http.MethodGet, "/billing/pods?"+q.Encode(), nil, &recs); err != nil {
		return nil, fmt.Errorf("runpod: pod billing: %w", err)
	}
	if recs == nil {
		return nil, fmt.Errorf("%w: runpod: GET /billing/pods answered null", connector.ErrBadAnswer)
	}
	var out []connector.BilledItem
	for i, r := range recs {
		if r.PodID == nil || *r.PodID == "" || r.Time == nil || r.Amount == nil {
			return nil, fmt.Errorf("%w: runpod: billing record %d lacks podId, time or amount", connector.ErrBadAnswer, i)
		}
		t, err := time.Parse(time.RFC3339Nano, *r.Time)
		if err != nil {
			return nil, fmt.Errorf("%w: runpod: billing record %d: time %q", connector.ErrBadAnswer, i, clip.Bytes(*r.Time, 40, "…"))
		}
		amt, err := amount(r.Amount)
		if err != nil {
			return nil, fmt.Errorf("runpod: billing record %d amount: %w", i, err)
		}
		it := connector.BilledItem{InstanceID: *r.PodID, From: t.UTC(), To: t.UTC().Add(size), Amount: amt, Currency: ledger.USD}
		if r.TimeBilledMs != nil {
			n, ok := r.TimeBilledMs.(json.Number)
			ms, err := strconv.ParseInt(string(n), 10, 64)
			if !ok || err != nil || ms < 0 {
				return nil, fmt.Errorf("%w: runpod: billing record %d: timeBilledMs %v", connector.ErrBadAnswer, i, r.TimeBilledMs)
			}
			it.BilledFor = time.Duration(ms) * time.Millisecond
		}
		if !it.To.After(from) || !it.From.Before(to) {
			continue
		}
		out = append(out, it)
	}
	return out, nil
}

// amount converts a money figure, a JSON number or a string, exactly.
// A number with more fraction digits than the ledger keeps (9) is
// rounded half away from zero to 9, exactly, through a rational: RunPod's
// backend computes prices in JavaScript doubles, so a figure like
// 0.8699999999999999 (3 × 0.29) is what it may print for 0.87. No float
// is ever involved.
func amount(v any) (ledger.Decimal, error) { return connector.Rounded(v) }

// gqlError is one entry of a GraphQL "errors" array.
type gqlError struct {
	Message    string `json:"message"`
	Extensions struct {
		Code string `json:"code"`
	} `json:"extensions"`
}

// query posts a GraphQL query and decodes its data into out. GraphQL
// reports errors in a 200 answer's "errors" array: one that says the
// caller is not authenticated is ErrUnauthorized, any other
// ErrBadAnswer, with the first message (clipped, the key redacted).
func (c *Client) query(ctx context.Context, q string, out any) error {
	var res struct {
		Data   json.RawMessage `json:"data"`
		Errors []gqlError      `json:"errors"`
	}
	if err := c.gql.Do(ctx, http.MethodPost, "", map[string]any{"query": q}, &res); err != nil {
		return fmt.Errorf("runpod: graphql: %w", err)
	}
	if len(res.Errors) > 0 {
		e := res.Errors[0]
		msg := clip.Bytes(strings.ReplaceAll(strings.TrimSpace(e.Message), c.key, "REDACTED"), 200, "…")
		if authError(e) {
			return fmt.Errorf("%w: runpod: graphql: %s", connector.ErrUnauthorized, msg)
		}
		return fmt.Errorf("%w: runpod: graphql: %s", connector.ErrBadAnswer, msg)
	}
	if len(res.Data) == 0 || string(res.Data) == "null" {
		return fmt.Errorf("%w: runpod: graphql answered no data", connector.ErrBadAnswer)
	}
	dec := json.NewDecoder(strings.NewReader(string(res.Data)))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("%w: runpod: graphql: %s", connector.ErrBadAnswer, clip.Bytes(err.Error(), 200, "…"))
	}
	return nil
}

// authError tells an authentication error from others: the code Apollo
// servers put in extensions, or words of a message about the key
// (RunPod's own texts are not documented).
func authError(e gqlError) bool {
	switch strings.ToUpper(e.Extensions.Code) {
	case "UNAUTHENTICATED", "UNAUTHORIZED", "FORBIDDEN":
		return true
	}
	m := strings.ToLower(e.Message)
	for _, w := range []string{"unauthorized", "unauthenticated", "not authenticated", "not authorized", "api key", "api_key"} {
		if strings.Contains(m, w) {
			return true
		}
	}
	return false
}
