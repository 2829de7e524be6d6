package tgfake

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// The control API lets a test in another process drive the fake:
//
//	POST /control/send     {"user_id":1,"chat_id":1,"text":"/status"}        → {"update_id":N}
//	POST /control/press    {"user_id":1,"chat_id":1,"message_id":5,"data":"x"} → {"update_id":N,"callback_id":"cbN"}
//	POST /control/sticker  {"user_id":1,"chat_id":1}                         → {"update_id":N}
//	POST /control/fail     {"method":"sendMessage","n":1,"status":429,"retry_after":2}
//	POST /control/down     {"down":true}
//	POST /control/title    {"chat_id":-5,"text":"GPU crew"}                  (SetChatTitle)
//	POST /control/migrate  {"user_id":1,"chat_id":-5,"to":-1005}             → {"update_id":N} (SendMigrated; N: the first of two)
//	POST /control/remove_bot {"user_id":1,"chat_id":-5,"kicked":true}        → {"update_id":N} (SendBotRemoved)
//	POST /control/add_bot  {"user_id":1,"chat_id":-5}                        → {"update_id":N} (SendBotAdded)
//	GET  /control/messages?chat=ID[&min=N&timeout=10s]  → [Message...] (waits for at least min messages)
//	GET  /control/commands?lang=zh                       → [Command...]
//	GET  /control/menu                                   → MenuButton (404 until set)
//	GET  /control/answers                                → [CallbackAnswer...]
//	GET  /control/state                                  → State
//
// Bodies are JSON; errors are {"error":"..."} with a 4xx status. File bytes
// in messages are base64, as encoding/json writes []byte.

// ControlRequest is the body of the control API's POST calls; each call
// reads the fields it needs.
type ControlRequest struct {
	UserID     int64  `json:"user_id,omitempty"`
	ChatID     int64  `json:"chat_id,omitempty"`
	Text       string `json:"text,omitempty"`
	MessageID  int    `json:"message_id,omitempty"`
	Data       string `json:"data,omitempty"`
	Method     string `json:"method,omitempty"`
	N          int    `json:"n,omitempty"`
	Status     int    `json:"status,omitempty"`
	RetryAfter int    `json:"retry_after,omitempty"`
	Down       bool   `json:"down,omitempty"`
	To         int64  `json:"to,omitempty"`     // migrate: the supergroup's new chat ID
	Kicked     bool   `json:"kicked,omitempty"` // remove_bot: kicked rather than removed
}

// ControlResponse is the answer to /control/send, /press and /sticker.
type ControlResponse struct {
	UpdateID   int    `json:"update_id"`
	CallbackID string `json:"callback_id,omitempty"`
}

// State is the answer to GET /control/state.
type State struct {
	Confirmed int            `json:"confirmed"`
	Pending   int            `json:"pending"`
	Calls     map[string]int `json:"calls"`
}

func controlError(w http.ResponseWriter, status int, format string, args ...any) {
	writeJSON(w, status, map[string]string{"error": fmt.Sprintf(format, args...)})
}

