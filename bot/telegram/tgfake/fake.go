// Package tgfake is a fake Telegram Bot API server for tests. It speaks
// enough of the Bot API (getMe, getUpdates with long polling and offset
// confirmation, sendMessage, editMessageText, answerCallbackQuery,
// sendDocument, sendPhoto, setMyCommands, getMyCommands, setChatMenuButton,
// deleteWebhook) for the real go-telegram-bot-api library to talk to it
// over loopback HTTP, and lets a test play the users: send texts, press
// buttons, send stickers, and read back what the bot sent.
//
// It checks what real Telegram checks where mistakes are likely: message and
// caption length, the HTML subset and its nesting, callback data of at most
// 64 bytes, "message is not modified" on identical edits, web-app buttons
// only in private chats and only to https URLs. Failures can be
// injected (FailNext) and the whole server taken down (SetDown) to exercise a
// client's retry paths. A group's life is played too (room.go): upgraded to
// a supergroup (SendMigrated), the bot removed (SendBotRemoved), and the
// answers Telegram gives the bot's messages to such a chat afterwards.
//
// In a test:
//
//	fake := tgfake.New(t, "123:TOKEN")
//	api, _ := tgbotapi.NewBotAPIWithAPIEndpoint("123:TOKEN", fake.Endpoint())
//	fake.SendText(42, 42, "/status")
//
// As a separate process (for end-to-end tests of real binaries) see Start,
// the control HTTP API under /control/ and Client.
package tgfake

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// BotID and BotUsername are what getMe returns.
const (
	BotID       = 777000
	BotUsername = "fake_bot"
)

// Button is an inline button the bot attached to a message: Data for a
// callback button, WebApp (its https URL) for one that opens a Mini App.
type Button struct {
	Text   string `json:"text"`
	Data   string `json:"data"`
	WebApp string `json:"web_app,omitempty"`
}

// MenuButton is the bot's menu button as setChatMenuButton last set it:
// Type "commands", "web_app" (with Text and URL) or "default".
type MenuButton struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
	URL  string `json:"url,omitempty"`
}

// File is a document or photo the bot sent, with its exact bytes.
type File struct {
	Name string `json:"name"`
	Data []byte `json:"data"`
}

// Message is a message the bot sent to a chat, as it stands now.
type Message struct {
	ID     int   `json:"id"`
	ChatID int64 `json:"chat_id"`
	// Text is the current text (or caption, for documents and photos), as
	// the bot sent it, markup included.
	Text      string `json:"text"`
	ParseMode string `json:"parse_mode,omitempty"`
	// History holds the earlier texts of an edited message, oldest first.
	History []string   `json:"history,omitempty"`
	Buttons [][]Button `json:"buttons,omitempty"`
	// Document and Photo are set for sendDocument and sendPhoto.
	Document *File `json:"document,omitempty"`
	Photo    *File `json:"photo,omitempty"`
	// Silent is true when the bot asked for no notification.
	Silent bool `json:"silent,omitempty"`
	// NoPreview is true when the bot asked for no link preview (a preview
	// would fetch the links in the text).
	NoPreview bool      `json:"no_preview,omitempty"`
	SentAt    time.Time `json:"sent_at"`
	// EditedAt is the time of the last edit, zero if never edited.
	EditedAt time.Time `json:"edited_at,omitzero"`
}

// Command is one entry of the bot's command menu.
type Command struct {
	Command     string `json:"command"`
	Description string `json:"description"`
}

// CallbackAnswer is the bot's answer to a button press.
type CallbackAnswer struct {
	CallbackID string `json:"callback_id"`
	Text       string `json:"text"`
}

// failure is one injected failure, consumed by the next matching API call.
type failure struct {
	method     string // "" matches any method
	status     int
	retryAfter int
}

