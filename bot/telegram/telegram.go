// Package telegram is the Telegram transport of the conversation core: it
// long-polls the Bot API with go-telegram-bot-api v5, turns updates into
// bot.Update, calls the core's Handler, and delivers the core's messages.
//
// Exactly once. The library's GetUpdatesChan confirms updates before they
// are handled, so the transport polls with GetUpdates itself. Each update
// reaches the handler with Key "tg:update:<update_id>", which the core
// records in the same transaction as the change it makes; the transport
// stores the offset ("telegram.offset" meta) only past updates whose
// Handle returned nil, and polls Telegram with that offset, so Telegram
// never forgets an update that was not handled. A crash redelivers at most
// the updates in flight, and the core's key makes their second delivery
// change nothing. A handler error is retried with backoff; after
// MaxAttempts the update is logged and skipped, so one poison update
// cannot wedge the bot.
//
// Fairness. Updates are handled by one worker per user, in order for that
// user, so a user whose replies wait on Telegram's per-chat pacing, or
// whose update is being retried, does not hold up anyone else. A user who
// sends more than the flood limit is told once to slow down and the excess
// is dropped (not queued: a queue would let one user grow memory and delay
// their own later commands without bound).
//
// Access. The transport passes every update to the handler; the core
// decides who may do what (allowed users, the "/start CODE" owner claim),
// because it holds the store. The transport only transports.
package telegram

import (
	"context"
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

	"github.com/gpuledger/gpuledger/bot"
)

// DefaultEndpoint is Telegram's Bot API endpoint in the library's format.
const DefaultEndpoint = tgbotapi.APIEndpoint

// OffsetKey is the meta key holding the next update ID to ask Telegram for.
const OffsetKey = "telegram.offset"

// MetaStore keeps the update offset. ledger.Store satisfies it.
type MetaStore interface {
	Meta(ctx context.Context, key string) (string, bool, error)
	SetMeta(ctx context.Context, key, value string) error
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
	Handler bot.Handler
	Store   MetaStore
	Logger  *slog.Logger     // slog.Default()
	Now     func() time.Time // time.Now
	// Sleep waits d or until ctx ends (sleepCtx); tests record waits with it.
	Sleep func(ctx context.Context, d time.Duration) error

	// Commands maps a language code ("" for the default, "zh") to the
	// command menu set at start.
	Commands map[string][]Command

	PollTimeout time.Duration // long-poll timeout (50s)
	// BusyPoll is how often Telegram is polled for other users' updates
	// while some are still being handled (1s).
	BusyPoll time.Duration
	// Backoff spaces retries after network failures and 5xx answers
	// ({1s, 60s}); RetryBackoff spaces retries of a failed Handle ({1s, 30s}).
	Backoff      Backoff
	RetryBackoff Backoff
	// MaxAttempts is how many times Handle is tried for one update before
	// it is skipped (5). SendAttempts bounds one send's retries after
	// network failures and 5xx answers (3).
	MaxAttempts  int
	SendAttempts int

	// Pacing spaces outgoing messages (1s per chat, 3s per group, 1/30 s
	// overall, bursts of 3 per chat).
	Pacing Pacing
	// FloodInterval and FloodBurst limit incoming updates per user: on
	// average one per FloodInterval (1s), bursts of FloodBurst (10).
	FloodInterval time.Duration
	FloodBurst    int
	// SlowDownText is the reply to a flooding user, by language hint.
	SlowDownText func(lang string) string

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
	if c.BusyPoll <= 0 {
		c.BusyPoll = time.Second
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
	if c.CallbackGrace <= 0 {
		c.CallbackGrace = 2 * time.Second
	}
	if c.ShutdownGrace <= 0 {
		c.ShutdownGrace = 10 * time.Second
	}
}

// Transport is the Telegram transport. It is a bot.Sender (usable by the
// scheduler's notifications while Run is going) and is safe for concurrent
// use; Run may be called once.
type Transport struct {
	cfg   Config
	api   *tgbotapi.BotAPI // template: each call uses a copy with its context
	log   *slog.Logger
	pace  *pacer
	flood *floodGuard

	botName string // set by Run before polling

	mu      sync.Mutex
	pending map[int]bool      // dispatched, not finished
	done    map[int]bool      // finished while an earlier one is pending
	next    int               // the offset when nothing is pending
	workers map[int64][]*item // per-user queues; a key exists while its worker runs
	wake    chan struct{}     // a worker finished an update
	wg      sync.WaitGroup

	storeMu sync.Mutex
	stored  int // the offset last written to the store

	outage    time.Time // when the current incident began; zero when reachable
	failCount int
}

type item struct {
	u         bot.Update
	id        int
	throttled bool // over the flood limit: not handled
	warn      bool // the first refusal of the flood: tell the user
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
		cfg:     cfg,
		api:     api,
		log:     cfg.Logger,
		pace:    newPacer(cfg.Pacing, cfg.Now),
		flood:   &floodGuard{interval: cfg.FloodInterval, burst: cfg.FloodBurst, users: make(map[int64]*floodState)},
		pending: make(map[int]bool),
		done:    make(map[int]bool),
		workers: make(map[int64][]*item),
		wake:    make(chan struct{}, 1),
	}, nil
}

