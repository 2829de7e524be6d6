package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/agent/wire"
)

// Reporter sends heartbeats to the server at Interval. Heartbeats that could
// not be sent wait in a bounded queue, oldest dropped first (and counted),
// and are retried with exponential backoff and jitter. The reporter runs on
// its own goroutine; it never blocks sampling.
type Reporter struct {
	Server string // base URL, e.g. "http://host:8477"
	Token  string // used when Current is nil
	// Current, when set, holds the token to send (read at every
	// request): an enrolment agent switches it.
	Current  *Token
	Client   *http.Client // must have a Timeout; default 15 s
	Interval time.Duration
	Queue    int // heartbeats kept while the server is unreachable; default 20
	Log      *slog.Logger

	// Cut returns the heartbeat for the window that just ended.
	Cut func() wire.HeartbeatRequest
	// OnResponse receives every decoded response; it must not block.
	OnResponse func(wire.HeartbeatResponse)
	// OnRefused is told of a 401, 403 or 409 answer to a heartbeat. It
	// returns true when it switched the current token (a bound token
	// refused: back to the enrolment token); the heartbeat is then sent
	// again at once with the new token. Nil, or false: the refusal is
	// handled as before (backoff on 401/403, dropped on 409).
	OnRefused func(error) bool
	// Final, when set, completes the last heartbeat, cut when ctx ends
	// (the shutdown report).
	Final func(*wire.HeartbeatRequest)

	queue   []wire.HeartbeatRequest
	dropped uint64
	backoff time.Duration
	// authWait is the wait before the next try after the server refused
	// the token (401, 403); zero while it accepts it.
	authWait time.Duration
	// quiet is set while the hub's RetryAfter runs: nothing is cut.
	quiet bool
}

// Backoff limits for heartbeat retries.
const (
	backoffMin = time.Second
	backoffMax = 5 * time.Minute
	// authBackoffMax is the longest wait between heartbeats while the
	// server refuses the token: an agent left on a released rental
	// keeps asking once an hour, in case the token is valid again (a
	// restored database), and costs nothing else.
	authBackoffMax = time.Hour
)

// Errors from Send.
var (
	// ErrPermanent marks a response that retrying will not change (4xx
	// other than 408 and 429): the heartbeat is dropped.
	ErrPermanent = errors.New("agent: server refused the request")
	// ErrUnauthorized marks a 401 or 403: the server does not know the
	// token, or no longer accepts it. It is also ErrPermanent.
	ErrUnauthorized = errors.New("agent: server refused the token")
	// ErrConflict marks a 409: the token belongs to another instance
	// (this host is a copy of the one it was handed to). It is also
	// ErrPermanent.
	ErrConflict = errors.New("agent: server says the token belongs to another instance")
	// ErrTooMany marks a 429. A heartbeat is sent again after it; a
	// bench is not (the rental holds as many as the hub stores).
	ErrTooMany = errors.New("agent: server says too many requests")
)

// TooManyError is a 429 with the hub's Retry-After (0 when it gave none
// or one that is not a number of seconds). It is also ErrTooMany.
type TooManyError struct {
	RetryAfter time.Duration
	err        error
}

func (e *TooManyError) Error() string { return e.err.Error() }
func (e *TooManyError) Unwrap() error { return e.err }

// retryAfterHeader reads a Retry-After of delay-seconds, bounded to a day; an
// HTTP date or garbage is 0.
func retryAfterHeader(v string) time.Duration {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n <= 0 {
		return 0
	}
	return time.Duration(min(n, 86400)) * time.Second
}

// token returns the token to send now.
func (r *Reporter) token() string {
	if r.Current != nil {
		return r.Current.Get()
	}
	return r.Token
}

func (r *Reporter) log() *slog.Logger {
	if r.Log != nil {
		return r.Log
	}
	return slog.New(slog.DiscardHandler)
}

func (r *Reporter) client() *http.Client {
	if r.Client != nil {
		return r.Client
	}
	return &http.Client{Timeout: 15 * time.Second}
}

// Dropped returns how many heartbeats were dropped unsent.
func (r *Reporter) Dropped() uint64 { return r.dropped }

