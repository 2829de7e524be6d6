// Package telegram is the Telegram transport of the conversation core: it
// long-polls the Bot API with go-telegram-bot-api v5, turns updates into
// chat.Update, calls the core's Handler, and delivers the core's messages.
//
// # The inbox: nothing acknowledged is lost
//
// Every update of an allowed user is written to a durable inbox (the
// store's InboxStore, a table in the ledger's SQLite file) in one
// transaction together with the offset ("telegram.offset" meta) that
// confirms it to Telegram; only then is the next getUpdates sent with that
// offset, so Telegram forgets an update only once it is stored. The
// stored offset is also the tail that drops duplicates: an update below
// it was stored (or was a stranger's) and is ignored if Telegram sends it
// again; entries are deleted once answered. The library's GetUpdatesChan
// confirms updates before they are handled, so the transport polls with
// GetUpdates itself.
//
// Fetching never waits for handling: the offset moves past every stored
// update at once, so one user's backlog of thousands of updates cannot
// hold up another user's next message (with a window of unconfirmed
// updates, the window would fill with the busy user's). Each user with
// pending updates has one worker that reads that user's entries from the
// inbox a few at a time, in order; workers of different users run side by
// side, so a user waits only for their own earlier messages. Memory per
// user is bounded (one batch); the backlog itself is on disk.
//
// An update whose text may hold a secret (Config.Secret: a platform API
// key sent with /connect) is stored without its text, which is kept in
// memory and sealed (Config.Sealer): nothing of the key is ever in the
// database, its log or a backup (see secret.go).
//
// Each update reaches the handler with Key "tg:update:<update_id>", which
// the core records in the same transaction as the change it makes, so a
// second delivery changes nothing. The answers the handler sends are
// captured, not sent at once: the entry is marked handled with its answer
// (one write right after the change), and a sender per chat delivers the
// answers and then deletes the entries. A restart sends the answers of
// handled entries not yet deleted, and hands entries not yet marked
// handled to the handler again with Redelivered set; the core answers one
// whose change it finds already applied from what was stored. So every
// update is applied exactly once and answered at least once: a crash
// between a send and the deletion that follows repeats that answer.
//
// No update of an allowed user is dropped. When answers come faster than
// Telegram's limit of about one message a second per chat, the answers
// waiting for that chat are merged into one message (at most MaxTextLen,
// cut only between answers; one longer answer is split as any text is).
//
// Errors. A handler error that is transient (ledger.Transient: a busy or
// locked database, a full disk, an I/O error) is retried with backoff for
// as long as it lasts, never skipped: the update is stored and will apply.
// Any other error (a bug, a panic) is retried MaxAttempts times and then
// the update is answered with a failure notice and dropped, so one poison
// update cannot wedge the user's queue. When the inbox itself cannot be
// written (disk full), the offset is not advanced: Telegram keeps the
// updates (for 24 hours) and the write is retried with backoff. A user
// whose update waits on a full disk is told once, by a message that needs
// no disk; the update, when it finally applies, carries the time it was
// sent (chat.Update.SentAt), not the time it was handled.
//
// Access. The core decides who may use the bot (Config.Allowed asks it).
// Updates of strangers are not stored: they are handled in memory by
// their own workers under a per-user flood limit, with a bound on how
// many wait in all, and confirmed to Telegram when fetched, so a stranger
// cannot fill the disk or the memory. A crash may lose a stranger's update
// in flight: at worst a refusal or an owner claim that is sent again.
// Telegram's news about a group (upgraded to a supergroup, the bot removed:
// chat.Update.RoomEvent) is stored whoever caused it, within the flood
// limit: a team's room must follow it.
//
// Groups. A send refused because the group became a supergroup is a
// *chat.MigratedError with the new chat ID, one to a group the bot is no
// longer in chat.ErrChatGone (see Send): whoever keeps the chat's ID (the
// scheduler, for a team's room) moves it and sends again. An answer to an
// update is resent to the supergroup by the inbox's delivery itself.
package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// DefaultEndpoint is Telegram's Bot API endpoint in the library's format.
const DefaultEndpoint = tgbotapi.APIEndpoint

