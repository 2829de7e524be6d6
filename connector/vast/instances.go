package vast

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/ledger"
)

// Instance is one instance as Vast.ai lists it: the common facts, and
// the parts of its price that Vast.ai reports besides dph_total
// (show_instances.yaml; the example there has dph_base 0.8 +
// storage_total_cost 0.0021 = dph_total 0.8021).
type Instance struct {
	connector.Instance
	// Price (in Instance) is dph_total: the whole instance's $/h while it
	// runs, the GPU (dph_base) and its disk (storage_total_cost) together.
	// GPUPrice is dph_base, the compute part alone.
	GPUPrice Amount
	// DiskPerHour is storage_total_cost: the disk's $/h, which goes on
	// billing while the instance is stopped (docs.vast.ai/cli/reference/
	// show-instances: "Disk charges continue").
	DiskPerHour Amount
	// StoragePerGBMonth is storage_cost: the host's $/GB/month.
	StoragePerGBMonth Amount
	// InetUpPerGB and InetDownPerGB are inet_up_cost and inet_down_cost,
	// $/GB of traffic (openapi.yaml: "Upload bandwidth cost ($/GB)").
	// Listed for offers; present on instances in the v0 example only.
	InetUpPerGB, InetDownPerGB Amount
	// Intended is intended_status (what the user asked for) and CurState
	// cur_state (the machine contract: running, stopped, unloaded).
	Intended, CurState string
}

// Amount is an optional exact amount in USD.
type Amount struct {
	Value ledger.Decimal
	OK    bool
}

// Instances lists every instance of the account, all pages.
func (c *Client) Instances(ctx context.Context) ([]connector.Instance, error) {
	list, err := c.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]connector.Instance, len(list))
	for i, in := range list {
		out[i] = in.Instance
	}
	return out, nil
}

// List is Instances with Vast.ai's price parts. It pages GET
// /api/v1/instances/?limit=25&order_by=[{"col":"id","dir":"asc"}],
// following next_token (sent back as after_token) with PageGap between
// pages, at most MaxPages. Any page that fails, or any instance in it
// that does not parse, fails the whole listing: a partial list would
// make the missing instances look vanished. An instance listed on two
// pages (the list changed between them) is kept once, as last seen.
func (c *Client) List(ctx context.Context) ([]Instance, error) {
	var out []Instance
	at := map[string]int{}
	after := ""
	seen := map[string]bool{}
	for page := 0; ; page++ {
		if page == MaxPages {
			return nil, bad("instances: more than %d pages", MaxPages)
		}
		if page > 0 {
			if err := c.pageWait(ctx); err != nil {
				return nil, err
			}
		}
		q := url.Values{}
		q.Set("limit", strconv.Itoa(PageSize))
		q.Set("order_by", `[{"col":"id","dir":"asc"}]`)
		if after != "" {
			q.Set("after_token", after)
		}
		var obj map[string]any
		if err := c.v1.Do(ctx, http.MethodGet, "/instances/?"+q.Encode(), nil, &obj); err != nil {
			return nil, err
		}
		if err := refused(obj); err != nil {
			return nil, err
		}
		rows, ok := obj["instances"].([]any)
		if !ok {
			return nil, bad("instances: instances is a %T, not a list", obj["instances"])
		}
		for i, m := range rows {
			in, err := parseInstance(m)
			if err != nil {
				return nil, fmt.Errorf("vast: instances: page %d, #%d: %w", page+1, i+1, err)
			}
			if j, ok := at[in.ID]; ok {
				out[j] = in
				continue
			}
			at[in.ID] = len(out)
			out = append(out, in)
		}
		switch t := obj["next_token"].(type) {
		case nil:
			return out, nil
		case string:
			if t == "" {
				return out, nil
			}
			if seen[t] {
				return nil, bad("instances: next_token repeats")
			}
			seen[t] = true
			after = t
		default:
			return nil, bad("instances: next_token is a %T", t)
		}
	}
}

