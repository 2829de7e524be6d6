package tgfake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// Telegram's limits, in UTF-16 code units of the visible text.
const (
	MaxTextLen    = 4096
	MaxCaptionLen = 1024
	MaxButtonData = 64 // bytes
)

// apiError is a Bot API error answer.
type apiError struct {
	status      int
	description string
	retryAfter  int
	migrateTo   int64 // parameters.migrate_to_chat_id
}

func badRequest(format string, args ...any) *apiError {
	return &apiError{status: 400, description: "Bad Request: " + fmt.Sprintf(format, args...)}
}

func descriptionFor(status, retryAfter int) string {
	switch status {
	case 429:
		return "Too Many Requests: retry after " + strconv.Itoa(retryAfter)
	case 400:
		return "Bad Request"
	case 401:
		return "Unauthorized"
	case 404:
		return "Not Found"
	case 409:
		return "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
	}
	return http.StatusText(status)
}

func writeAPIError(w http.ResponseWriter, e *apiError) {
	resp := map[string]any{"ok": false, "error_code": e.status, "description": e.description}
	if e.retryAfter > 0 {
		resp["parameters"] = map[string]any{"retry_after": e.retryAfter}
	}
	if e.migrateTo != 0 {
		resp["parameters"] = map[string]any{"migrate_to_chat_id": e.migrateTo}
	}
	writeJSON(w, e.status, resp)
}

func writeResult(w http.ResponseWriter, result any) {
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "result": result})
}

// dropConnection closes the client's connection without an answer, as a
// network failure looks to a client.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// serveAPI answers Bot API calls at /bot<token>/<method>.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	down := s.down
	s.mu.Unlock()
	if down {
		dropConnection(w)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 {
		writeAPIError(w, &apiError{status: 404, description: "Not Found"})
		return
	}
	if token != s.token {
		writeAPIError(w, &apiError{status: 401, description: "Unauthorized"})
		return
	}
	if strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/") {
		if err := r.ParseMultipartForm(64 << 20); err != nil {
			writeAPIError(w, badRequest("bad multipart body: %v", err))
			return
		}
	} else if err := r.ParseForm(); err != nil {
		writeAPIError(w, badRequest("bad form body: %v", err))
		return
	}

	s.mu.Lock()
	s.calls[method]++
	for _, field := range []string{"text", "caption"} {
		// fmt's mark of a template and arguments that disagree.
		if v := r.FormValue(field); strings.Contains(v, "%!") {
			s.malformed = append(s.malformed, method+": "+v)
		}
	}
	if e := s.takeFailureLocked(method); e != nil {
		s.notifyLocked()
		s.mu.Unlock()
		writeAPIError(w, e)
		return
	}
	if e := s.closedChatLocked(method, r); e != nil {
		s.notifyLocked()
		s.mu.Unlock()
		writeAPIError(w, e)
		return
	}
	s.notifyLocked()
	s.mu.Unlock()

	var result any
	var apiErr *apiError
	switch method {
	case "getMe":
		result = tgbotapi.User{ID: BotID, IsBot: true, FirstName: "Fake Bot", UserName: BotUsername}
	case "deleteWebhook":
		result = true
	case "getUpdates":
		s.getUpdates(w, r)
		return
	case "sendMessage":
		result, apiErr = s.sendMessage(r)
	case "editMessageText":
		result, apiErr = s.editMessageText(r)
	case "answerCallbackQuery":
		result, apiErr = s.answerCallback(r)
	case "sendDocument":
		result, apiErr = s.sendFile(r, "document")
	case "sendPhoto":
		result, apiErr = s.sendFile(r, "photo")
	case "deleteMessage":
		result, apiErr = s.deleteMessage(r)
	case "setMyCommands":
		result, apiErr = s.setMyCommands(r)
	case "setChatMenuButton":
		result, apiErr = s.setChatMenuButton(r)
	case "getMyCommands":
		result = s.Commands(r.FormValue("language_code"))
	default:
		apiErr = &apiError{status: 404, description: "Not Found"}
	}
	if apiErr != nil {
		writeAPIError(w, apiErr)
		return
	}
	writeResult(w, result)
}

func (s *Server) takeFailureLocked(method string) *apiError {
	for i, f := range s.failures {
		if f.method == "" || f.method == method {
			s.failures = slices.Delete(s.failures, i, i+1)
			return &apiError{status: f.status, description: descriptionFor(f.status, f.retryAfter), retryAfter: f.retryAfter}
		}
	}
	return nil
}