// Server is a fake Bot API server. Its methods are safe for concurrent use.
type Server struct {
	token string
	hs    *httptest.Server // New
	ln    net.Listener     // Start
	srv   *http.Server     // Start
	base  string

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced at every change
	updates   []tgbotapi.Update
	nextUpd   int
	confirmed int // updates below this ID have been confirmed
	pollGen   int // getUpdates generation, for 409 Conflict
	msgs      map[int64][]*Message
	nextMsg   map[int64]int
	users     map[int64]tgbotapi.User
	callbacks map[string]bool // callback IDs not yet answered
	answers   []CallbackAnswer
	commands  map[string][]Command
	failures  []failure
	down      bool
	calls     map[string]int
	closed    map[int64]bool   // users whose private chat the bot may not write to
	deleted   map[int64][]int  // message IDs the bot deleted, per chat, in order
	menu      *MenuButton      // the default menu button; nil until set
	gone      map[int64]string // groups the bot is out of: the 403's description (RemoveBot)
	migrated  map[int64]int64  // groups upgraded to a supergroup: the new chat ID (MigrateChat)
	titles    map[int64]string // groups' titles (SetChatTitle)
	malformed []string         // texts sent with fmt's error mark "%!" (Malformed)
}

// New starts a fake server on a loopback port that accepts the given bot
// token. With a non-nil tb the server is closed when the test ends;
// otherwise call Close.
func New(tb testing.TB, token string) *Server {
	s := newServer(token)
	s.hs = httptest.NewServer(s.Handler())
	s.base = s.hs.URL
	if tb != nil {
		tb.Cleanup(s.Close)
		// Any text the bot sent with a formatting error fails the test
		// that made it, whatever the test checked.
		tb.Cleanup(func() {
			for _, m := range s.Malformed() {
				tb.Errorf("tgfake: the bot sent a text with a formatting error: %q", m)
			}
		})
	}
	return s
}

// Malformed returns the texts and captions sent with fmt's mark of a
// template and its arguments disagreeing ("%!d(string=2)"), each after
// its method's name.
func (s *Server) Malformed() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.malformed)
}

// Start runs a fake server listening on addr ("127.0.0.1:0" for any free
// port) until Close, for use as a separate process; the control API under
// /control/ drives it from outside.
func Start(addr, token string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("tgfake: listen: %w", err)
	}
	s := newServer(token)
	s.ln = ln
	s.srv = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	s.base = "http://" + ln.Addr().String()
	go s.srv.Serve(ln)
	return s, nil
}

func newServer(token string) *Server {
	return &Server{
		token:     token,
		changed:   make(chan struct{}),
		nextUpd:   1,
		msgs:      make(map[int64][]*Message),
		nextMsg:   make(map[int64]int),
		users:     make(map[int64]tgbotapi.User),
		callbacks: make(map[string]bool),
		commands:  make(map[string][]Command),
		calls:     make(map[string]int),
		closed:    make(map[int64]bool),
		deleted:   make(map[int64][]int),
		gone:      make(map[int64]string),
		migrated:  make(map[int64]int64),
		titles:    make(map[int64]string),
	}
}

// Handler returns the server's HTTP handler: the Bot API under
// /bot<token>/<method> and the control API under /control/.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/control/", s.serveControl)
	mux.HandleFunc("/", s.serveAPI)
	return mux
}

// Close stops the server, ending any held long poll.
func (s *Server) Close() {
	s.mu.Lock()
	s.notifyLocked()
	s.mu.Unlock()
	if s.hs != nil {
		s.hs.CloseClientConnections()
		s.hs.Close()
	}
	if s.srv != nil {
		s.srv.Close()
	}
}

// URL returns the server's base URL, e.g. "http://127.0.0.1:41234".
func (s *Server) URL() string { return s.base }

// Endpoint returns the Bot API endpoint in the library's format,
// "http://127.0.0.1:PORT/bot%s/%s".
func (s *Server) Endpoint() string { return s.base + "/bot%s/%s" }

// Token returns the bot token the server accepts.
func (s *Server) Token() string { return s.token }

