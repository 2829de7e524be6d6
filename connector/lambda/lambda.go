// Package lambda is the connector for Lambda Cloud's on-demand instances,
// through the Cloud API (docs: https://docs-api.lambda.ai/api/cloud, the
// OpenAPI at https://cloud.lambda.ai/api/v1/openapi.json; the how-to page
// https://docs.lambda.ai/public-cloud/on-demand/cloud-api/). It lists
// instances with their state, GPU and price, and terminates them. Lambda
// has no stop state, and its API reports neither a balance nor billed
// amounts: those methods return connector.ErrNotSupported.
package lambda

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/internal/clip"
	"github.com/gpuledger/gpuledger/ledger"
)

// DefaultBaseURL is the Cloud API's base. Lambda's current docs and its
// OpenAPI (version 1.x, served at cloud.lambda.ai/api/v1/openapi.json)
// use cloud.lambda.ai; the older cloud.lambdalabs.com, which SkyPilot and
// dstack still call, answers the same API.
const DefaultBaseURL = "https://cloud.lambda.ai/api/v1"

// PollInterval is MinInterval's value. Lambda's own words, in the
// introduction of its OpenAPI (docs-api.lambda.ai/api/cloud, version
// 1.8): "Requests to the API are generally limited to one request per
// second. Requests to the /instance-operations/launch endpoint are limited
// to one request per 12 seconds, or five requests per minute." (The
// how-to page docs.lambda.ai/public-cloud/on-demand/cloud-api/ says the
// same with "1 request every 10 seconds" for launch; SkyPilot's
// lambda_utils.py cites it.) One poll is one GET /instances; 10 s between
// polls is a tenth of the limit, which leaves room for a terminate and for
// the user's own tools on the same key (the limit binds the account, not
// this client).
const PollInterval = 10 * time.Second

// Config is what a Client needs.
type Config struct {
	// Key is the Cloud API key (cloud.lambda.ai/api-keys/cloud-api). It
	// goes only in the Authorization header, never in a URL or an error.
	Key string
	// BaseURL replaces DefaultBaseURL (tests, proxies; the wiring reads
	// GPULEDGER_LAMBDA_URL). No trailing slash is needed.
	BaseURL string
	// HTTPClient is used for every call; it must have a Timeout (default:
	// connector.HTTP's 20 s client).
	HTTPClient *http.Client
}

// Client is one Lambda Cloud account. It is safe for concurrent use.
type Client struct {
	h connector.HTTP
}

// New returns a Client for cfg. It makes no call (Check does); it
// refuses an empty key or one that could not travel in a header.
func New(cfg Config) (*Client, error) {
	k := cfg.Key
	if k == "" || strings.IndexFunc(k, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return nil, errors.New("lambda: the API key is empty or holds spaces or control characters")
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	if base == "" {
		base = DefaultBaseURL
	}
	return &Client{h: connector.HTTP{
		Platform: "lambda",
		Base:     base,
		Client:   cfg.HTTPClient,
		// Lambda documents a Bearer token and, "chiefly ... to support
		// curl's -u flag", basic auth with the key as the user name; it
		// recommends Bearer (OpenAPI, "Authentication"), which SkyPilot and
		// dstack send too.
		Auth:    func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+k) },
		Secret:  k,
		Explain: explain,
	}}, nil
}

// Platform is the ledger's profile key.
func (c *Client) Platform() string { return "lambda" }

// MinInterval is PollInterval (why: see there).
func (c *Client) MinInterval() time.Duration { return PollInterval }

// Check lists the instances once: the cheapest documented call that needs
// the key (there is no "who am I"), and it proves the key can read what
// the sync reads. ErrUnauthorized when Lambda rejects the key.
func (c *Client) Check(ctx context.Context) error {
	_, err := c.Instances(ctx)
	return err
}

// Balance: Lambda's Cloud API has no balance or credit endpoint (its
// OpenAPI lists instances, instance types, SSH keys, file systems,
// images, firewall rules; accounts are postpaid by card).
func (c *Client) Balance(context.Context) (connector.Balance, error) {
	return connector.Balance{}, fmt.Errorf("%w: lambda has no balance in its API (postpaid by card)", connector.ErrNotSupported)
}

// Stop: a Lambda instance cannot be stopped, only terminated ("there is
// no stop state", docs/platforms.md; the API's instance operations are
// launch, restart and terminate).
func (c *Client) Stop(context.Context, string) error {
	return fmt.Errorf("%w: lambda instances cannot be stopped, only terminated", connector.ErrNotSupported)
}

// Billed: the API reports no usage or invoices (the dashboard's usage
// page has no API counterpart).
func (c *Client) Billed(context.Context, time.Time, time.Time) ([]connector.BilledItem, error) {
	return nil, fmt.Errorf("%w: lambda reports no billing in its API", connector.ErrNotSupported)
}