// OffsetKey is the meta key holding the next update ID to ask Telegram for.
const OffsetKey = "telegram.offset"

// Store keeps the update offset and the inbox of updates between fetching
// and answering. ledger/sqlite's DB satisfies it.
type Store interface {
	Meta(ctx context.Context, key string) (string, bool, error)
	ledger.InboxStore
}

// Scrubber is a Store that can wipe from its files what it has deleted or
// overwritten (ledger/sqlite's DB: its free pages and write-ahead log). The
// transport calls it after an update whose message held a secret (the
// handler deleted that message: a platform API key sent with /connect) is
// handled and its stored text dropped, so no copy of the secret stays on
// disk.
type Scrubber interface {
	ScrubDeleted(ctx context.Context) error
}

// Sealer seals and opens short texts bound to associated data
// (connector/vault's Vault, keyed by the server's secret). The transport
// seals with it the text of an update that holds a secret before the
// update is stored, so that the inbox never holds the secret in the clear
// and a restart can still handle the update.
type Sealer interface {
	Seal(plaintext, associatedData []byte) ([]byte, error)
	Open(sealed, associatedData []byte) ([]byte, error)
}

// Command is one entry of the bot's command menu.
type Command struct {
	Command     string // without the slash: "status"
	Description string
}

// Config configures a Transport. Token, Handler and Store are required;
// zero values of the rest mean the defaults noted.
type Config struct {
	Token string
	// Endpoint is the Bot API endpoint in the library's format
	// ("http://127.0.0.1:PORT/bot%s/%s"); DefaultEndpoint if empty.
	Endpoint string
	// Client makes the HTTP requests; its Timeout must exceed PollTimeout.
	// Default: NewHTTPClient(PollTimeout+10s, ProxyFromEnv(os.Getenv)).
	Client  *http.Client
	Handler chat.Handler
	Store   Store
	// Secret reports whether an update's text holds a secret (a platform
	// API key sent with /connect). Such a text never reaches the store in
	// the clear: see Sealer. nil: the Handler's HoldsSecret method (the
	// core has one, bot.Core.HoldsSecret), else nothing is taken for a
	// secret.
	Secret func(text string) bool
	// Sealer, when set, seals the text of an update that holds a secret
	// in its stored form, so that an update cut off by a crash is still
	// handled at the next start. Without it (or when the stored form no
	// longer opens: the server's secret changed) such a text is kept in
	// memory only, and after a crash its message is deleted and the user
	// asked to send it again (ResendText).
	Sealer Sealer
	// ResendText asks a user to send again a message that held a secret
	// and was cut off by a restart before it was handled.
	ResendText func(lang string) string
	// Allowed reports whether a user may use the bot (the core's
	// Core.Allowed). Allowed users' updates are stored and never dropped;
	// others are handled in memory under the flood limit. nil: everyone
	// is treated as allowed.
	Allowed func(userID int64) bool
	Logger  *slog.Logger     // slog.Default()
	Now     func() time.Time // time.Now
	// Sleep waits d or until ctx ends (sleepCtx); tests record waits with it.
	Sleep func(ctx context.Context, d time.Duration) error

	// Commands maps a language code ("" for the default, "zh") to the
	// command menu set at start.
	Commands map[string][]Command
	// MenuApp makes the menu button open the dashboard's Mini App (set
	// at start); zero: the command list (see setMenu).
	MenuApp MenuApp

	PollTimeout time.Duration // long-poll timeout (50s)
	// Backoff spaces retries after network failures and 5xx answers
	// ({1s, 60s}); RetryBackoff spaces retries of a failed Handle ({1s, 30s}).
	Backoff      Backoff
	RetryBackoff Backoff
	// MaxAttempts is how many times Handle is tried for one update that
	// fails with an error that is not transient, before it is answered
	// with FailedText and dropped (5). Transient errors are retried
	// without limit. SendAttempts bounds one send's retries after
	// network failures and 5xx answers (3).
	MaxAttempts  int
	SendAttempts int

	// Pacing spaces outgoing messages (1s per chat, 3s per group, 1/30 s
	// overall, bursts of 3 per chat).
	Pacing Pacing
	// FloodInterval and FloodBurst limit incoming updates per stranger
	// (never an allowed user): on average one per FloodInterval (1s),
	// bursts of FloodBurst (10). StrangerQueue bounds the strangers'
	// updates waiting in memory, all together (1000).
	FloodInterval time.Duration
	FloodBurst    int
	StrangerQueue int
	// SlowDownText is the reply to a flooding stranger's button press,
	// by language hint.
	SlowDownText func(lang string) string
	// DiskFullText tells a user, once, that their update waits for disk
	// space; FailedText answers an update dropped after MaxAttempts.
	DiskFullText func(lang string) string
	FailedText   func(lang string) string
	// InboxBatch is how many of one user's stored updates a worker holds
	// in memory at a time (16).
	InboxBatch int

	// CallbackGrace is how long a button press may wait for the handler
	// to answer it before the transport answers it without text, so the
	// client's spinner stops even when the work behind it is slow (2s).
	CallbackGrace time.Duration

	// ShutdownGrace is how long Run waits, after its context ends, for
	// updates in flight to finish before cancelling them (10s).
	ShutdownGrace time.Duration
}

