package autodl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gpuledger/gpuledger/connector"
	"github.com/gpuledger/gpuledger/internal/clip"
)

// successCode is the envelope's code on success: "code | String | 响应代码,
// 成功时为Success" (autodl.com/docs/common_api, the same table on
// autodl.com/docs/esd_api_doc).
const successCode = "Success"

// envelope is what every AutoDL developer-API answer is wrapped in, with
// HTTP 200 whether the call worked or not: {code, msg, data, request_id}
// (autodl.com/docs/common_api documents code, msg and data; request_id is
// in the answers recorded by Minato-Aqukin/AutoDL-cli
// tests/fixtures/responses.ts).
type envelope struct {
	Code      *string         `json:"code"`
	Msg       any             `json:"msg"`
	Data      json.RawMessage `json:"data"`
	RequestID any             `json:"request_id"`
}

// kind is what a non-Success envelope means to this connector. AutoDL
// documents no list of codes; the codes and messages below are those seen
// in public clients (AutoDL-cli src/core/client.ts mapEnvelopeError and its
// tests, recorded live: "InternalError" with a no-stock message,
// "RequestParameterIsWrong", "Unauthorized"; "当前实例正在关机中,无需重复操作"
// for a second power_off), so both the code and the message are read.
type kind int

const (
	kindOther       kind = iota
	kindAuth             // the token is rejected
	kindNotVerified      // the account lacks the real-name verification the Pro API needs
	kindNotFound         // no such instance
	kindRateLimited      // "too frequent"
	kindAlready          // the operation is already under way ("无需重复操作")
)

// classify reads an envelope's code and message. The order matters: a
// message about real-name verification (实名) is not a bad token, and
// must be tested before the auth words.
func classify(code, msg string) kind {
	text := strings.ToLower(code + " " + msg)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(text, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has("实名", "realname", "real_name", "real-name"):
		return kindNotVerified
	case has("unauthor", "forbidden", "token", "auth", "鉴权", "登录"):
		return kindAuth
	case has("频繁", "too many", "toomany", "ratelimit", "rate limit", "frequent"):
		return kindRateLimited
	case has("无需重复", "正在关机"):
		return kindAlready
	case has("不存在", "not found", "notfound", "no such"):
		return kindNotFound
	}
	return kindOther
}

// apiError is a non-Success envelope, kept whole so that callers can test
// its kind; it wraps the connector error it stands for.
type apiError struct {
	kind      kind
	code, msg string
	requestID string
	op        string
	wrapped   error
}

func (e *apiError) Error() string {
	s := fmt.Sprintf("%s: autodl %s answered code %q", e.wrapped, e.op, e.code)
	if e.msg != "" {
		s += ": " + e.msg
	}
	if e.requestID != "" {
		s += " (request_id " + e.requestID + ")"
	}
	return s
}

func (e *apiError) Unwrap() error { return e.wrapped }

// call sends one request and unwraps its envelope into out (nil: data is
// ignored). An HTTP 404 is ErrBadAnswer, not ErrNotFound. A non-Success code becomes an *apiError that wraps
// ErrUnauthorized, ErrNotFound, ErrNotSupported (real-name verification
// missing) or ErrBadAnswer, or a *connector.RateLimitedError.
func (c *Client) call(ctx context.Context, method, path string, body, out any) error {
	var env envelope
	op, _, _ := strings.Cut(strings.TrimPrefix(path, "/api/v1/dev/"), "?")
	if err := c.http.Do(ctx, method, path, body, &env); err != nil {
		if errors.Is(err, connector.ErrNotFound) {
			// AutoDL says "no such instance" in a 200 envelope (不存在);
			// an HTTP 404 means the path is not its API (a wrong base
			// URL), which must not read as an instance that is gone.
			return fmt.Errorf("%w: autodl %s: HTTP 404, not AutoDL's developer API (check the base URL): %v", connector.ErrBadAnswer, op, err)
		}
		return err
	}
	if env.Code == nil {
		return fmt.Errorf("%w: autodl %s: the answer has no code", connector.ErrBadAnswer, op)
	}
	if *env.Code != successCode {
		msg, _ := env.Msg.(string)
		rid, _ := env.RequestID.(string)
		k := classify(*env.Code, msg)
		if k == kindRateLimited {
			return &connector.RateLimitedError{Platform: Platform, RetryAfter: connector.DefaultRetryAfter}
		}
		e := &apiError{
			kind:      k,
			code:      c.redact(clip.Bytes(*env.Code, 60, "…")),
			msg:       c.redact(clip.Bytes(strings.TrimSpace(msg), 200, "…")),
			requestID: clip.Bytes(rid, 60, "…"),
			op:        op,
		}
		switch k {
		case kindAuth:
			e.wrapped = connector.ErrUnauthorized
		case kindNotVerified:
			e.wrapped = connector.ErrNotSupported
		case kindNotFound:
			e.wrapped = connector.ErrNotFound
		default:
			e.wrapped = connector.ErrBadAnswer
		}
		return e
	}
	if out == nil {
		return nil
	}
	if len(env.Data) == 0 || string(env.Data) == "null" {
		return fmt.Errorf("%w: autodl %s: Success without data", connector.ErrBadAnswer, op)
	}
	dec := json.NewDecoder(bytes.NewReader(env.Data))
	dec.UseNumber()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("%w: autodl %s: %s", connector.ErrBadAnswer, op, clip.Bytes(err.Error(), 200, "…"))
	}
	return nil
}

func (c *Client) redact(s string) string {
	if c.cfg.Token == "" {
		return s
	}
	return strings.ReplaceAll(s, c.cfg.Token, "REDACTED")
}

// kindOf returns the kind of an *apiError in err's chain, kindOther if none.
func kindOf(err error) kind {
	var e *apiError
	if errors.As(err, &e) {
		return e.kind
	}
	return kindOther
}