func (s *Server) serveControl(w http.ResponseWriter, r *http.Request) {
	action := r.URL.Path[len("/control/"):]
	if r.Method == http.MethodPost {
		var req ControlRequest
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
			controlError(w, http.StatusBadRequest, "bad JSON body: %v", err)
			return
		}
		if req.ChatID == 0 {
			req.ChatID = req.UserID
		}
		switch action {
		case "send":
			if req.UserID == 0 || req.Text == "" {
				controlError(w, http.StatusBadRequest, `send needs user_id and text, e.g. {"user_id":1,"text":"/status"}`)
				return
			}
			writeJSON(w, http.StatusOK, ControlResponse{UpdateID: s.SendText(req.UserID, req.ChatID, req.Text)})
		case "press":
			if req.UserID == 0 || req.MessageID == 0 || req.Data == "" {
				controlError(w, http.StatusBadRequest, `press needs user_id, message_id and data, e.g. {"user_id":1,"message_id":3,"data":"confirm"}`)
				return
			}
			id := s.PressButton(req.UserID, req.ChatID, req.MessageID, req.Data)
			writeJSON(w, http.StatusOK, ControlResponse{UpdateID: id, CallbackID: "cb" + strconv.Itoa(id)})
		case "sticker":
			if req.UserID == 0 {
				controlError(w, http.StatusBadRequest, `sticker needs user_id, e.g. {"user_id":1}`)
				return
			}
			writeJSON(w, http.StatusOK, ControlResponse{UpdateID: s.SendSticker(req.UserID, req.ChatID)})
		case "fail":
			if req.N <= 0 || req.Status < 400 {
				controlError(w, http.StatusBadRequest, `fail needs n > 0 and an error status, e.g. {"n":1,"status":429,"retry_after":2}`)
				return
			}
			s.FailMethod(req.Method, req.N, req.Status, req.RetryAfter)
			writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
		case "down":
			s.SetDown(req.Down)
			writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
		case "title":
			if req.ChatID >= 0 {
				controlError(w, http.StatusBadRequest, `title needs a group's chat_id (negative), e.g. {"chat_id":-5,"text":"GPU crew"}`)
				return
			}
			s.SetChatTitle(req.ChatID, req.Text)
			writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
		case "migrate":
			if req.UserID == 0 || req.ChatID >= 0 || req.To > -1_000_000_000_000 || req.To == req.ChatID {
				controlError(w, http.StatusBadRequest, `migrate needs user_id, a group's chat_id and the supergroup's new ID (below -10^12) in to, e.g. {"user_id":1,"chat_id":-5,"to":-1000000000005}`)
				return
			}
			id, _ := s.SendMigrated(req.UserID, req.ChatID, req.To)
			writeJSON(w, http.StatusOK, ControlResponse{UpdateID: id})
		case "remove_bot", "add_bot":
			if req.UserID == 0 || req.ChatID >= 0 {
				controlError(w, http.StatusBadRequest, `%s needs user_id and a group's chat_id (negative), e.g. {"user_id":1,"chat_id":-5}`, action)
				return
			}
			var id int
			if action == "add_bot" {
				id = s.SendBotAdded(req.UserID, req.ChatID)
			} else {
				id = s.SendBotRemoved(req.UserID, req.ChatID, req.Kicked)
			}
			writeJSON(w, http.StatusOK, ControlResponse{UpdateID: id})
		default:
			controlError(w, http.StatusNotFound, "unknown control action %q", action)
		}
		return
	}
	if r.Method != http.MethodGet {
		controlError(w, http.StatusMethodNotAllowed, "use GET or POST")
		return
	}
	q := r.URL.Query()
	switch action {
	case "messages":
		chat, err := strconv.ParseInt(q.Get("chat"), 10, 64)
		if err != nil {
			controlError(w, http.StatusBadRequest, "messages needs chat=ID, e.g. /control/messages?chat=1")
			return
		}
		minN, _ := strconv.Atoi(q.Get("min"))
		timeout := 10 * time.Second
		if t := q.Get("timeout"); t != "" {
			if timeout, err = time.ParseDuration(t); err != nil {
				controlError(w, http.StatusBadRequest, "bad timeout %q, e.g. timeout=5s", t)
				return
			}
		}
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		msgs, err := s.WaitMessages(ctx, chat, minN)
		if err != nil {
			controlError(w, http.StatusRequestTimeout, "%v", err)
			return
		}
		writeJSON(w, http.StatusOK, msgs)
	case "commands":
		writeJSON(w, http.StatusOK, s.Commands(q.Get("lang")))
	case "menu":
		mb, ok := s.Menu()
		if !ok {
			controlError(w, http.StatusNotFound, "the bot has not set a menu button")
			return
		}
		writeJSON(w, http.StatusOK, mb)
	case "answers":
		writeJSON(w, http.StatusOK, s.Answers())
	case "state":
		s.mu.Lock()
		st := State{Confirmed: s.confirmed, Pending: len(s.updates), Calls: maps.Clone(s.calls)}
		s.mu.Unlock()
		writeJSON(w, http.StatusOK, st)
	default:
		controlError(w, http.StatusNotFound, "unknown control action %q", action)
	}
}

// Client drives a fake server in another process through its control API.
type Client struct {
	base string
	hc   *http.Client
}

// NewClient returns a Client for the fake at baseURL
// ("http://127.0.0.1:8081"). A nil hc means a client with a 30 s timeout.
func NewClient(baseURL string, hc *http.Client) *Client {
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	return &Client{base: baseURL, hc: hc}
}

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("tgfake: encode: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return fmt.Errorf("tgfake: %w", err)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("tgfake: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return fmt.Errorf("tgfake: %s %s: %s: %s", method, path, resp.Status, e.Error)
	}
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("tgfake: decode %s: %w", path, err)
	}
	return nil
}