// apiInstance is one element of GET /instances' data (OpenAPI "Instance").
// Only the fields read are declared; a declared field of another JSON
// type fails the whole answer.
type apiInstance struct {
	ID           *string          `json:"id"`
	Name         *string          `json:"name"` // nullable
	Status       *string          `json:"status"`
	InstanceType *apiInstanceType `json:"instance_type"`
	// IP is the instance's public IPv4 address (absent while booting).
	IP *string `json:"ip"`
}

// apiInstanceType is OpenAPI "InstanceType": price_cents_per_hour is an
// integer of US cents per hour; specs.gpus the GPU count.
type apiInstanceType struct {
	Name           string `json:"name"`
	Description    string `json:"description"`     // "8x H100 (80 GB SXM5)"
	GPUDescription string `json:"gpu_description"` // "H100 (80 GB SXM5)"
	Price          any    `json:"price_cents_per_hour"`
	Specs          *struct {
		GPUs any `json:"gpus"`
	} `json:"specs"`
}

// Instances lists the account's instances: GET /instances, one call (the
// API does not page). An answer without a data array, or with any
// instance that cannot be read in full, is refused whole
// (ErrBadAnswer): never a partial list, which would read as instances
// that vanished.
func (c *Client) Instances(ctx context.Context) ([]connector.Instance, error) {
	var ans struct {
		Data *[]apiInstance `json:"data"`
	}
	if err := c.h.Do(ctx, http.MethodGet, "/instances", nil, &ans); err != nil {
		return nil, err
	}
	if ans.Data == nil {
		return nil, fmt.Errorf("%w: lambda: the instance list has no data array", connector.ErrBadAnswer)
	}
	out := make([]connector.Instance, 0, len(*ans.Data))
	seen := map[string]bool{}
	for i, a := range *ans.Data {
		in, err := convert(a)
		if err != nil {
			return nil, fmt.Errorf("lambda: instance %d: %w", i, err)
		}
		if seen[in.ID] {
			return nil, fmt.Errorf("%w: lambda: instance %q is listed twice", connector.ErrBadAnswer, clip.Bytes(in.ID, 40, "…"))
		}
		seen[in.ID] = true
		out = append(out, in)
	}
	return out, nil
}

func convert(a apiInstance) (connector.Instance, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", connector.ErrBadAnswer, fmt.Sprintf(format, args...))
	}
	if a.ID == nil || strings.TrimSpace(*a.ID) == "" {
		return connector.Instance{}, bad("no id")
	}
	if a.Status == nil || *a.Status == "" {
		return connector.Instance{}, bad("%q has no status", clip.Bytes(*a.ID, 40, "…"))
	}
	if a.InstanceType == nil {
		return connector.Instance{}, bad("%q has no instance_type", clip.Bytes(*a.ID, 40, "…"))
	}
	in := connector.Instance{
		ID:       *a.ID,
		Currency: ledger.USD,
		RawState: *a.Status,
		State:    state(*a.Status),
		GPU:      gpuModel(a.InstanceType),
	}
	if a.Name != nil {
		in.Name = *a.Name
	}
	if p := a.InstanceType.Price; p != nil {
		// Integer US cents per hour (OpenAPI: "Price of the instance type,
		// in US cents per hour", type integer). A fraction (110.5, even
		// 110.0) is refused, not rounded or scaled: it is not the
		// documented type, and a changed unit (dollars?) is likelier than
		// half-cents.
		d, err := connector.Scaled(p, 2)
		if err != nil {
			return connector.Instance{}, bad("price_cents_per_hour of %q: %v", clip.Bytes(in.ID, 40, "…"), err)
		}
		if d.Sign() < 0 {
			return connector.Instance{}, bad("price_cents_per_hour of %q is negative", clip.Bytes(in.ID, 40, "…"))
		}
		in.Price, in.PriceOK = d, true
	}
	n, err := gpuCount(a.InstanceType)
	if err != nil {
		return connector.Instance{}, bad("GPU count of %q: %v", clip.Bytes(in.ID, 40, "…"), err)
	}
	in.GPUCount = n
	if a.IP != nil {
		if in.Address, err = connector.ParseAddress(*a.IP); err != nil {
			return connector.Instance{}, bad("ip of %q: %v", clip.Bytes(in.ID, 40, "…"), err)
		}
	}
	return in, nil
}

// state maps Lambda's status (OpenAPI "InstanceStatus": booting, active,
// unhealthy, terminating, terminated, preempted) to what billing depends
// on. Booting and unhealthy instances are Running: Lambda bills "from the
// moment you spin up (start) the instance up to the moment you terminate"
// (docs.lambda.ai, on-demand billing); newer pages say booting is not
// billed, and counting it errs toward the bill the user sees, not away.
// Terminating (the user asked), terminated and preempted (Lambda took the
// instance back) are Terminated. Anything else is Unknown, never read as
// stopped.
func state(s string) connector.State {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "booting", "active", "unhealthy":
		return connector.Running
	case "terminating", "terminated", "preempted":
		return connector.Terminated
	}
	return connector.Unknown
}