// Run cuts a heartbeat every Interval and sends the queue until ctx ends.
// On the way out it cuts and tries to send one last heartbeat (completed
// by Final). While the hub's last answer asked for quiet (an enrolment
// answer's RetryAfter) nothing is cut or sent; when the wait ends one
// fresh heartbeat goes.
func (r *Reporter) Run(ctx context.Context) error {
	tick := time.NewTicker(r.interval())
	defer tick.Stop()
	var retry <-chan time.Time
	var retryTimer *time.Timer
	for {
		select {
		case <-ctx.Done():
			if retryTimer != nil {
				retryTimer.Stop()
			}
			// A final heartbeat tells the server the agent stopped
			// on purpose; bounded so shutdown is quick.
			hb := r.Cut()
			if r.Final != nil {
				r.Final(&hb)
			}
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
			r.enqueue(hb)
			r.flush(fctx)
			cancel()
			return ctx.Err()
		case <-tick.C:
			if r.quiet {
				continue // the hub asked for quiet until the retry timer
			}
			r.enqueue(r.Cut())
			if retry != nil {
				continue // a retry is scheduled; do not hammer the server
			}
		case <-retry:
			retry = nil
			if r.quiet {
				r.quiet = false
				r.enqueue(r.Cut())
			}
		}
		if d, failed := r.flush(ctx); failed {
			retryTimer = time.NewTimer(d)
			retry = retryTimer.C
		}
	}
}

// retryAfter returns the wait an enrolment answer asks for, at most
// authBackoffMax (a hub cannot silence an agent for days); 0 for none.
func retryAfter(resp wire.HeartbeatResponse) time.Duration {
	if resp.Enrolment == nil || resp.Enrolment.RetryAfter <= 0 {
		return 0
	}
	return min(time.Duration(resp.Enrolment.RetryAfter)*time.Second, authBackoffMax)
}

func (r *Reporter) interval() time.Duration {
	if r.Interval <= 0 {
		return 30 * time.Second
	}
	return r.Interval
}

func (r *Reporter) enqueue(hb wire.HeartbeatRequest) {
	max := r.Queue
	if max <= 0 {
		max = 20
	}
	if len(r.queue) >= max {
		r.queue = r.queue[1:]
		r.dropped++
	}
	r.queue = append(r.queue, hb)
}

// flush sends queued heartbeats oldest first. On a retryable failure it
// returns the delay before the next try.
func (r *Reporter) flush(ctx context.Context) (time.Duration, bool) {
	for len(r.queue) > 0 {
		hb := r.queue[0]
		hb.Dropped = r.dropped
		hb.SentAt = time.Now().Round(0)
		resp, err := r.Send(ctx, hb)
		if (errors.Is(err, ErrUnauthorized) || errors.Is(err, ErrConflict)) && r.OnRefused != nil && r.OnRefused(err) {
			continue // the token was switched: the same heartbeat goes again with the new one
		}
		if errors.Is(err, ErrUnauthorized) {
			// Every heartbeat would get the same answer: say once what
			// to do, drop this one and wait long, doubling to an hour.
			r.queue = r.queue[1:]
			r.dropped++
			if r.authWait == 0 {
				r.authWait = 2 * r.interval()
				if wire.IsEnrolToken(r.token()) {
					r.log().Error("the server does not accept this agent's enrolment token: it was revoked, or is unknown there; send /agent in the chat for a new install line",
						"err", err, "retry_in", r.authWait)
				} else {
					r.log().Error("the server does not know this agent's token: it was revoked, or the rental was released; send /agent NAME in the chat for a new install line",
						"err", err, "retry_in", r.authWait)
				}
			} else {
				r.authWait = min(2*r.authWait, authBackoffMax)
				r.log().Debug("token still refused", "retry_in", r.authWait)
			}
			return r.authWait, true
		}
		if r.authWait > 0 {
			r.log().Info("the server accepts this agent's token again")
			r.authWait = 0
		}
		if errors.Is(err, ErrPermanent) {
			r.log().Error("heartbeat refused; dropping it", "err", err, "seq", hb.Seq)
			r.queue = r.queue[1:]
			r.dropped++
			continue
		}
		if err != nil {
			r.backoff = nextBackoff(r.backoff)
			d := jitter(r.backoff)
			r.log().Warn("heartbeat failed; will retry", "err", err, "retry_in", d.Round(time.Millisecond), "queued", len(r.queue), "dropped", r.dropped)
			return d, true
		}
		if r.backoff > 0 {
			r.log().Info("server reachable again", "queued", len(r.queue)-1)
		}
		r.backoff = 0
		r.queue = r.queue[1:]
		if r.OnResponse != nil {
			r.OnResponse(resp)
		}
		if d := retryAfter(resp); d > 0 {
			// The heartbeats still queued say nothing the hub wants
			// now: after the wait one fresh one goes.
			r.queue = r.queue[:0]
			r.quiet = true
			return d, true
		}
	}
	return 0, false
}

