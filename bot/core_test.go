package bot_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/internal/testkit"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// env is a core over a real SQLite file, a settable clock and a recorder.
type env struct {
	t    *testing.T
	db   *sqlite.DB
	core *bot.Core
	rec  *testkit.Sender
	now  time.Time
	logs *strings.Builder
}

// keySeq makes update keys unique across the envs sharing a store.
var keySeq atomic.Int64

var t0 = time.Date(2026, 11, 2, 2, 0, 0, 0, time.UTC) // 10:00 in Shanghai

func openStore(t testing.TB) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ledger.db"), sqlite.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func newEnv(t *testing.T, cfg bot.Config) *env {
	t.Helper()
	e := &env{t: t, rec: &testkit.Sender{}, now: t0, logs: &strings.Builder{}}
	if cfg.Store == nil {
		e.db = openStore(t)
		cfg.Store = e.db
	} else {
		e.db = cfg.Store.(*sqlite.DB)
	}
	e.db.Now = func() time.Time { return e.now }
	cfg.Now = func() time.Time { return e.now }
	wireOptional(&cfg, e.db)
	if cfg.TZ == "" {
		cfg.TZ = "Asia/Shanghai"
	}
	cfg.Logger = slog.New(slog.NewTextHandler(&syncWriter{b: e.logs}, nil))
	core, err := bot.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.core = core
	return e
}

type syncWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// wireOptional turns on the optional features as cmd/gpuledger does: the
// store keeps policies and token records, and an AgentTokens that is the
// hub's token service is also told of rental changes and gives agent
// states.
func wireOptional(cfg *bot.Config, db *sqlite.DB) {
	if cfg.AutoPolicies == nil {
		cfg.AutoPolicies = db
	}
	if cfg.TokenRecords == nil {
		cfg.TokenRecords = db
	}
	if w, ok := cfg.AgentTokens.(bot.RentalWatcher); ok && cfg.Rentals == nil {
		cfg.Rentals = w
	}
	if st, ok := cfg.AgentTokens.(bot.AgentStates); ok && cfg.AgentStates == nil {
		cfg.AgentStates = st
	}
}

// update returns a private text update from user with a fresh key.
func (e *env) update(user int64, text string) chat.Update {
	return chat.Update{Key: fmt.Sprintf("test:%d", keySeq.Add(1)), Kind: chat.KindText, UserID: user, ChatID: user,
		ChatType: chat.ChatPrivate, Text: text}
}

// handle runs u and returns the texts sent.
func (e *env) handle(u chat.Update) []testkit.Sent {
	e.t.Helper()
	if err := e.core.Handle(context.Background(), u, e.rec); err != nil {
		e.t.Fatalf("Handle(%q): %v", u.Text, err)
	}
	return e.rec.Take()
}

// say sends text as user in a private chat and returns the single reply.
func (e *env) say(user int64, text string) string {
	e.t.Helper()
	out := e.handle(e.update(user, text))
	if len(out) != 1 {
		e.t.Fatalf("%q: want 1 reply, got %d: %+v", text, len(out), out)
	}
	return out[0].Out.Text
}

func (e *env) book(user int64) *ledger.Book {
	e.t.Helper()
	b, err := e.db.Book(context.Background(), user)
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

func contains(t *testing.T, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("reply %q does not contain %q", got, w)
		}
	}
}

const alice, bob, mallory = 1001, 1002, 6666