// notifyLocked wakes everyone waiting for a change. s.mu must be held.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// SetUser sets the username and language code sent with userID's updates.
func (s *Server) SetUser(userID int64, username, langCode string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[userID] = tgbotapi.User{ID: userID, FirstName: "User" + strconv.FormatInt(userID, 10), UserName: username, LanguageCode: langCode}
}

func (s *Server) userLocked(userID int64) *tgbotapi.User {
	u, ok := s.users[userID]
	if !ok {
		u = tgbotapi.User{ID: userID, FirstName: "User" + strconv.FormatInt(userID, 10)}
	}
	return &u
}

// chatFor describes a chat the way Telegram does: positive IDs are private
// chats, IDs below -10^12 supergroups (and channels), other negative IDs
// groups.
func chatFor(chatID int64) *tgbotapi.Chat {
	typ := "private"
	switch {
	case chatID < -1_000_000_000_000:
		typ = "supergroup"
	case chatID < 0:
		typ = "group"
	}
	return &tgbotapi.Chat{ID: chatID, Type: typ}
}

// enqueue assigns the next update ID to u and queues it. s.mu must be held.
func (s *Server) enqueueLocked(u tgbotapi.Update) int {
	u.UpdateID = s.nextUpd
	s.nextUpd++
	s.updates = append(s.updates, u)
	s.notifyLocked()
	return u.UpdateID
}

func (s *Server) newMessageLocked(userID, chatID int64) *tgbotapi.Message {
	s.nextMsg[chatID]++
	return &tgbotapi.Message{
		MessageID: s.nextMsg[chatID], // one sequence per chat, shared with the bot's messages
		From:      s.userLocked(userID),
		Chat:      s.chatLocked(chatID),
		Date:      int(time.Now().Unix()),
	}
}

// ClosePrivate makes userID a user who never started the bot in a private
// chat (or blocked it): as on Telegram, the bot's messages to that chat
// fail with 403 "Forbidden: bot can't initiate conversation with a user".
// The user's next message in their private chat opens it again.
func (s *Server) ClosePrivate(userID int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed[userID] = true
}

// SendText queues a text message (a command or plain text) from userID in
// chatID and returns its update ID. For a private chat, chatID == userID;
// writing there opens the chat to the bot (see ClosePrivate).
func (s *Server) SendText(userID, chatID int64, text string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if chatID == userID {
		delete(s.closed, userID)
	}
	m := s.newMessageLocked(userID, chatID)
	m.Text = text
	if len(text) > 0 && text[0] == '/' {
		end := len(text)
		for i, r := range text {
			if r == ' ' || r == '\n' {
				end = i
				break
			}
		}
		m.Entities = []tgbotapi.MessageEntity{{Type: "bot_command", Offset: 0, Length: len([]rune(text[:end]))}}
	}
	return s.enqueueLocked(tgbotapi.Update{Message: m})
}

// SendForwarded queues a text message that userID forwarded from someone
// else.
func (s *Server) SendForwarded(userID, chatID int64, text string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.newMessageLocked(userID, chatID)
	m.Text = text
	m.ForwardFrom = &tgbotapi.User{ID: 999, FirstName: "Someone"}
	m.ForwardDate = int(time.Now().Unix())
	return s.enqueueLocked(tgbotapi.Update{Message: m})
}

// SendSticker queues a sticker from userID in chatID.
func (s *Server) SendSticker(userID, chatID int64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.newMessageLocked(userID, chatID)
	m.Sticker = &tgbotapi.Sticker{FileID: "sticker1", FileUniqueID: "s1", Width: 512, Height: 512, Emoji: "👍"}
	return s.enqueueLocked(tgbotapi.Update{Message: m})
}