func parseInstance(m any) (Instance, error) {
	raw, ok := m.(map[string]any)
	if !ok {
		return Instance{}, bad("an instance is a %T, not an object", m)
	}
	var in Instance
	idn, ok := raw["id"].(json.Number)
	id, err := idn.Int64()
	if !ok || err != nil || id <= 0 {
		return Instance{}, bad("id %v is not a positive integer", raw["id"])
	}
	in.ID = strconv.FormatInt(id, 10)
	str := func(k string) (string, error) {
		switch v := raw[k].(type) {
		case nil:
			return "", nil
		case string:
			return v, nil
		default:
			return "", bad("instance %s: %s is a %T, not a string", in.ID, k, v)
		}
	}
	var actual, addr string
	for k, dst := range map[string]*string{"public_ipaddr": &addr, "actual_status": &actual, "cur_state": &in.CurState, "intended_status": &in.Intended, "label": &in.Name, "gpu_name": &in.GPU} {
		if *dst, err = str(k); err != nil {
			return Instance{}, err
		}
	}
	if v, ok := raw["num_gpus"]; ok && v != nil {
		n, ok := v.(json.Number)
		g, err := n.Int64()
		if !ok || err != nil || g < 0 || g > 1<<16 {
			return Instance{}, bad("instance %s: num_gpus %v is not a count", in.ID, v)
		}
		in.GPUCount = int(g)
	}
	amount := func(k string, dst *Amount) error {
		v, ok := raw[k]
		if !ok || v == nil {
			return nil
		}
		d, err := money(v)
		if err != nil {
			return fmt.Errorf("instance %s: %s: %w", in.ID, k, err)
		}
		if d.Sign() < 0 {
			return bad("instance %s: %s is negative", in.ID, k)
		}
		*dst = Amount{d, true}
		return nil
	}
	var total Amount
	for k, dst := range map[string]*Amount{"dph_total": &total, "dph_base": &in.GPUPrice, "storage_total_cost": &in.DiskPerHour, "storage_cost": &in.StoragePerGBMonth, "inet_up_cost": &in.InetUpPerGB, "inet_down_cost": &in.InetDownPerGB} {
		if err := amount(k, dst); err != nil {
			return Instance{}, err
		}
	}
	in.Price, in.PriceOK = total.Value, total.OK
	in.Currency = ledger.USD
	if in.StartedAt, err = epoch(raw["start_date"]); err != nil {
		return Instance{}, fmt.Errorf("instance %s: start_date: %w", in.ID, err)
	}
	in.State, in.RawState = mapState(actual, in.CurState)
	// public_ipaddr comes with a trailing newline at times (open-source
	// clients of this API strip it, dstack's among them); only the
	// surrounding space is dropped, the rest must be one address.
	if in.Address, err = connector.ParseAddress(strings.TrimSpace(addr)); err != nil {
		return Instance{}, fmt.Errorf("instance %s: public_ipaddr: %w", in.ID, err)
	}
	return in, nil
}

// mapState reduces actual_status (and cur_state) to what billing depends
// on, per the status table of docs.vast.ai/cli/reference/show-instances:
//
//   - running ("GPU charges apply") and frozen ("paused with memory
//     preserved. GPU charges apply"): Running.
//   - stopped ("Disk charges continue; no GPU charges"): Stopped.
//   - loading, created and null (provisioning): Stopped, because Vast.ai
//     does not bill the GPU before the instance runs ("Do I pay for
//     'Loading' instances? No", docs.vast.ai/guides/instances/
//     manage-instances; "GPU charges only begin once the status reaches
//     running", vast-cli SKILL.md); the disk bills from creation, as for
//     a stopped one.
//   - exited ("Container process exited unexpectedly"): Stopped only when
//     cur_state says the machine contract is stopped too; while cur_state
//     is still running the GPU stays allocated and the docs do not say it
//     stops billing, so Unknown (never read as stopped).
//   - cur_state unloaded ("released on destroy"): Terminated.
//   - rebooting, unknown, offline and anything else: Unknown.
func mapState(actual, cur string) (connector.State, string) {
	raw := actual
	if raw == "" {
		raw = "provisioning"
	}
	if cur == "unloaded" {
		return connector.Terminated, raw
	}
	switch actual {
	case "running", "frozen":
		return connector.Running, raw
	case "stopped":
		return connector.Stopped, raw
	case "", "loading", "created":
		return connector.Stopped, raw
	case "exited":
		if cur == "stopped" {
			return connector.Stopped, raw
		}
		return connector.Unknown, raw
	}
	return connector.Unknown, raw
}