func TestCore_RentLifecycle(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice, bob}})
	got := e.say(alice, "/rent box1 autodl 4090 1.88/h")
	contains(t, got, "✓", "box1", "started 10:00", "¥1.88/h", "per-second", "autodl")
	b := e.book(alice)
	if len(b.Rentals) != 1 || b.Rentals[0].Currency != ledger.CNY || b.Rentals[0].Mode != ledger.PerSecond || !b.Rentals[0].Priced {
		t.Fatalf("rental = %+v", b.Rentals)
	}

	e.now = t0.Add(2*time.Hour + 5*time.Minute)
	got = e.say(alice, "/stop box1")
	contains(t, got, "box1", "stopped", "2h05m", "¥3.92")
	if st := e.book(alice).Rentals[0].State(); st != ledger.Stopped {
		t.Fatalf("state = %s", st)
	}

	e.now = e.now.Add(time.Hour)
	contains(t, e.say(alice, "/resume box1"), "resumed")
	e.now = e.now.Add(time.Hour)
	contains(t, e.say(alice, "/status"), "box1", "running", "¥1.88/h")
	contains(t, e.say(alice, "/release box1"), "released", "3h05m", "¥5.80")
	if st := e.book(alice).Rentals[0].State(); st != ledger.Released {
		t.Fatalf("state = %s", st)
	}
	contains(t, e.say(alice, "/undo"), "undone", "release", "box1")
	if st := e.book(alice).Rentals[0].State(); st != ledger.Running {
		t.Fatalf("after undo state = %s", st)
	}
	// Bob sees none of it, and cannot touch it.
	contains(t, e.say(bob, "/status"), "No rentals")
	contains(t, e.say(bob, "/stop box1"), "✗")
	if st := e.book(alice).Rentals[0].State(); st != ledger.Running {
		t.Fatalf("bob changed alice's rental: %s", st)
	}
}

func TestCore_Chinese(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	u := e.update(alice, "/rent box1 autodl 4090 1.88元/小时 按秒")
	u.LangCode = "zh-hans"
	out := e.handle(u)
	if len(out) != 1 {
		t.Fatalf("replies = %+v", out)
	}
	contains(t, out[0].Out.Text, "已开始计费", "¥1.88/小时", "按秒")
	if b := e.book(alice); b.User.Lang != "zh" || len(b.Rentals) != 1 {
		t.Fatalf("user %+v rentals %d", b.User, len(b.Rentals))
	}
	e.now = t0.Add(30 * time.Minute)
	contains(t, e.say(alice, "/stop box1"), "已关机", "30分钟", "¥0.94")
	contains(t, e.say(alice, "/stop box1"), "✗", "与现状冲突", "没有做任何修改")
	contains(t, e.say(alice, "/settings lang=en"), "settings saved", "lang=en")
	contains(t, e.say(alice, "/status"), "stopped")
}

func TestCore_BadInputChangesNothing(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	for _, tc := range []struct{ in, want string }{
		{"/rent box1 autodl 4090 abc", "Example: /rent"},
		{"/foo bar", "unknown command /foo — /help lists them"},
		{"/stop nosuch", "no rental named nosuch"},
		{"hello there", "Commands start with /"},
		{"/rent " + strings.Repeat("x", 10000), "too long"},
		{strings.Repeat("租", 10000), "didn't understand"},
		{"/rent box<b>1 autodl 4090 1.88", "&lt;b&gt;"},
		{"/stop ‮1xob", "✗"},
		{"🚀🚀 /status", "didn't understand"},
	} {
		got := e.say(alice, tc.in)
		contains(t, got, tc.want)
		if len(got) > 4096 {
			t.Errorf("%q: reply of %d bytes", tc.in[:10], len(got))
		}
	}
	if b := e.book(alice); len(b.Rentals)+len(b.Volumes)+len(b.Charges) != 0 {
		t.Fatalf("bad input wrote: %+v", b)
	}
}

func TestCore_Redelivery(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	u := e.update(alice, "/rent box1 autodl 4090 1.88/h")
	if out := e.handle(u); len(out) != 1 {
		t.Fatalf("first delivery: %+v", out)
	}
	if out := e.handle(u); len(out) != 0 {
		t.Fatalf("second delivery answered again: %+v", out)
	}
	q := e.update(alice, "/status")
	e.handle(q)
	if out := e.handle(q); len(out) != 0 {
		t.Fatalf("question answered twice: %+v", out)
	}
	bad := e.update(alice, "/stop nosuch")
	e.handle(bad)
	if out := e.handle(bad); len(out) != 0 {
		t.Fatalf("error answered twice: %+v", out)
	}
	if n := len(e.book(alice).Rentals); n != 1 {
		t.Fatalf("%d rentals", n)
	}
}

