package autodl

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

// Pro instance statuses as AutoDL-cli's schema lists them
// (src/core/schemas.ts instanceStatusSchema).
const (
	stCreating     = "creating"
	stStarting     = "starting"
	stRunning      = "running"
	stShuttingDown = "shutting_down"
	stShutdown     = "shutdown"
	stReleasing    = "releasing"
	stReleased     = "released"
	stFailed       = "failed"
)

// state reduces AutoDL's word to what billing depends on: running and
// starting bill the GPU (AutoDL bills from power-on to power-off); shutdown
// (and "stopped", should it appear) ends compute billing; released is gone.
// Everything else (creating, shutting_down, releasing, failed, a word not
// seen before) is Unknown, never read as stopped.
func state(raw string) connector.State {
	switch raw {
	case stRunning, stStarting:
		return connector.Running
	case stShutdown, "stopped":
		return connector.Stopped
	case stReleased:
		return connector.Terminated
	}
	return connector.Unknown
}

// Instances lists the account's Pro instances: POST
// /api/v1/dev/instance/pro/list {page_index, page_size}, every page up to
// data.max_page (or, without max_page, until a short page). Each item's
// uuid, status, name, req_gpu_amount, gpu_spec_uuid, started_at and
// status_at are read (AutoDL-cli schemas.ts rawInstanceSchema; times are
// strings or Go's sql.NullTime {Time, Valid}).
//
// The price is the snapshot's payg_price (GET
// /api/v1/dev/instance/pro/snapshot?instance_uuid=, thousandths of a yuan
// per hour for the whole instance), read once per power-on of a running
// instance and kept: a steady poll is one list call. A stopped instance
// reports the price of its last power-on seen, or none.
//
// An account that has not passed real-name verification cannot have Pro
// instances; AutoDL refuses the list with a message about 实名 (what
// AutoDL-cli's error mapping expects; the exact code is undocumented), and
// Instances returns an empty list with no error, since "no Pro instances"
// is then the truth. Ordinary container instances are never listed.
func (c *Client) Instances(ctx context.Context) ([]connector.Instance, error) {
	var out []connector.Instance
	seen := map[string]bool{}
	for page := 1; ; page++ {
		if page > maxPages {
			return nil, fmt.Errorf("%w: autodl instance/pro/list: more than %d pages", connector.ErrBadAnswer, maxPages)
		}
		var data struct {
			List    *[]map[string]any `json:"list"`
			MaxPage any               `json:"max_page"`
		}
		err := c.call(ctx, http.MethodPost, pathList, map[string]int{"page_index": page, "page_size": pageSize}, &data)
		if err != nil {
			if kindOf(err) == kindNotVerified {
				return []connector.Instance{}, nil
			}
			return nil, err
		}
		if data.List == nil {
			return nil, fmt.Errorf("%w: autodl instance/pro/list: no list", connector.ErrBadAnswer)
		}
		for i, item := range *data.List {
			in, err := parseInstance(item)
			if err != nil {
				return nil, fmt.Errorf("autodl instance/pro/list page %d item %d: %w", page, i, err)
			}
			if seen[in.ID] {
				continue // shifted across pages while we read
			}
			seen[in.ID] = true
			out = append(out, in)
		}
		last := len(*data.List) < pageSize
		if data.MaxPage != nil {
			mp, err := intField("max_page", data.MaxPage)
			if err != nil {
				return nil, fmt.Errorf("autodl instance/pro/list: %w", err)
			}
			last = page >= mp
		}
		if last || len(*data.List) == 0 {
			break
		}
	}
	if err := c.price(ctx, out); err != nil {
		return nil, err
	}
	if out == nil {
		out = []connector.Instance{}
	}
	return out, nil
}