func defaultSlowDown(lang string) string {
	if strings.HasPrefix(strings.ToLower(lang), "zh") {
		return "消息太多了，请慢一点。多出的消息已忽略。"
	}
	return "Too many messages: please slow down. The extra ones were ignored."
}

func defaultDiskFull(lang string) string {
	if strings.HasPrefix(strings.ToLower(lang), "zh") {
		return "⚠ 服务器磁盘已满，你的消息还没有记录。消息已保留，一有空间就会按你发送的时间记录，不用重发。"
	}
	return "⚠ The server's disk is full, so your message is not recorded yet. It is kept and will be recorded, at the time you sent it, as soon as there is space: no need to send it again."
}

func defaultFailed(lang string) string {
	if strings.HasPrefix(strings.ToLower(lang), "zh") {
		return "✗ 服务器处理这条消息时出错。请先用 /status 查看，再决定是否重发。"
	}
	return "✗ The server failed to handle this message. Check /status before sending it again."
}

func defaultResend(lang string) string {
	if strings.HasPrefix(strings.ToLower(lang), "zh") {
		return "⚠ 服务器在处理你那条含 API 密钥的消息时重启了。未经检查的密钥不会保存在磁盘上，所以请重新发送那条消息。（它已从聊天中删除；若仍能看到，请自行删除。）"
	}
	return "⚠ The server restarted while it was handling your message that held an API key. A key not yet checked is never kept on disk, so please send that message again. (It was deleted from the chat; if you still see it, delete it.)"
}