func TestCore_Strangers(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	contains(t, e.say(mallory, "/status"), "private bot")
	for _, s := range []string{"/status", "/rent x autodl 4090 1", "hello"} {
		if out := e.handle(e.update(mallory, s)); len(out) != 0 {
			t.Fatalf("second refusal: %+v", out)
		}
	}
	// A restart keeps the silence.
	core2, err := bot.New(context.Background(), bot.Config{Store: e.db, AllowedUsers: []int64{alice}, Now: func() time.Time { return e.now }})
	if err != nil {
		t.Fatal(err)
	}
	if err := core2.Handle(context.Background(), e.update(mallory, "/status"), e.rec); err != nil {
		t.Fatal(err)
	}
	if out := e.rec.Take(); len(out) != 0 {
		t.Fatalf("refused again after restart: %+v", out)
	}
	if _, err := e.db.User(context.Background(), mallory); ledger.ErrorCode(err) != ledger.ENOTFOUND {
		t.Fatalf("stranger registered: %v", err)
	}
}

func TestCore_OwnerClaim(t *testing.T) {
	db := openStore(t)
	e := newEnv(t, bot.Config{Store: db})
	code := e.core.ClaimCode()
	if code == "" || !e.core.WaitingForClaim() {
		t.Fatalf("no claim code: %q", code)
	}
	contains(t, e.say(bob, "/start wrongcode"), "claim code is wrong")
	contains(t, e.say(bob, "/status"), "/start CODE")
	if out := e.handle(e.update(bob, "/status")); len(out) != 0 {
		t.Fatalf("refused twice: %+v", out)
	}
	// A restart keeps the same code (stored hashed) and prints none.
	e2 := newEnv(t, bot.Config{Store: db})
	if e2.core.ClaimCode() != "" {
		t.Fatal("restart printed a new code")
	}
	contains(t, e2.say(alice, "/start "+strings.ToUpper(code)), "owner")
	contains(t, e2.say(alice, "/rent box1 autodl 4090 1.88"), "✓")
	if e2.core.WaitingForClaim() {
		t.Fatal("still waiting after the claim")
	}
	// The code works once.
	if out := e2.handle(e2.update(bob, "/start "+code)); len(out) != 0 {
		t.Fatalf("second claim answered: %+v", out)
	}
	e3 := newEnv(t, bot.Config{Store: db})
	contains(t, e3.say(alice, "/status"), "box1")
	if v, _, _ := db.Meta(context.Background(), "owner"); v != fmt.Sprint(alice) {
		t.Fatalf("owner meta = %q", v)
	}
}

func TestCore_ConsoleOwner(t *testing.T) {
	e := newEnv(t, bot.Config{Owner: 1})
	if e.core.ClaimCode() != "" {
		t.Fatal("console needs no claim code")
	}
	u := e.update(1, "/rent box1 myhost 4090 0.5")
	u.Key = ""
	out := e.handle(u)
	contains(t, out[0].Out.Text, "box1", "$0.50/h", "currency USD assumed")
}

func TestCore_OtherUpdates(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/rent box1 autodl 4090 1.88/h")
	sticker := chat.Update{Key: "k:st", Kind: chat.KindOther, UserID: alice, ChatID: alice, ChatType: chat.ChatPrivate}
	contains(t, e.handle(sticker)[0].Out.Text, "text only")
	groupSticker := chat.Update{Key: "k:gst", Kind: chat.KindOther, UserID: alice, ChatID: -5, ChatType: chat.ChatGroup}
	edited := chat.Update{Key: "k:ed", Kind: chat.KindText, UserID: alice, ChatID: alice, ChatType: chat.ChatPrivate, Text: "/release box1", Edited: true}
	channel := chat.Update{Key: "k:ch", Kind: chat.KindText, ChatID: -100, ChatType: chat.ChatChannel, Text: "/release box1"}
	groupChat := chat.Update{Key: "k:gc", Kind: chat.KindText, UserID: alice, ChatID: -5, ChatType: chat.ChatGroup, Text: "rented a 4090 on vast at $0.70/h lol"}
	for _, u := range []chat.Update{groupSticker, edited, channel, groupChat} {
		if out := e.handle(u); len(out) != 0 {
			t.Errorf("%+v answered: %+v", u, out)
		}
	}
	fw := e.update(alice, "/release box1")
	fw.Forwarded = true
	contains(t, e.handle(fw)[0].Out.Text, "not executed")
	if st := e.book(alice).Rentals[0].State(); st != ledger.Running {
		t.Fatalf("state = %s", st)
	}
	// A question in a group reads the sender's own ledger; the answer goes
	// to the sender's private chat and the group hears only where it went.
	g := chat.Update{Key: "k:g", Kind: chat.KindText, UserID: alice, ChatID: -5, ChatType: chat.ChatGroup, Text: "/status@fake_bot"}
	out := e.handle(g)
	if len(out) != 2 || out[0].Out.ChatID != alice || out[1].Out.ChatID != -5 {
		t.Fatalf("group question: %+v; want the answer to %d, then a note to the group", out, alice)
	}
	contains(t, out[0].Out.Text, "box1")
	contains(t, out[1].Out.Text, "privately")
	if strings.Contains(out[1].Out.Text, "box1") || strings.Contains(out[1].Out.Text, "¥") {
		t.Errorf("the group note shows the ledger: %q", out[1].Out.Text)
	}
}