// price fills in each instance's price and GPU model from the cache, or
// from a snapshot for a running instance whose power-on is not cached. An
// instance that vanished between the list and its snapshot keeps no price
// (the next poll tells); any other snapshot failure fails the whole call.
func (c *Client) price(ctx context.Context, ins []connector.Instance) error {
	live := map[string]bool{}
	for i := range ins {
		in := &ins[i]
		live[in.ID] = true
		c.mu.Lock()
		p, ok := c.prices[in.ID]
		c.mu.Unlock()
		if in.State == connector.Running && (!ok || !p.startedAt.Equal(in.StartedAt)) {
			np, err := c.snapshot(ctx, in.ID)
			if errors.Is(err, connector.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			np.startedAt = in.StartedAt
			p, ok = np, true
			c.mu.Lock()
			c.prices[in.ID] = np
			c.mu.Unlock()
		}
		if !ok {
			continue
		}
		in.Price, in.PriceOK = p.price, p.priceOK
		if p.gpu != "" {
			in.GPU = p.gpu
		}
	}
	c.mu.Lock()
	for id := range c.prices {
		if !live[id] {
			delete(c.prices, id)
		}
	}
	c.mu.Unlock()
	return nil
}

// snapshot reads GET /api/v1/dev/instance/pro/snapshot?instance_uuid=ID:
// payg_price (thousandths of a yuan per hour) and snapshot_gpu_alias_name
// (AutoDL-cli schemas.ts rawSnapshotSchema and its recorded answer).
// The instance ID goes in the query, as AutoDL-cli sends it; it is not a
// secret.
func (c *Client) snapshot(ctx context.Context, id string) (priced, error) {
	var data map[string]any
	if err := c.call(ctx, http.MethodGet, pathSnapshot+"?instance_uuid="+url.QueryEscape(id), nil, &data); err != nil {
		return priced{}, err
	}
	var p priced
	if v, ok := data["payg_price"]; ok && v != nil {
		d, err := milli("payg_price", v)
		if err != nil {
			return priced{}, fmt.Errorf("autodl instance/pro/snapshot %s: %w", clip.Bytes(id, 40, "…"), err)
		}
		p.price, p.priceOK = d, true
	}
	if v, ok := data["snapshot_gpu_alias_name"]; ok && v != nil {
		s, ok := v.(string)
		if !ok {
			return priced{}, fmt.Errorf("%w: autodl instance/pro/snapshot: snapshot_gpu_alias_name is %T", connector.ErrBadAnswer, v)
		}
		p.gpu = strings.TrimSpace(s)
	}
	return p, nil
}

// parseInstance reads one list item. uuid and status are required strings;
// other fields may be missing or null but not of another type.
func parseInstance(m map[string]any) (connector.Instance, error) {
	var in connector.Instance
	var err error
	if in.ID, err = strField(m, "uuid", true); err != nil {
		return in, err
	}
	if in.RawState, err = strField(m, "status", true); err != nil {
		return in, err
	}
	in.State = state(in.RawState)
	if in.Name, err = strField(m, "name", false); err != nil {
		return in, err
	}
	if in.GPU, err = strField(m, "gpu_spec_uuid", false); err != nil {
		return in, err
	}
	if v, ok := m["req_gpu_amount"]; ok && v != nil {
		if in.GPUCount, err = intField("req_gpu_amount", v); err != nil {
			return in, err
		}
	}
	in.Currency = ledger.CNY
	if in.StartedAt, err = timeField(m, "started_at"); err != nil {
		return in, err
	}
	if in.StateSince, err = timeField(m, "status_at"); err != nil {
		return in, err
	}
	return in, nil
}

func strField(m map[string]any, key string, required bool) (string, error) {
	v, ok := m[key]
	if !ok || v == nil {
		if required {
			return "", fmt.Errorf("%w: no %s", connector.ErrBadAnswer, key)
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%w: %s is %T, not a string", connector.ErrBadAnswer, key, v)
	}
	s = strings.TrimSpace(s)
	if required && s == "" {
		return "", fmt.Errorf("%w: %s is empty", connector.ErrBadAnswer, key)
	}
	return s, nil
}

func intField(key string, v any) (int, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("%w: %s is %T, not an integer", connector.ErrBadAnswer, key, v)
	}
	i, err := strconv.Atoi(n.String())
	if err != nil || i < 0 {
		return 0, fmt.Errorf("%w: %s %q is not a count", connector.ErrBadAnswer, key, clip.Bytes(n.String(), 20, "…"))
	}
	return i, nil
}

// timeField reads an RFC 3339 time given as a string or as Go's
// sql.NullTime {"Time": "...", "Valid": bool} (AutoDL-cli schemas.ts
// nullTime); zero when missing, null, empty, or Valid is false.
func timeField(m map[string]any, key string) (time.Time, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return time.Time{}, nil
	}
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case map[string]any:
		valid, ok := x["Valid"].(bool)
		if !ok {
			return time.Time{}, fmt.Errorf("%w: %s.Valid is not a bool", connector.ErrBadAnswer, key)
		}
		if !valid {
			return time.Time{}, nil
		}
		if s, ok = x["Time"].(string); !ok {
			return time.Time{}, fmt.Errorf("%w: %s.Time is not a string", connector.ErrBadAnswer, key)
		}
	default:
		return time.Time{}, fmt.Errorf("%w: %s is %T, not a time", connector.ErrBadAnswer, key, v)
	}
	if strings.TrimSpace(s) == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %s %q is not an RFC 3339 time", connector.ErrBadAnswer, key, clip.Bytes(s, 40, "…"))
	}
	if t.Year() <= 1 {
		return time.Time{}, nil
	}
	return t, nil
}