func nextBackoff(d time.Duration) time.Duration {
	if d < backoffMin {
		return backoffMin
	}
	return min(2*d, backoffMax)
}

// jitter returns a duration in [d/2, d].
func jitter(d time.Duration) time.Duration {
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

// Send posts one heartbeat and decodes the answer.
func (r *Reporter) Send(ctx context.Context, hb wire.HeartbeatRequest) (wire.HeartbeatResponse, error) {
	var resp wire.HeartbeatResponse
	err := r.post(ctx, wire.PathHeartbeat, hb, &resp)
	return resp, err
}

// PostBench posts a bench report once, with tok rather than the current
// token: the bench runner checked which rental tok is for, and a token
// switched in between must not carry the report to another rental.
func (r *Reporter) PostBench(ctx context.Context, tok string, rep wire.BenchReport) (wire.BenchResponse, error) {
	var resp wire.BenchResponse
	err := r.postAs(ctx, wire.PathBench, tok, rep, &resp)
	return resp, err
}

// PostResult posts an order result, trying up to three times.
func (r *Reporter) PostResult(ctx context.Context, res wire.OrderResult) error {
	var err error
	for attempt := range 3 {
		if attempt > 0 {
			t := time.NewTimer(jitter(time.Duration(attempt) * 2 * time.Second))
			select {
			case <-ctx.Done():
				t.Stop()
				return errors.Join(err, ctx.Err())
			case <-t.C:
			}
		}
		err = r.post(ctx, wire.PathOrderResult(res.OrderID), res, nil)
		if err == nil || errors.Is(err, ErrPermanent) {
			return err
		}
	}
	return err
}

func (r *Reporter) post(ctx context.Context, path string, body, out any) error {
	return r.postAs(ctx, path, r.token(), body, out)
}

// postAs posts body to path with tok and decodes the answer into out.
func (r *Reporter) postAs(ctx context.Context, path, tok string, body, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("agent: encode: %w", err)
	}
	if len(b) > wire.MaxBodyBytes {
		return fmt.Errorf("%w: body of %d bytes is over the %d limit", ErrPermanent, len(b), wire.MaxBodyBytes)
	}
	url := strings.TrimRight(r.Server, "/") + path
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("agent: request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := r.client().Do(req)
	if err != nil {
		return fmt.Errorf("agent: post %s: %w", path, redact(err, tok))
	}
	defer res.Body.Close()
	body2, err := io.ReadAll(io.LimitReader(res.Body, wire.MaxBodyBytes+1))
	if err != nil {
		return fmt.Errorf("agent: read response: %w", err)
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		msg := strings.TrimSpace(string(body2[:min(len(body2), 200)]))
		err := fmt.Errorf("agent: %s: status %d: %q", path, res.StatusCode, msg)
		if res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden {
			return fmt.Errorf("%w: %w: %w", ErrUnauthorized, ErrPermanent, err)
		}
		if res.StatusCode == http.StatusConflict {
			return fmt.Errorf("%w: %w: %w", ErrConflict, ErrPermanent, err)
		}
		if res.StatusCode == http.StatusTooManyRequests {
			return &TooManyError{RetryAfter: retryAfterHeader(res.Header.Get("Retry-After")), err: fmt.Errorf("%w: %w", ErrTooMany, err)}
		}
		if res.StatusCode >= 400 && res.StatusCode < 500 && res.StatusCode != 408 {
			return fmt.Errorf("%w: %w", ErrPermanent, err)
		}
		return err
	}
	if len(body2) > wire.MaxBodyBytes {
		return fmt.Errorf("agent: %s: response over %d bytes", path, wire.MaxBodyBytes)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(body2, out); err != nil {
		return fmt.Errorf("agent: %s: bad response: %w", path, err)
	}
	return nil
}

// redact removes the token from an error's text, should a URL ever carry it.
func redact(err error, token string) error {
	if token == "" || !strings.Contains(err.Error(), token) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), token, "REDACTED"))
}