func press(e *env, user, chatID int64, msgID int, data string) []testkit.Sent {
	return e.handle(chat.Update{Key: fmt.Sprintf("test:%d", keySeq.Add(1)), Kind: chat.KindCallback, UserID: user, ChatID: chatID,
		ChatType: chat.ChatPrivate, CallbackID: "cb", CallbackData: data, MessageID: msgID})
}

func TestCore_ProposalButtons(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice, bob}})
	out := e.handle(e.update(alice, "rented 2x4090 on vast at $0.70/h"))
	if len(out) != 1 || len(out[0].Out.Buttons) != 1 || len(out[0].Out.Buttons[0]) != 3 {
		t.Fatalf("proposal: %+v", out)
	}
	contains(t, out[0].Out.Text, "/rent box1 vast 2xRTX4090 0.7/h currency=USD")
	btn := out[0].Out.Buttons[0]
	for _, b := range btn {
		if len(b.Data) > 64 {
			t.Fatalf("button data %q is %d bytes", b.Data, len(b.Data))
		}
	}
	confirm := btn[0].Data
	// Someone else's press, and altered data, change nothing.
	got := press(e, bob, alice, 1, confirm)
	if len(got) != 1 || !got[0].IsAnswer || !strings.Contains(got[0].Callback, "not yours") {
		t.Fatalf("bob's press: %+v", got)
	}
	forged := []byte(confirm)
	forged[3] ^= 1
	got = press(e, alice, alice, 1, string(forged))
	if len(got) != 1 || !strings.Contains(got[0].Callback, "not yours") {
		t.Fatalf("forged press: %+v", got)
	}
	press(e, alice, alice, 1, "pc:1:AAAAAAAAAAAAAAAA")
	if n := len(e.book(alice).Rentals) + len(e.book(bob).Rentals); n != 0 {
		t.Fatalf("%d rentals after rejected presses", n)
	}
	// Alice confirms: the message is edited in place, the rental exists.
	got = press(e, alice, alice, 1, confirm)
	var edit *chat.Outgoing
	for _, s := range got {
		if !s.IsAnswer {
			edit = &s.Out
		}
	}
	if edit == nil || edit.EditMessageID != 1 || edit.Buttons != nil {
		t.Fatalf("confirm: %+v", got)
	}
	contains(t, edit.Text, "✓", "box1", "2×RTX 4090", "$0.70/h")
	b := e.book(alice)
	if len(b.Rentals) != 1 || b.Rentals[0].GPUCount != 2 || b.Rentals[0].Currency != ledger.USD || !b.Rentals[0].StartedAt().Equal(t0) {
		t.Fatalf("rentals = %+v", b.Rentals[0])
	}
	// A second press finds the proposal used.
	got = press(e, alice, alice, 1, confirm)
	if len(e.book(alice).Rentals) != 1 {
		t.Fatal("second confirm created another rental")
	}
	contains(t, got[len(got)-1].Out.Text, "expired or was already answered")

	// Edit and Cancel.
	out = e.handle(e.update(alice, "租了一台4090 1.88元/小时 autodl"))
	contains(t, out[0].Out.Text, "/rent box2 autodl RTX4090 1.88/h currency=CNY")
	got = press(e, alice, alice, 2, out[0].Out.Buttons[0][1].Data)
	contains(t, got[len(got)-1].Out.Text, "Copy, change and send", "/rent box2")
	out = e.handle(e.update(alice, "rented a 4090 on runpod $0.4/h"))
	got = press(e, alice, alice, 3, out[0].Out.Buttons[0][2].Data)
	contains(t, got[len(got)-1].Out.Text, "Cancelled")
	if n := len(e.book(alice).Rentals); n != 1 {
		t.Fatalf("%d rentals after edit/cancel", n)
	}
}