// closedChatLocked answers 403 for a message to the private chat of a user
// who has not started the bot (ClosePrivate) or to a group the bot was
// removed from (RemoveBot), and 400 with parameters.migrate_to_chat_id
// for one to a group upgraded to a supergroup (MigrateChat). s.mu must be
// held.
func (s *Server) closedChatLocked(method string, r *http.Request) *apiError {
	switch method {
	case "sendMessage", "sendDocument", "sendPhoto", "editMessageText":
	default:
		return nil
	}
	id := formInt(r, "chat_id")
	if id > 0 && s.closed[id] {
		return &apiError{status: 403, description: "Forbidden: bot can't initiate conversation with a user"}
	}
	if to := s.migrated[id]; to != 0 {
		return &apiError{status: 400, description: "Bad Request: group chat was upgraded to a supergroup chat", migrateTo: to}
	}
	if d, ok := s.gone[id]; ok {
		return &apiError{status: 403, description: d}
	}
	return nil
}

func formInt(r *http.Request, key string) int64 {
	n, _ := strconv.ParseInt(r.FormValue(key), 10, 64)
	return n
}

// getUpdates confirms updates below offset, then answers at once with the
// pending updates from offset on, or holds the request until one arrives
// or the timeout passes. A newer getUpdates ends an older one with 409, as
// on Telegram.
func (s *Server) getUpdates(w http.ResponseWriter, r *http.Request) {
	offset := int(formInt(r, "offset"))
	limit := int(formInt(r, "limit"))
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	timeout := time.Duration(formInt(r, "timeout")) * time.Second
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()

	s.mu.Lock()
	s.pollGen++
	gen := s.pollGen
	if offset > s.confirmed {
		s.confirmed = offset
		s.updates = slices.DeleteFunc(s.updates, func(u tgbotapi.Update) bool { return u.UpdateID < offset })
	}
	s.notifyLocked()
	for {
		if s.down {
			s.mu.Unlock()
			dropConnection(w)
			return
		}
		if gen != s.pollGen {
			s.mu.Unlock()
			writeAPIError(w, &apiError{status: 409, description: descriptionFor(409, 0)})
			return
		}
		var batch []tgbotapi.Update
		for _, u := range s.updates {
			if u.UpdateID >= offset && len(batch) < limit {
				batch = append(batch, u)
			}
		}
		if len(batch) > 0 {
			s.mu.Unlock()
			writeResult(w, batch)
			return
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-deadline.C:
			writeResult(w, []tgbotapi.Update{})
			return
		case <-r.Context().Done():
			return
		}
		s.mu.Lock()
	}
}

// markupButton is an inline button as the Bot API takes it; the
// library's type predates web_app.
type markupButton struct {
	Text         string  `json:"text"`
	CallbackData *string `json:"callback_data"`
	WebApp       *struct {
		URL string `json:"url"`
	} `json:"web_app"`
}

// parseMarkup reads reply_markup's inline keyboard for chatID and checks
// its buttons as Telegram does: a text, callback data of 1 to 64 bytes or
// a web app, and a web app only in a private chat (a positive chat ID)
// and only at an https URL.
func parseMarkup(r *http.Request, chatID int64) ([][]Button, *apiError) {
	raw := r.FormValue("reply_markup")
	if raw == "" {
		return nil, nil
	}
	var mk struct {
		InlineKeyboard [][]markupButton `json:"inline_keyboard"`
	}
	if err := json.Unmarshal([]byte(raw), &mk); err != nil {
		return nil, badRequest("can't parse reply keyboard markup JSON object")
	}
	var rows [][]Button
	for _, row := range mk.InlineKeyboard {
		var out []Button
		for _, b := range row {
			if b.Text == "" {
				return nil, badRequest("BUTTON_TEXT_EMPTY")
			}
			if b.WebApp != nil {
				if b.CallbackData != nil {
					return nil, badRequest("can't parse inline keyboard button: exactly one of the optional fields must be used")
				}
				if chatID <= 0 {
					return nil, badRequest("BUTTON_TYPE_INVALID")
				}
				if u, err := url.Parse(b.WebApp.URL); err != nil || u.Scheme != "https" || u.Host == "" {
					return nil, badRequest("inline keyboard button Web App URL '%s' is invalid: Only HTTPS links are allowed", b.WebApp.URL)
				}
				out = append(out, Button{Text: b.Text, WebApp: b.WebApp.URL})
				continue
			}
			if b.CallbackData == nil {
				return nil, badRequest("text buttons are unallowed in the inline keyboard")
			}
			data := *b.CallbackData
			if len(data) > MaxButtonData || (b.CallbackData != nil && data == "") {
				return nil, badRequest("BUTTON_DATA_INVALID")
			}
			out = append(out, Button{Text: b.Text, Data: data})
		}
		rows = append(rows, out)
	}
	return rows, nil
}