var memNote = regexp.MustCompile(`\s*\([^)]*\)`)
var countPrefix = regexp.MustCompile(`^\s*\d+\s*x\s+`)

// gpuModel is the GPU as Lambda names it, less the memory and form note
// in parentheses: gpu_description "H100 (80 GB SXM5)" is "H100", "RTX
// A6000 (48 GB)" is "RTX A6000". That keeps Lambda's own words while
// ledger.NormalizeGPUName reduces it to the key an agent's NVML name
// reduces to ("NVIDIA H100 80GB HBM3" → "h100"), so the two compare. The
// type's description ("8x H100 (80 GB SXM5)", count dropped) stands in
// when gpu_description is empty; "" when neither says.
func gpuModel(t *apiInstanceType) string {
	s := t.GPUDescription
	if strings.TrimSpace(s) == "" {
		s = countPrefix.ReplaceAllString(t.Description, "")
	}
	return strings.Join(strings.Fields(memNote.ReplaceAllString(s, "")), " ")
}

var typeCount = regexp.MustCompile(`^gpu_(\d+)x_`)

// gpuCount is specs.gpus, else the count in the type's name
// ("gpu_8x_a100" is 8), else 0 (unknown). A count that is not a
// non-negative integer is an error.
func gpuCount(t *apiInstanceType) (int, error) {
	if t.Specs != nil && t.Specs.GPUs != nil {
		var s string
		switch v := t.Specs.GPUs.(type) {
		case json.Number:
			s = v.String()
		case string:
			s = v
		default:
			return 0, fmt.Errorf("specs.gpus is %T", v)
		}
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 0 {
			return 0, fmt.Errorf("specs.gpus %q is not a count", clip.Bytes(s, 20, "…"))
		}
		return n, nil
	}
	if m := typeCount.FindStringSubmatch(t.Name); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			return n, nil
		}
	}
	return 0, nil
}

// Terminate terminates one instance: POST /instance-operations/terminate
// {"instance_ids": [id]}, answered with data.terminated_instances (OpenAPI
// "terminateInstance": the instances, each with its id and status). The
// instance must be in that list, with a status that is no longer
// running: an answer that leaves it out is ErrBadAnswer (the termination
// is unconfirmed; the caller re-reads Instances rather than taking the
// instance for gone). ErrNotFound when Lambda says no such instance
// (404, or its global/object-does-not-exist code).
func (c *Client) Terminate(ctx context.Context, id string) error {
	if strings.TrimSpace(id) == "" {
		return errors.New("lambda: terminate: no instance ID")
	}
	var ans struct {
		Data *struct {
			Terminated *[]struct {
				ID     string  `json:"id"`
				Status *string `json:"status"`
			} `json:"terminated_instances"`
		} `json:"data"`
	}
	body := map[string][]string{"instance_ids": {id}}
	if err := c.h.Do(ctx, http.MethodPost, "/instance-operations/terminate", body, &ans); err != nil {
		return fmt.Errorf("lambda: terminate %q: %w", clip.Bytes(id, 40, "…"), err)
	}
	if ans.Data == nil || ans.Data.Terminated == nil {
		return fmt.Errorf("%w: lambda: terminate %q: the answer has no data.terminated_instances", connector.ErrBadAnswer, clip.Bytes(id, 40, "…"))
	}
	for _, t := range *ans.Data.Terminated {
		if t.ID != id {
			continue
		}
		if t.Status != nil && state(*t.Status) != connector.Terminated {
			return fmt.Errorf("%w: lambda: terminate %q: the answer lists it as %q", connector.ErrBadAnswer, clip.Bytes(id, 40, "…"), clip.Bytes(*t.Status, 40, "…"))
		}
		return nil
	}
	return fmt.Errorf("%w: lambda: terminate %q: the answer does not list it as terminated", connector.ErrBadAnswer, clip.Bytes(id, 40, "…"))
}

// explain reads Lambda's error envelope, {"error": {"code", "message",
// "suggestion"}} (OpenAPI, "Error responses"), into "code: message" for
// the error text, and turns the codes that say more than the status into
// the matching error (Lambda: rely on code, not on message): an invalid
// key or an inactive account is ErrUnauthorized whatever the status, a
// missing instance ErrNotFound, an internal error or an upstream
// provider's outage ("provider/internal-unavailable", "Try again
// shortly") ErrUnavailable.
func explain(status int, body []byte) (string, error) {
	var env struct {
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &env) != nil || env.Error == nil || env.Error.Code == "" {
		return "", nil
	}
	detail := env.Error.Code
	if m := strings.TrimSpace(env.Error.Message); m != "" {
		detail += ": " + m
	}
	switch env.Error.Code {
	case "global/invalid-api-key", "global/account-inactive":
		return detail, connector.ErrUnauthorized
	case "global/object-does-not-exist", "global/not-found":
		return detail, connector.ErrNotFound
	case "global/internal-error", "provider/internal-unavailable":
		return detail, connector.ErrUnavailable
	}
	return detail, nil
}