// SendPhoto queues a photo from userID in chatID with caption (may be
// empty) and returns its update ID. A caption that begins with a command
// carries its bot_command entity, as Telegram sends it.
func (s *Server) SendPhoto(userID, chatID int64, caption string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if chatID == userID {
		delete(s.closed, userID)
	}
	m := s.newMessageLocked(userID, chatID)
	m.Photo = []tgbotapi.PhotoSize{{FileID: "inphoto1", FileUniqueID: "ip1", Width: 1280, Height: 720, FileSize: 84000}}
	m.Caption, m.CaptionEntities = caption, commandEntity(caption)
	return s.enqueueLocked(tgbotapi.Update{Message: m})
}

// SendDocument queues a document named name from userID in chatID with
// caption (may be empty) and returns its update ID.
func (s *Server) SendDocument(userID, chatID int64, name, caption string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if chatID == userID {
		delete(s.closed, userID)
	}
	m := s.newMessageLocked(userID, chatID)
	m.Document = &tgbotapi.Document{FileID: "indoc1", FileUniqueID: "id1", FileName: name, FileSize: 1200}
	m.Caption, m.CaptionEntities = caption, commandEntity(caption)
	return s.enqueueLocked(tgbotapi.Update{Message: m})
}

// commandEntity is the bot_command entity of a text that begins with a
// command, nil otherwise.
func commandEntity(text string) []tgbotapi.MessageEntity {
	if len(text) == 0 || text[0] != '/' {
		return nil
	}
	end := len(text)
	for i, r := range text {
		if r == ' ' || r == '\n' {
			end = i
			break
		}
	}
	return []tgbotapi.MessageEntity{{Type: "bot_command", Offset: 0, Length: len([]rune(text[:end]))}}
}

// SendEdited queues an edited_message update: userID changed the text of
// their earlier message messageID.
func (s *Server) SendEdited(userID, chatID int64, messageID int, text string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := &tgbotapi.Message{
		MessageID: messageID,
		From:      s.userLocked(userID),
		Chat:      s.chatLocked(chatID),
		Date:      int(time.Now().Unix()),
		EditDate:  int(time.Now().Unix()),
		Text:      text,
	}
	return s.enqueueLocked(tgbotapi.Update{EditedMessage: m})
}

// SendChannelPost queues a channel_post update in channel chatID.
func (s *Server) SendChannelPost(chatID int64, text string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := &tgbotapi.Chat{ID: chatID, Type: "channel"}
	m := &tgbotapi.Message{MessageID: 1, SenderChat: ch, Chat: ch, Date: int(time.Now().Unix()), Text: text}
	return s.enqueueLocked(tgbotapi.Update{ChannelPost: m})
}

// SendUpdate queues an arbitrary update (its UpdateID is assigned) and
// returns its update ID.
func (s *Server) SendUpdate(u tgbotapi.Update) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.enqueueLocked(u)
}

// PressButton queues a callback query: userID pressed the button with the
// given data under the bot's message messageID in chatID. The callback ID
// is "cb<updateID>". The message need not exist (an old message).
func (s *Server) PressButton(userID, chatID int64, messageID int, data string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextUpd
	cbID := "cb" + strconv.Itoa(id)
	var msg *tgbotapi.Message
	if m := s.findLocked(chatID, messageID); m != nil {
		msg = &tgbotapi.Message{MessageID: m.ID, Chat: s.chatLocked(chatID), Date: int(m.SentAt.Unix()), Text: m.Text,
			From: &tgbotapi.User{ID: BotID, IsBot: true, FirstName: "Fake Bot", UserName: BotUsername}}
	} else {
		msg = &tgbotapi.Message{MessageID: messageID, Chat: s.chatLocked(chatID),
			From: &tgbotapi.User{ID: BotID, IsBot: true, FirstName: "Fake Bot", UserName: BotUsername}}
	}
	s.callbacks[cbID] = true
	return s.enqueueLocked(tgbotapi.Update{CallbackQuery: &tgbotapi.CallbackQuery{
		ID:           cbID,
		From:         s.userLocked(userID),
		Message:      msg,
		ChatInstance: "ci" + strconv.FormatInt(chatID, 10),
		Data:         data,
	}})
}