func (c *Config) setDefaults() {
	if c.Endpoint == "" {
		c.Endpoint = DefaultEndpoint
	}
	if c.PollTimeout <= 0 {
		c.PollTimeout = 50 * time.Second
	}
	if c.Client == nil {
		c.Client = NewHTTPClient(c.PollTimeout+10*time.Second, ProxyFromEnv(os.Getenv))
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Sleep == nil {
		c.Sleep = sleepCtx
	}
	if c.Backoff == (Backoff{}) {
		c.Backoff = Backoff{Min: time.Second, Max: time.Minute}
	}
	if c.RetryBackoff == (Backoff{}) {
		c.RetryBackoff = Backoff{Min: time.Second, Max: 30 * time.Second}
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 5
	}
	if c.SendAttempts <= 0 {
		c.SendAttempts = 3
	}
	if c.Pacing.Chat <= 0 {
		c.Pacing.Chat = time.Second
	}
	if c.Pacing.Group <= 0 {
		c.Pacing.Group = 3 * time.Second
	}
	if c.Pacing.Global <= 0 {
		c.Pacing.Global = time.Second / 30
	}
	if c.Pacing.ChatBurst <= 0 {
		c.Pacing.ChatBurst = 3
	}
	if c.FloodInterval <= 0 {
		c.FloodInterval = time.Second
	}
	if c.FloodBurst <= 0 {
		c.FloodBurst = 10
	}
	if c.SlowDownText == nil {
		c.SlowDownText = defaultSlowDown
	}
	if c.DiskFullText == nil {
		c.DiskFullText = defaultDiskFull
	}
	if c.FailedText == nil {
		c.FailedText = defaultFailed
	}
	if c.ResendText == nil {
		c.ResendText = defaultResend
	}
	if c.Secret == nil {
		if h, ok := c.Handler.(interface{ HoldsSecret(string) bool }); ok {
			c.Secret = h.HoldsSecret
		} else {
			c.Secret = func(string) bool { return false }
		}
	}
	if c.StrangerQueue <= 0 {
		c.StrangerQueue = 1000
	}
	if c.InboxBatch <= 0 {
		c.InboxBatch = 16
	}
	if c.Allowed == nil {
		c.Allowed = func(int64) bool { return true }
	}
	if c.CallbackGrace <= 0 {
		c.CallbackGrace = 2 * time.Second
	}
	if c.ShutdownGrace <= 0 {
		c.ShutdownGrace = 10 * time.Second
	}
}

// Transport is the Telegram transport. It is a chat.Sender (usable by the
// scheduler's notifications while Run is going) and is safe for concurrent
// use; Run may be called once.
type Transport struct {
	cfg   Config
	api   *tgbotapi.BotAPI // template: each call uses a copy with its context
	log   *slog.Logger
	pace  *pacer
	flood *floodGuard

	botName string // set by Run before polling

	// next is the offset to poll with and stored the one in the store;
	// both are written only by the polling goroutine. earlier is the
	// offset stored when Run began: entries below it may have been
	// handled by an earlier process.
	next, stored, earlier int

	mu        sync.Mutex
	users     map[int64]*userWork // allowed users with a worker running
	strangers map[int64][]*item   // strangers' in-memory queues; a key exists while its worker runs
	queued    int                 // strangers' updates waiting, all together
	chats     map[int64]*outbox   // answers waiting per chat
	fullTold  map[int64]bool      // users told the disk is full, until one of their updates applies
	held      map[int64]string    // the texts holding a secret of the entries stored without them, by update ID
	wg        sync.WaitGroup

	outage    time.Time // when the current incident began; zero when reachable
	failCount int
}

// userWork is the state of an allowed user's worker: dirty is set when
// new entries were stored after the worker last looked.
type userWork struct {
	dirty bool
}

type item struct {
	u         chat.Update
	throttled bool // over the flood limit: not handled
}

// New checks cfg and returns a Transport. It makes no request: Run
// connects, so a transport can be built while Telegram is unreachable.
func New(cfg Config) (*Transport, error) {
	switch {
	case cfg.Token == "":
		return nil, errors.New("telegram: Config.Token is empty (set TELEGRAM_BOT_TOKEN, e.g. 123456:ABC-DEF)")
	case cfg.Handler == nil:
		return nil, errors.New("telegram: Config.Handler is nil")
	case cfg.Store == nil:
		return nil, errors.New("telegram: Config.Store is nil")
	}
	cfg.setDefaults()
	if cfg.Client.Timeout != 0 && cfg.Client.Timeout <= cfg.PollTimeout {
		return nil, fmt.Errorf("telegram: Config.Client.Timeout %v must exceed PollTimeout %v, or long polls are cut off", cfg.Client.Timeout, cfg.PollTimeout)
	}
	if strings.Count(cfg.Endpoint, "%s") != 2 {
		return nil, fmt.Errorf("telegram: endpoint %q must contain %%s twice, e.g. https://api.telegram.org/bot%%s/%%s", cfg.Endpoint)
	}
	api := &tgbotapi.BotAPI{Token: cfg.Token, Client: cfg.Client, Buffer: 100}
	api.SetAPIEndpoint(cfg.Endpoint)
	return &Transport{
		cfg:       cfg,
		api:       api,
		log:       cfg.Logger,
		pace:      newPacer(cfg.Pacing, cfg.Now),
		flood:     &floodGuard{interval: cfg.FloodInterval, burst: cfg.FloodBurst, users: make(map[int64]*floodState)},
		users:     make(map[int64]*userWork),
		strangers: make(map[int64][]*item),
		chats:     make(map[int64]*outbox),
		fullTold:  make(map[int64]bool),
		held:      make(map[int64]string),
	}, nil
}

// bot returns a copy of the library's client whose requests carry ctx.
func (t *Transport) bot(ctx context.Context) *tgbotapi.BotAPI {
	b := *t.api
	b.Client = ctxDoer{ctx: ctx, c: t.cfg.Client, token: t.cfg.Token}
	return &b
}

// Run connects, sets the command menus, sends the answers a previous run
// left unsent, resumes the stored updates and handles new ones until ctx
// ends; then it lets the work in flight finish (up to ShutdownGrace) and
// returns nil. Telegram being unreachable never ends Run: it retries with
// backoff, logging once when Telegram becomes unreachable and once when it
// is back. Run returns an error only when Telegram rejects the token or the
// stored offset or inbox cannot be read.
func (t *Transport) Run(ctx context.Context) error {
	raw, ok, err := t.cfg.Store.Meta(ctx, OffsetKey)
	if err != nil {
		return fmt.Errorf("telegram: read %s: %w", OffsetKey, err)
	}
	if ok {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 0 {
			t.log.Warn("ignoring a bad stored offset", "key", OffsetKey, "value", raw)
		} else {
			t.next, t.stored, t.earlier = n, n, n
		}
	}
	if err := t.connect(ctx); err != nil || ctx.Err() != nil {
		return err
	}

	// Workers and senders run on a context that outlives ctx by the grace
	// period, so the update in flight at shutdown finishes and is marked.
	hctx, hcancel := context.WithCancel(context.WithoutCancel(ctx))
	defer hcancel()
	if err := t.resume(ctx, hctx); err != nil {
		return err
	}
	t.poll(ctx, hctx)

	finished := make(chan struct{})
	go func() { t.wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(t.cfg.ShutdownGrace):
		t.log.Warn("updates still in flight at shutdown; cancelling them", "grace", t.cfg.ShutdownGrace)
		hcancel()
		<-finished
	}
	return nil
}

// connect calls getMe until it succeeds, then removes any webhook (which
// would make getUpdates fail) and sets the command menus and the menu
// button.
func (t *Transport) connect(ctx context.Context) error {
	for attempt := 1; ; attempt++ {
		me, err := t.bot(ctx).GetMe()
		if err == nil {
			t.reachable()
			t.botName = me.UserName
			t.log.Info("telegram connected", "bot", me.UserName)
			t.rememberName(ctx, me.UserName)
			break
		}
		if ctx.Err() != nil {
			return nil
		}
		if te := apiError(err); te != nil && (te.Code == http.StatusUnauthorized || te.Code == http.StatusNotFound) {
			return fmt.Errorf("telegram: the bot token was rejected (%s): check TELEGRAM_BOT_TOKEN", te.Message)
		}
		t.unreachable(err)
		if t.cfg.Sleep(ctx, t.cfg.Backoff.delay(attempt)) != nil {
			return nil
		}
	}
	if _, err := t.call(ctx, 0, tgbotapi.DeleteWebhookConfig{}); err != nil && ctx.Err() == nil {
		t.log.Warn("deleteWebhook failed", "err", t.scrubErr(err))
	}
	langs := make([]string, 0, len(t.cfg.Commands))
	for lang := range t.cfg.Commands {
		langs = append(langs, lang)
	}
	slices.Sort(langs)
	for _, lang := range langs {
		cfg := tgbotapi.SetMyCommandsConfig{LanguageCode: lang}
		for _, c := range t.cfg.Commands[lang] {
			cfg.Commands = append(cfg.Commands, tgbotapi.BotCommand{Command: c.Command, Description: c.Description})
		}
		if _, err := t.call(ctx, 0, cfg); err != nil && ctx.Err() == nil {
			t.log.Warn("setMyCommands failed", "lang", lang, "err", t.scrubErr(err))
		}
	}
	t.setMenu(ctx)
	return nil
}

// rememberName stores the bot's username for the next start (BotName),
// when the store can write meta and it changed. A failure is logged: it
// is a hint only.
func (t *Transport) rememberName(ctx context.Context, name string) {
	ms, ok := t.cfg.Store.(metaSetter)
	if !ok || name == "" {
		return
	}
	if old, _, err := t.cfg.Store.Meta(ctx, BotNameKey); err == nil && old == name {
		return
	}
	if err := ms.SetMeta(ctx, BotNameKey, name); err != nil {
		t.log.Warn("storing the bot's username failed", "key", BotNameKey, "err", t.scrubErr(err))
	}
}

// unreachable logs the first failure of an incident; later ones only at
// debug level, so an outage is one line in the log, not one per attempt.
func (t *Transport) unreachable(err error) {
	t.failCount++
	if t.outage.IsZero() {
		t.outage = t.cfg.Now()
		t.log.Warn("telegram unreachable", "err", t.scrubErr(err))
		return
	}
	t.log.Debug("telegram still unreachable", "attempt", t.failCount, "err", t.scrubErr(err))
}

func (t *Transport) reachable() {
	if !t.outage.IsZero() {
		t.log.Info("telegram reachable again", "down_for", t.cfg.Now().Sub(t.outage).Round(time.Millisecond), "failed_attempts", t.failCount)
	}
	t.outage, t.failCount = time.Time{}, 0
}

// allowedUpdates are the update types asked for; others are never sent.
var allowedUpdates = []string{"message", "edited_message", "callback_query", "my_chat_member"}

// poll fetches updates until ctx ends, stores allowed users' updates in the
// inbox with the new offset, and wakes their workers.
func (t *Transport) poll(ctx, hctx context.Context) {
	timeout := int(t.cfg.PollTimeout / time.Second)
	for attempt := 0; ctx.Err() == nil; {
		ups, err := t.bot(ctx).GetUpdates(tgbotapi.UpdateConfig{Offset: t.next, Timeout: timeout, AllowedUpdates: allowedUpdates})
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			attempt++
			t.unreachable(err)
			d := t.cfg.Backoff.delay(attempt)
			if te := apiError(err); te != nil && te.RetryAfter > 0 {
				d = time.Duration(te.RetryAfter) * time.Second
			}
			_ = t.cfg.Sleep(ctx, d)
			continue
		}
		attempt = 0
		t.reachable()
		t.accept(ctx, hctx, ups)
	}
}