// Billed returns Vast.ai's instance charges in [from, to): GET
// /api/v0/charges/?select_filters={"day":{"gte":FROM,"lte":TO-1},
// "type":{"in":["instance"]}}&limit=100, all pages (next_token →
// after_token). Each result is one instance's charge over the window,
// GPU, disk and traffic together ("Shows charges per instance, including
// GPU, storage, and bandwidth", show-charges): source "instance-ID",
// amount in USD, start and end in epoch seconds. BilledFor stays zero:
// Vast.ai gives the hours only inside a description text.
func (c *Client) Billed(ctx context.Context, from, to time.Time) ([]connector.BilledItem, error) {
	if !to.After(from) {
		return nil, nil
	}
	filters := fmt.Sprintf(`{"day":{"gte":%d,"lte":%d},"type":{"in":["instance"]}}`, from.Unix(), to.Unix()-1)
	var out []connector.BilledItem
	after := ""
	seen := map[string]bool{}
	for page := 0; ; page++ {
		if page == MaxPages {
			return nil, bad("charges: more than %d pages", MaxPages)
		}
		if page > 0 {
			if err := c.pageWait(ctx); err != nil {
				return nil, err
			}
		}
		q := url.Values{}
		q.Set("select_filters", filters)
		q.Set("limit", "100")
		q.Set("latest_first", "false")
		if after != "" {
			q.Set("after_token", after)
		}
		var obj map[string]any
		if err := c.v0.Do(ctx, http.MethodGet, "/charges/?"+q.Encode(), nil, &obj); err != nil {
			return nil, err
		}
		if err := refused(obj); err != nil {
			return nil, err
		}
		rows, ok := obj["results"].([]any)
		if !ok {
			return nil, bad("charges: results is a %T, not a list", obj["results"])
		}
		for i, r := range rows {
			item, keep, err := parseCharge(r)
			if err != nil {
				return nil, fmt.Errorf("vast: charges: page %d, #%d: %w", page+1, i+1, err)
			}
			if keep {
				out = append(out, item)
			}
		}
		switch t := obj["next_token"].(type) {
		case nil:
			return out, nil
		case string:
			if t == "" {
				return out, nil
			}
			if seen[t] {
				return nil, bad("charges: next_token repeats")
			}
			seen[t] = true
			after = t
		default:
			return nil, bad("charges: next_token is a %T", t)
		}
	}
}

func parseCharge(r any) (connector.BilledItem, bool, error) {
	m, ok := r.(map[string]any)
	if !ok {
		return connector.BilledItem{}, false, bad("a charge is a %T, not an object", r)
	}
	if typ, _ := m["type"].(string); typ != "instance" {
		return connector.BilledItem{}, false, nil // volumes, serverless
	}
	src, _ := m["source"].(string)
	id, ok := strings.CutPrefix(src, "instance-")
	if _, err := strconv.ParseUint(id, 10, 63); !ok || err != nil {
		return connector.BilledItem{}, false, bad("charge source %q is not instance-ID", src)
	}
	v, ok := m["amount"]
	if !ok || v == nil {
		return connector.BilledItem{}, false, bad("charge of instance %s has no amount", id)
	}
	amt, err := money(v)
	if err != nil {
		return connector.BilledItem{}, false, fmt.Errorf("charge of instance %s: %w", id, err)
	}
	start, err := epoch(m["start"])
	if err != nil {
		return connector.BilledItem{}, false, fmt.Errorf("charge of instance %s: start: %w", id, err)
	}
	end, err := epoch(m["end"])
	if err != nil {
		return connector.BilledItem{}, false, fmt.Errorf("charge of instance %s: end: %w", id, err)
	}
	return connector.BilledItem{InstanceID: id, From: start, To: end, Amount: amt, Currency: ledger.USD}, true, nil
}

// pageWait pauses between two pages of one listing (Vast.ai limits each
// endpoint by a minimum interval between calls), or returns ctx's error.
func (c *Client) pageWait(ctx context.Context) error {
	t := time.NewTimer(c.pageGap)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