// status reads GET /api/v1/dev/instance/pro/status?instance_uuid=ID, whose
// data is the status word itself (AutoDL-cli endpoints/instance.ts
// getInstanceStatus and its test answer {"code":"Success","data":"running"}).
func (c *Client) status(ctx context.Context, id string) (string, error) {
	var s any
	if err := c.call(ctx, http.MethodGet, pathStatus+"?instance_uuid="+url.QueryEscape(id), nil, &s); err != nil {
		return "", err
	}
	w, ok := s.(string)
	if !ok || strings.TrimSpace(w) == "" {
		return "", fmt.Errorf("%w: autodl instance/pro/status: data is %T, not a status word", connector.ErrBadAnswer, s)
	}
	return strings.TrimSpace(w), nil
}

// notVerified turns the real-name refusal of an instance operation into
// ErrNotFound: such an account has no Pro instance by that ID.
func notVerified(err error, id string) error {
	if kindOf(err) == kindNotVerified {
		return fmt.Errorf("%w: %s (the account cannot have Pro instances: %w)", connector.ErrNotFound, clip.Bytes(id, 40, "…"), err)
	}
	return err
}

// Stop powers a Pro instance off: POST /api/v1/dev/instance/pro/power_off
// {"instance_uuid": ID} (AutoDL-cli endpoints/instance.ts). It reads the
// status first, so that an instance already shut down, shutting down or
// released is success without a second power_off (which AutoDL refuses
// with "…无需重复操作", also taken as success). The caller must re-read
// the instance until it reports Stopped: a power_off sent while an
// instance is still starting was seen not to take effect (AutoDL-cli
// CHANGELOG, "verify-poweroff"). ErrNotFound for an unknown ID.
func (c *Client) Stop(ctx context.Context, id string) error {
	st, err := c.status(ctx, id)
	if err != nil {
		return notVerified(err, id)
	}
	switch st {
	case stShutdown, stShuttingDown, stReleasing, stReleased, "stopped":
		return nil
	}
	return c.powerOff(ctx, id)
}

func (c *Client) powerOff(ctx context.Context, id string) error {
	err := c.call(ctx, http.MethodPost, pathPowerOff, map[string]string{"instance_uuid": id}, nil)
	if kindOf(err) == kindAlready {
		return nil
	}
	return notVerified(err, id)
}

// Terminate releases a Pro instance, destroying its data: POST
// /api/v1/dev/instance/pro/release {"instance_uuid": ID}. AutoDL releases
// only an instance that is shut down (AutoDL-cli README: "Releasing
// requires a completed shutdown"), so a running one is powered off first
// and its status read every ShutdownPoll until "shutdown", for at most
// ShutdownWait (and ctx); then release is sent once. Already releasing or
// released is success. If the shutdown does not come in time, nothing is
// released and the error wraps ErrUnavailable (try again later).
func (c *Client) Terminate(ctx context.Context, id string) error {
	st, err := c.status(ctx, id)
	if err != nil {
		return notVerified(err, id)
	}
	switch st {
	case stReleasing, stReleased:
		return nil
	case stShutdown, "stopped":
	default:
		if st != stShuttingDown {
			if err := c.powerOff(ctx, id); err != nil {
				return err
			}
		}
		if st, err = c.waitShutdown(ctx, id); err != nil {
			return err
		}
		if st == stReleasing || st == stReleased {
			return nil
		}
	}
	err = c.call(ctx, http.MethodPost, pathRelease, map[string]string{"instance_uuid": id}, nil)
	return notVerified(err, id)
}

// waitShutdown reads the status until shutdown (or released), for at most
// ShutdownWait.
func (c *Client) waitShutdown(ctx context.Context, id string) (string, error) {
	deadline := time.Now().Add(c.cfg.ShutdownWait)
	t := time.NewTimer(c.cfg.ShutdownPoll)
	defer t.Stop()
	last := ""
	for {
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-t.C:
		}
		st, err := c.status(ctx, id)
		if err != nil {
			return "", notVerified(err, id)
		}
		last = st
		switch st {
		case stShutdown, "stopped", stReleasing, stReleased:
			return st, nil
		}
		if !time.Now().Before(deadline) {
			return "", fmt.Errorf("%w: autodl instance %s is still %q %s after power_off; release not sent",
				connector.ErrUnavailable, clip.Bytes(id, 40, "…"), clip.Bytes(last, 40, "…"), c.cfg.ShutdownWait)
		}
		t.Reset(c.cfg.ShutdownPoll)
	}
}