// accept stores one answer of getUpdates: the allowed users' updates go
// into the inbox with the offset past all of them, in one transaction,
// retried while it fails (the offset stays put meanwhile, so Telegram
// keeps the updates); then their workers are woken and the strangers'
// updates queued in memory.
func (t *Transport) accept(ctx, hctx context.Context, ups []tgbotapi.Update) {
	next := t.next
	var entries []ledger.InboxEntry
	var strangers []chat.Update
	for _, raw := range ups {
		id := raw.UpdateID
		if id < t.next {
			continue // confirmed already: stored or handled
		}
		next = max(next, id+1)
		u, ok := convert(raw, t.botName)
		if !ok {
			continue // confirmed with the offset, never handled
		}
		if !t.cfg.Allowed(u.UserID) && !t.storedRoomEvent(u) {
			strangers = append(strangers, u)
			continue
		}
		payload, err := t.storedForm(int64(id), u)
		if err != nil { // cannot happen: Update is plain data
			t.log.Error("encoding an update failed", "update", u.Key, "err", err)
			continue
		}
		entries = append(entries, ledger.InboxEntry{ID: int64(id), UserID: u.UserID, ChatID: u.ChatID, SentAt: u.SentAt, Payload: string(payload)})
	}
	if next == t.next {
		return
	}
	for attempt := 1; ; attempt++ {
		err := t.cfg.Store.InboxAdd(hctx, entries, OffsetKey, strconv.Itoa(next))
		if err == nil {
			break
		}
		if ledger.ErrorCode(err) == ledger.EFULL {
			for _, e := range entries {
				t.tellDiskFull(hctx, e.UserID, e.ChatID, e.Payload)
			}
		}
		lvl := slog.LevelDebug
		if attempt == 1 || attempt%20 == 0 {
			lvl = slog.LevelWarn // a long outage logs a line now and then, not one per try
		}
		t.log.Log(hctx, lvl, "storing updates failed; Telegram keeps them, will retry", "updates", len(entries), "attempt", attempt, "err", t.scrubErr(err))
		if t.cfg.Sleep(ctx, t.cfg.RetryBackoff.delay(attempt)) != nil {
			return // not stored, not confirmed: the next run fetches them again
		}
	}
	t.next, t.stored = next, next
	for _, e := range entries {
		t.kick(ctx, hctx, e.UserID)
	}
	for _, u := range strangers {
		t.queueStranger(ctx, hctx, u)
	}
}