// checkText validates a text or caption against the parse mode and limit.
func checkText(text, parseMode string, limit int, tooLong string) *apiError {
	visible := text
	if strings.EqualFold(parseMode, "HTML") {
		v, err := ParseHTML(text)
		if err != nil {
			return badRequest("can't parse entities: %v", err)
		}
		visible = v
	}
	if UTF16Len(visible) > limit {
		return badRequest("%s", tooLong)
	}
	return nil
}

func (s *Server) botMessage(m *Message) *tgbotapi.Message {
	out := &tgbotapi.Message{
		MessageID: m.ID,
		From:      &tgbotapi.User{ID: BotID, IsBot: true, FirstName: "Fake Bot", UserName: BotUsername},
		Chat:      s.chatLocked(m.ChatID),
		Date:      int(m.SentAt.Unix()),
	}
	if m.Document != nil || m.Photo != nil {
		out.Caption = m.Text
	} else {
		out.Text = m.Text
	}
	if !m.EditedAt.IsZero() {
		out.EditDate = int(m.EditedAt.Unix())
	}
	if m.Document != nil {
		out.Document = &tgbotapi.Document{FileID: fmt.Sprintf("doc%d_%d", m.ChatID, m.ID), FileUniqueID: "u", FileName: m.Document.Name, FileSize: len(m.Document.Data)}
	}
	if m.Photo != nil {
		out.Photo = []tgbotapi.PhotoSize{{FileID: fmt.Sprintf("photo%d_%d", m.ChatID, m.ID), FileUniqueID: "u", Width: 800, Height: 600, FileSize: len(m.Photo.Data)}}
	}
	if len(m.Buttons) > 0 {
		mk := tgbotapi.InlineKeyboardMarkup{}
		for _, row := range m.Buttons {
			var r []tgbotapi.InlineKeyboardButton
			for _, b := range row {
				r = append(r, tgbotapi.NewInlineKeyboardButtonData(b.Text, b.Data))
			}
			mk.InlineKeyboard = append(mk.InlineKeyboard, r)
		}
		out.ReplyMarkup = &mk
	}
	return out
}

// storeLocked records a message from the bot and assigns its ID.
func (s *Server) storeLocked(m *Message) {
	s.nextMsg[m.ChatID]++
	m.ID = s.nextMsg[m.ChatID]
	m.SentAt = time.Now()
	s.msgs[m.ChatID] = append(s.msgs[m.ChatID], m)
	s.notifyLocked()
}

func (s *Server) sendMessage(r *http.Request) (any, *apiError) {
	chatID := formInt(r, "chat_id")
	if chatID == 0 {
		return nil, badRequest("chat not found")
	}
	text, mode := r.FormValue("text"), r.FormValue("parse_mode")
	if strings.TrimSpace(text) == "" {
		return nil, badRequest("message text is empty")
	}
	if e := checkText(text, mode, MaxTextLen, "message is too long"); e != nil {
		return nil, e
	}
	buttons, e := parseMarkup(r, chatID)
	if e != nil {
		return nil, e
	}
	m := &Message{ChatID: chatID, Text: text, ParseMode: mode, Buttons: buttons, Silent: r.FormValue("disable_notification") == "true",
		NoPreview: r.FormValue("disable_web_page_preview") == "true"}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.storeLocked(m)
	return s.botMessage(m), nil
}

func (s *Server) editMessageText(r *http.Request) (any, *apiError) {
	chatID, msgID := formInt(r, "chat_id"), int(formInt(r, "message_id"))
	text, mode := r.FormValue("text"), r.FormValue("parse_mode")
	if strings.TrimSpace(text) == "" {
		return nil, badRequest("message text is empty")
	}
	if e := checkText(text, mode, MaxTextLen, "MESSAGE_TOO_LONG"); e != nil {
		return nil, e
	}
	buttons, e := parseMarkup(r, chatID)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.findLocked(chatID, msgID)
	if m == nil {
		return nil, badRequest("message to edit not found")
	}
	if m.Document != nil || m.Photo != nil {
		return nil, badRequest("there is no text in the message to edit")
	}
	if m.Text == text && slices.EqualFunc(m.Buttons, buttons, slices.Equal) {
		return nil, badRequest("message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message")
	}
	m.History = append(m.History, m.Text)
	m.Text, m.ParseMode, m.Buttons = text, mode, buttons
	m.EditedAt = time.Now()
	s.notifyLocked()
	return s.botMessage(m), nil
}

// deleteMessage deletes a message of the chat, the user's or the bot's,
// and records it (Deleted). As on Telegram, a message that does not exist
// or was deleted already answers 400 "message to delete not found".
func (s *Server) deleteMessage(r *http.Request) (any, *apiError) {
	chatID, msgID := formInt(r, "chat_id"), int(formInt(r, "message_id"))
	s.mu.Lock()
	defer s.mu.Unlock()
	if chatID == 0 || msgID <= 0 || msgID > s.nextMsg[chatID] || slices.Contains(s.deleted[chatID], msgID) {
		return nil, badRequest("message to delete not found")
	}
	s.deleted[chatID] = append(s.deleted[chatID], msgID)
	s.msgs[chatID] = slices.DeleteFunc(s.msgs[chatID], func(m *Message) bool { return m.ID == msgID })
	s.notifyLocked()
	return true, nil
}