// SendText queues a text message from userID in chatID; see Server.SendText.
func (c *Client) SendText(ctx context.Context, userID, chatID int64, text string) (int, error) {
	var r ControlResponse
	err := c.do(ctx, http.MethodPost, "/control/send", ControlRequest{UserID: userID, ChatID: chatID, Text: text}, &r)
	return r.UpdateID, err
}

// PressButton queues a button press; see Server.PressButton.
func (c *Client) PressButton(ctx context.Context, userID, chatID int64, messageID int, data string) (int, error) {
	var r ControlResponse
	err := c.do(ctx, http.MethodPost, "/control/press", ControlRequest{UserID: userID, ChatID: chatID, MessageID: messageID, Data: data}, &r)
	return r.UpdateID, err
}

// Messages returns what the bot sent to chatID.
func (c *Client) Messages(ctx context.Context, chatID int64) ([]Message, error) {
	return c.WaitMessages(ctx, chatID, 0)
}

// WaitMessages waits until chatID has at least n messages from the bot
// (or ctx's deadline, at most 10 minutes) and returns them.
func (c *Client) WaitMessages(ctx context.Context, chatID int64, n int) ([]Message, error) {
	timeout := 30 * time.Second
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	}
	q := url.Values{"chat": {strconv.FormatInt(chatID, 10)}, "min": {strconv.Itoa(n)}, "timeout": {timeout.String()}}
	var msgs []Message
	err := c.do(ctx, http.MethodGet, "/control/messages?"+q.Encode(), nil, &msgs)
	return msgs, err
}

// Commands returns the bot's command menu for a language code.
func (c *Client) Commands(ctx context.Context, lang string) ([]Command, error) {
	var cmds []Command
	err := c.do(ctx, http.MethodGet, "/control/commands?lang="+url.QueryEscape(lang), nil, &cmds)
	return cmds, err
}

// Menu returns the bot's default menu button (an error until the bot set
// one).
func (c *Client) Menu(ctx context.Context) (MenuButton, error) {
	var mb MenuButton
	err := c.do(ctx, http.MethodGet, "/control/menu", nil, &mb)
	return mb, err
}

// FailNext makes the next n calls of method ("" for any) fail; see
// Server.FailMethod.
func (c *Client) FailNext(ctx context.Context, method string, n, status, retryAfter int) error {
	return c.do(ctx, http.MethodPost, "/control/fail", ControlRequest{Method: method, N: n, Status: status, RetryAfter: retryAfter}, nil)
}

// SetDown starts or ends a simulated outage; see Server.SetDown.
func (c *Client) SetDown(ctx context.Context, down bool) error {
	return c.do(ctx, http.MethodPost, "/control/down", ControlRequest{Down: down}, nil)
}

// SetChatTitle sets a group's title; see Server.SetChatTitle.
func (c *Client) SetChatTitle(ctx context.Context, chatID int64, title string) error {
	return c.do(ctx, http.MethodPost, "/control/title", ControlRequest{ChatID: chatID, Text: title}, nil)
}

// SendMigrated upgrades a group to a supergroup; see Server.SendMigrated.
// It returns the first of the two updates' IDs.
func (c *Client) SendMigrated(ctx context.Context, userID, oldChat, newChat int64) (int, error) {
	var r ControlResponse
	err := c.do(ctx, http.MethodPost, "/control/migrate", ControlRequest{UserID: userID, ChatID: oldChat, To: newChat}, &r)
	return r.UpdateID, err
}

// SendBotRemoved removes the bot from a group; see Server.SendBotRemoved.
func (c *Client) SendBotRemoved(ctx context.Context, userID, chatID int64, kicked bool) (int, error) {
	var r ControlResponse
	err := c.do(ctx, http.MethodPost, "/control/remove_bot", ControlRequest{UserID: userID, ChatID: chatID, Kicked: kicked}, &r)
	return r.UpdateID, err
}

// SendBotAdded adds the bot to a group again; see Server.SendBotAdded.
func (c *Client) SendBotAdded(ctx context.Context, userID, chatID int64) (int, error) {
	var r ControlResponse
	err := c.do(ctx, http.MethodPost, "/control/add_bot", ControlRequest{UserID: userID, ChatID: chatID}, &r)
	return r.UpdateID, err
}

// State returns the fake's confirmed offset, pending update count and call
// counts.
func (c *Client) State(ctx context.Context) (State, error) {
	var st State
	err := c.do(ctx, http.MethodGet, "/control/state", nil, &st)
	return st, err
}