// storedRoomEvent reports whether a stranger's update is Telegram's news
// about a group (chat.Update.RoomEvent: upgraded to a supergroup, the bot
// removed), which is stored as an allowed user's update is: whoever sent
// it (a group's admin need not use the bot), the data is Telegram's, and
// a team's room must follow it even across a crash. Only within the
// stranger's flood limit, so that adding and removing the bot in a loop
// fills no disk; past it the event is dropped as a flooding stranger's
// update is (a team's room then follows at the next send to it: the
// scheduler moves or unbinds it on the send's *chat.MigratedError or
// chat.ErrChatGone).
func (t *Transport) storedRoomEvent(u chat.Update) bool {
	if !u.RoomEvent() {
		return false
	}
	ok, _ := t.flood.check(u.UserID, t.cfg.Now())
	return ok
}

// tellDiskFull tells a user once, by a message that needs no disk, that
// their update waits for disk space. payload is the stored form of the
// update, read for the user's language.
func (t *Transport) tellDiskFull(ctx context.Context, userID, chatID int64, payload string) {
	t.mu.Lock()
	told := t.fullTold[userID]
	t.fullTold[userID] = true
	t.mu.Unlock()
	if told {
		return
	}
	var u chat.Update
	_ = json.Unmarshal([]byte(payload), &u)
	if u.ChatID != 0 {
		chatID = u.ChatID
	}
	if _, err := t.Send(ctx, chat.Outgoing{ChatID: chatID, Text: t.cfg.DiskFullText(u.LangCode)}); err != nil {
		t.log.Warn("sending the disk-full notice failed", "user", userID, "err", t.scrubErr(err))
	}
}

// diskOK ends a user's disk-full incident: they are told again next time.
func (t *Transport) diskOK(userID int64) {
	t.mu.Lock()
	delete(t.fullTold, userID)
	t.mu.Unlock()
}

// handle calls the handler, turning a panic into an error so that a bug
// hit by one update is retried and then skipped, not fatal.
func (t *Transport) handle(ctx context.Context, u chat.Update, s chat.Sender) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("telegram: handler panic: %v", r)
		}
	}()
	return t.cfg.Handler.Handle(ctx, u, s)
}