func (s *Server) answerCallback(r *http.Request) (any, *apiError) {
	id := r.FormValue("callback_query_id")
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.callbacks[id] {
		return nil, badRequest("query is too old and response timeout expired or query ID is invalid")
	}
	delete(s.callbacks, id)
	s.answers = append(s.answers, CallbackAnswer{CallbackID: id, Text: r.FormValue("text")})
	s.notifyLocked()
	return true, nil
}

func (s *Server) sendFile(r *http.Request, field string) (any, *apiError) {
	chatID := formInt(r, "chat_id")
	if chatID == 0 {
		return nil, badRequest("chat not found")
	}
	caption, mode := r.FormValue("caption"), r.FormValue("parse_mode")
	if e := checkText(caption, mode, MaxCaptionLen, "message caption is too long"); e != nil {
		return nil, e
	}
	buttons, e := parseMarkup(r, chatID)
	if e != nil {
		return nil, e
	}
	var f File
	if r.MultipartForm != nil && len(r.MultipartForm.File[field]) > 0 {
		fh := r.MultipartForm.File[field][0]
		rd, err := fh.Open()
		if err != nil {
			return nil, badRequest("can't read %s: %v", field, err)
		}
		data, err := io.ReadAll(rd)
		rd.Close()
		if err != nil {
			return nil, badRequest("can't read %s: %v", field, err)
		}
		if len(data) == 0 {
			return nil, badRequest("file must be non-empty")
		}
		f = File{Name: fh.Filename, Data: data}
	} else if v := r.FormValue(field); v != "" {
		f = File{Name: v} // a file_id or URL: nothing uploaded
	} else {
		return nil, badRequest("there is no %s in the request", field)
	}
	m := &Message{ChatID: chatID, Text: caption, ParseMode: mode, Buttons: buttons, Silent: r.FormValue("disable_notification") == "true"}
	if field == "document" {
		m.Document = &f
	} else {
		m.Photo = &f
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.storeLocked(m)
	return s.botMessage(m), nil
}

var commandRe = regexp.MustCompile(`^[a-z0-9_]{1,32}$`)

func (s *Server) setMyCommands(r *http.Request) (any, *apiError) {
	var cmds []Command
	if err := json.Unmarshal([]byte(r.FormValue("commands")), &cmds); err != nil {
		return nil, badRequest("can't parse commands JSON object")
	}
	for _, c := range cmds {
		if !commandRe.MatchString(c.Command) {
			return nil, badRequest("BOT_COMMAND_INVALID")
		}
		if n := len([]rune(c.Description)); n < 1 || n > 256 {
			return nil, badRequest("BOT_COMMAND_DESCRIPTION_INVALID")
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commands[r.FormValue("language_code")] = cmds
	s.notifyLocked()
	return true, nil
}

// setChatMenuButton sets the default menu button (no chat_id) from the
// menu_button JSON: {"type":"commands"}, {"type":"default"} or
// {"type":"web_app","text":...,"web_app":{"url":"https://..."}}. Setting
// one chat's button is not faked.
func (s *Server) setChatMenuButton(r *http.Request) (any, *apiError) {
	if r.FormValue("chat_id") != "" {
		return nil, badRequest("the fake sets the default menu button only: leave chat_id out")
	}
	var mb struct {
		Type   string `json:"type"`
		Text   string `json:"text"`
		WebApp *struct {
			URL string `json:"url"`
		} `json:"web_app"`
	}
	raw := r.FormValue("menu_button")
	if raw == "" {
		raw = `{"type":"default"}`
	}
	if err := json.Unmarshal([]byte(raw), &mb); err != nil {
		return nil, badRequest("can't parse menu button JSON object")
	}
	b := MenuButton{Type: mb.Type}
	switch mb.Type {
	case "commands", "default":
	case "web_app":
		if mb.Text == "" || mb.WebApp == nil {
			return nil, badRequest("a web_app menu button needs text and web_app")
		}
		if u, err := url.Parse(mb.WebApp.URL); err != nil || u.Scheme != "https" || u.Host == "" {
			return nil, badRequest("menu button Web App URL '%s' is invalid: Only HTTPS links are allowed", mb.WebApp.URL)
		}
		b.Text, b.URL = mb.Text, mb.WebApp.URL
	default:
		return nil, badRequest("unsupported menu button type %q", mb.Type)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.menu = &b
	s.notifyLocked()
	return true, nil
}