// bot returns a copy of the library's client whose requests carry ctx.
func (t *Transport) bot(ctx context.Context) *tgbotapi.BotAPI {
	b := *t.api
	b.Client = ctxDoer{ctx: ctx, c: t.cfg.Client, token: t.cfg.Token}
	return &b
}

// Run connects, sets the command menus and handles updates until ctx ends,
// then lets the updates in flight finish (up to ShutdownGrace) and returns
// nil. Telegram being unreachable never ends Run: it retries with backoff,
// logging once when Telegram becomes unreachable and once when it is back.
// Run returns an error only when Telegram rejects the token or the stored
// offset cannot be read.
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
			t.next, t.stored = n, n
		}
	}
	if err := t.connect(ctx); err != nil || ctx.Err() != nil {
		return err
	}

	// Handlers run on a context that outlives ctx by the grace period, so
	// the update in flight at shutdown finishes and its offset is stored.
	hctx, hcancel := context.WithCancel(context.WithoutCancel(ctx))
	defer hcancel()
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
// would make getUpdates fail) and sets the command menus.
func (t *Transport) connect(ctx context.Context) error {
	for attempt := 1; ; attempt++ {
		me, err := t.bot(ctx).GetMe()
		if err == nil {
			t.reachable()
			t.botName = me.UserName
			t.log.Info("telegram connected", "bot", me.UserName)
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
	return nil
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

// poll fetches updates until ctx ends and hands them to the workers.
func (t *Transport) poll(ctx, hctx context.Context) {
	for attempt := 0; ctx.Err() == nil; {
		offset, busy := t.offset()
		timeout := int(t.cfg.PollTimeout / time.Second)
		if busy {
			timeout = 0 // the updates in flight come back at once anyway
		}
		ups, err := t.bot(ctx).GetUpdates(tgbotapi.UpdateConfig{Offset: offset, Timeout: timeout, AllowedUpdates: allowedUpdates})
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
		fresh := t.dispatch(ctx, hctx, ups, offset)
		t.storeOffset(hctx)
		if _, busy := t.offset(); busy && fresh == 0 {
			// Wait for a worker to finish, or poll again for other users.
			timer := time.NewTimer(t.cfg.BusyPoll)
			select {
			case <-ctx.Done():
			case <-t.wake:
			case <-timer.C:
			}
			timer.Stop()
		}
	}
}

// offset returns the offset to poll with: the lowest update still pending,
// or the one after the last dispatched. busy is true while any is pending.
func (t *Transport) offset() (int, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.offsetLocked()
}

func (t *Transport) offsetLocked() (int, bool) {
	low, busy := t.next, false
	for id := range t.pending {
		if !busy || id < low {
			low, busy = id, true
		}
	}
	return low, busy
}

// dispatch queues the updates not seen before to their users' workers and
// returns how many there were.
func (t *Transport) dispatch(ctx, hctx context.Context, ups []tgbotapi.Update, offset int) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	fresh := 0
	for _, raw := range ups {
		id := raw.UpdateID
		if id < offset || t.pending[id] || t.done[id] {
			continue
		}
		fresh++
		t.next = max(t.next, id+1)
		u, ok := convert(raw, t.botName)
		if !ok {
			t.done[id] = true // confirmed with a later poll, never handled
			continue
		}
		t.pending[id] = true
		it := &item{u: u, id: id}
		if ok, first := t.flood.check(u.UserID, t.cfg.Now()); !ok {
			it.throttled, it.warn = true, first
		}
		q, running := t.workers[u.UserID]
		t.workers[u.UserID] = append(q, it)
		if !running {
			t.wg.Add(1)
			go t.work(ctx, hctx, u.UserID)
		}
	}
	// Offsets only grow, so no later answer holds an update below this
	// poll's offset: forget those. (Not below the current offset: an answer
	// to a poll already in flight may still hold them.)
	for id := range t.done {
		if id < offset {
			delete(t.done, id)
		}
	}
	return fresh
}

// work handles one user's queued updates in order, and exits when the queue
// is empty or ctx has ended (leaving the rest pending, for redelivery).
func (t *Transport) work(ctx, hctx context.Context, userID int64) {
	defer t.wg.Done()
	for {
		t.mu.Lock()
		q := t.workers[userID]
		if len(q) == 0 || ctx.Err() != nil {
			delete(t.workers, userID)
			t.mu.Unlock()
			return
		}
		it := q[0]
		t.workers[userID] = q[1:]
		t.mu.Unlock()

		if !t.process(ctx, hctx, it) {
			continue // shutting down: it stays pending
		}
		t.mu.Lock()
		delete(t.pending, it.id)
		t.done[it.id] = true
		t.mu.Unlock()
		t.storeOffset(hctx)
		select {
		case t.wake <- struct{}{}:
		default:
		}
	}
}

// process handles one update, retrying a failing Handle with backoff. It
// returns false if it stopped because ctx ended, true when the update is
// finished (handled, throttled, or skipped after MaxAttempts).
func (t *Transport) process(ctx, hctx context.Context, it *item) bool {
	s := &updateSender{t: t, cbID: it.u.CallbackID}
	log := t.log.With("update", it.u.Key, "user", it.u.UserID)
	if it.throttled {
		text := t.cfg.SlowDownText(it.u.LangCode)
		if it.u.Kind == bot.KindCallback {
			s.ensureAnswered(hctx, text)
		} else if it.warn {
			if _, err := t.Send(hctx, bot.Outgoing{ChatID: it.u.ChatID, Text: text}); err != nil {
				log.Warn("sending slow-down notice failed", "err", t.scrubErr(err))
			}
		}
		if it.warn {
			log.Warn("user over the flood limit: dropping updates until they slow down")
		} else {
			log.Debug("update dropped: user over the flood limit")
		}
		return true
	}
	if s.cbID != "" {
		stop := time.AfterFunc(t.cfg.CallbackGrace, func() { s.ensureAnswered(hctx, "") })
		defer stop.Stop()
	}
	for attempt := 1; ; attempt++ {
		err := t.handle(hctx, it.u, s)
		if err == nil {
			break
		}
		s.ensureAnswered(hctx, "") // stop the spinner while we retry
		if attempt >= t.cfg.MaxAttempts {
			log.Error("update skipped after repeated failures", "attempts", attempt, "err", t.scrubErr(err))
			break
		}
		log.Warn("handling update failed, will retry", "attempt", attempt, "err", t.scrubErr(err))
		if t.cfg.Sleep(ctx, t.cfg.RetryBackoff.delay(attempt)) != nil {
			return false
		}
	}
	s.ensureAnswered(hctx, "")
	return true
}

// handle calls the handler, turning a panic into an error so that a bug
// hit by one update is retried and then skipped, not fatal.
func (t *Transport) handle(ctx context.Context, u bot.Update, s bot.Sender) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("telegram: handler panic: %v", r)
		}
	}()
	return t.cfg.Handler.Handle(ctx, u, s)
}

// storeOffset writes the current offset if it has advanced. A failed write
// is logged and tried again after the next update: the core's keys keep
// redelivered updates harmless meanwhile.
func (t *Transport) storeOffset(ctx context.Context) {
	t.storeMu.Lock()
	defer t.storeMu.Unlock()
	off, _ := t.offset()
	if off <= t.stored {
		return
	}
	if err := t.cfg.Store.SetMeta(ctx, OffsetKey, strconv.Itoa(off)); err != nil {
		t.log.Warn("storing the update offset failed", "err", t.scrubErr(err))
		return
	}
	t.stored = off
}