func TestCore_Money(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/rent box1 autodl 4090 1.88/h")
	contains(t, e.say(alice, "/storage data1 200GB 0.0066/GB/day free=50GB rental=box1"), "data1", "200GB", "box1")
	contains(t, e.say(alice, "/traffic box1 price=0.8/GB free=100GB"), "box1", "0.80")
	contains(t, e.say(alice, "/traffic box1 120GB out"), "120GB")
	contains(t, e.say(alice, "/charge box1 5 image fee"), "¥5.00", "image fee")
	contains(t, e.say(alice, "/topup autodl 100"), "¥100.00")
	contains(t, e.say(alice, "/balance autodl 80"), "¥80.00")
	contains(t, e.say(alice, "/budget 3000/month"), "¥3000.00")
	e.now = t0.Add(10 * time.Hour)
	contains(t, e.say(alice, "/spend today"), "compute ¥18.80", "storage ¥0.41", "traffic ¥16.00", "other ¥5.00", "by platform: autodl", "by rental: box1")
	contains(t, e.say(alice, "/summary"), "Today", "Month to date", "Budget", "Running: 1", "¥1.88/h", "autodl: ")
	contains(t, e.say(alice, "/balance"), "autodl", "runs out")
	contains(t, e.say(alice, "/storage data1 delete"), "deleted")
	b := e.book(alice)
	if len(b.Volumes) != 1 || len(b.Charges) != 1 || len(b.TopUps) != 1 || len(b.Balances) != 1 || len(b.User.Budgets) != 1 || b.User.Budgets[0].Amount.String() != "3000" {
		t.Fatalf("book = %+v", b)
	}
	if _, deleted := b.Volumes[0].Deleted(); !deleted {
		t.Fatal("volume not deleted")
	}
	contains(t, e.say(alice, "/undo"), "volume deletion", "data1")
	if _, deleted := e.book(alice).Volumes[0].Deleted(); deleted {
		t.Fatal("undo left the volume deleted")
	}
	out := e.handle(e.update(alice, "/export"))
	if len(out) != 1 || out[0].Out.Document == nil || !strings.HasPrefix(string(out[0].Out.Document.Data), "record,name") {
		t.Fatalf("export: %+v", out)
	}
	out = e.handle(e.update(alice, "/export json"))
	if len(out) != 1 || out[0].Out.Document == nil || !strings.Contains(string(out[0].Out.Document.Data), `"rentals"`) {
		t.Fatalf("export json: %+v", out)
	}
}

func TestCore_UnpricedAndAgent(t *testing.T) {
	e := newEnv(t, bot.Config{AllowedUsers: []int64{alice}})
	e.say(alice, "/rent box1 autodl 4090 1.88/h")
	e.say(alice, "/storage scratch 100GB")
	e.now = t0.Add(time.Hour)
	contains(t, e.say(alice, "/status"), "scratch", "UNPRICED")
	contains(t, e.say(alice, "/spend"), "UNPRICED")
	contains(t, e.say(alice, "/agent box1"), "agent hub is not running")
	contains(t, e.say(alice, "/help"), "/rent", "/status")
	contains(t, e.say(alice, "/why box1"), "No automatic decisions")
	contains(t, e.say(alice, "/autorelease box1 stop after 45m"), "box1", "stop", "45m")
	x := e.book(alice).Rental("box1")
	p, err := e.db.AutoPolicy(context.Background(), x.ID)
	if err != nil || p.Action != ledger.AutoStop || p.After != 45*time.Minute {
		t.Fatalf("policy = %+v, %v", p, err)
	}
	if _, err := e.db.AddDecision(context.Background(), ledger.Decision{UserID: alice, RentalID: x.ID, At: e.now, Kind: ledger.DecisionWarn,
		Summary: "idle card shown", Evidence: "idle 41m <no job>"}); err != nil {
		t.Fatal(err)
	}
	contains(t, e.say(alice, "/why box1"), "idle card shown", "&lt;no job&gt;")
	contains(t, e.say(alice, "/autorelease nosuch stop"), "✗")
}