func (s *Server) findLocked(chatID int64, messageID int) *Message {
	for _, m := range s.msgs[chatID] {
		if m.ID == messageID {
			return m
		}
	}
	return nil
}

// Messages returns copies of the messages the bot sent to chatID, in the
// order they were sent.
func (s *Server) Messages(chatID int64) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Message, 0, len(s.msgs[chatID]))
	for _, m := range s.msgs[chatID] {
		out = append(out, copyMessage(m))
	}
	return out
}

func copyMessage(m *Message) Message {
	c := *m
	c.History = slices.Clone(m.History)
	c.Buttons = nil
	for _, row := range m.Buttons {
		c.Buttons = append(c.Buttons, slices.Clone(row))
	}
	if m.Document != nil {
		d := *m.Document
		d.Data = slices.Clone(d.Data)
		c.Document = &d
	}
	if m.Photo != nil {
		p := *m.Photo
		p.Data = slices.Clone(p.Data)
		c.Photo = &p
	}
	return c
}

// Commands returns the command menu the bot set for a language code (""
// for the default).
func (s *Server) Commands(lang string) []Command {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.commands[lang])
}

// Menu returns the default menu button the bot set with setChatMenuButton,
// and false when it never set one.
func (s *Server) Menu() (MenuButton, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.menu == nil {
		return MenuButton{}, false
	}
	return *s.menu, true
}

// Deleted returns the IDs of the messages the bot deleted in chatID
// (deleteMessage), in order: users' messages and its own.
func (s *Server) Deleted(chatID int64) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.deleted[chatID])
}

// Answers returns the bot's answers to button presses, in order.
func (s *Server) Answers() []CallbackAnswer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.answers)
}

// Calls returns how many times the bot called a Bot API method (failed
// and injected-failure calls included).
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// Confirmed returns the offset the bot has confirmed: every update below
// it is gone from the server, as on Telegram.
func (s *Server) Confirmed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.confirmed
}

// Pending returns how many queued updates the bot has not confirmed.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.updates)
}

// FailNext makes the next n Bot API calls (of any method) fail with the
// HTTP status: 429 carries parameters.retry_after = retryAfter seconds;
// other statuses carry Telegram's description for them.
func (s *Server) FailNext(n, status, retryAfter int) {
	s.FailMethod("", n, status, retryAfter)
}

// FailMethod is FailNext restricted to calls of one method ("sendMessage").
func (s *Server) FailMethod(method string, n, status, retryAfter int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.failures = append(s.failures, failure{method: method, status: status, retryAfter: retryAfter})
	}
}

// ClearFailures forgets the failures queued by FailNext and FailMethod
// that have not happened yet.
func (s *Server) ClearFailures() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = nil
}

// SetDown simulates an outage: while down, every connection is closed
// without a response, as a network failure looks to a client.
func (s *Server) SetDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down = down
	s.notifyLocked()
}

// WaitFor calls pred after every change on the server (and at least every
// 50 ms) until it returns true or ctx ends. pred may call the Server's
// methods.
func (s *Server) WaitFor(ctx context.Context, pred func() bool) error {
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if pred() {
			return nil
		}
		t := time.NewTimer(50 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("tgfake: wait: %w", ctx.Err())
		case <-ch:
		case <-t.C:
		}
		t.Stop()
	}
}

// WaitMessages waits until chatID has at least n messages from the bot and
// returns them.
func (s *Server) WaitMessages(ctx context.Context, chatID int64, n int) ([]Message, error) {
	var msgs []Message
	err := s.WaitFor(ctx, func() bool {
		msgs = s.Messages(chatID)
		return len(msgs) >= n
	})
	if err != nil {
		return msgs, fmt.Errorf("tgfake: chat %d has %d messages, want %d: %w", chatID, len(msgs), n, err)
	}
	return msgs, nil
}

// writeJSON writes v as a JSON response.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
