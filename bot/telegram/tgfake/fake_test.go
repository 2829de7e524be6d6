package tgfake_test

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
)

const token = "123456:SECRET-token"

func newBot(t *testing.T, fake *tgfake.Server) *tgbotapi.BotAPI {
	t.Helper()
	api, err := tgbotapi.NewBotAPIWithAPIEndpoint(fake.Token(), fake.Endpoint())
	if err != nil {
		t.Fatalf("NewBotAPIWithAPIEndpoint: %v", err)
	}
	if api.Self.UserName != tgfake.BotUsername {
		t.Fatalf("getMe username = %q", api.Self.UserName)
	}
	return api
}

func TestServer_GetUpdates(t *testing.T) {
	fake := tgfake.New(t, token)
	api := newBot(t, fake)

	id1 := fake.SendText(1, 1, "/status")
	id2 := fake.PressButton(2, -5, 9, "confirm")
	ups, err := api.GetUpdates(tgbotapi.UpdateConfig{Timeout: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(ups) != 2 || ups[0].UpdateID != id1 || ups[1].UpdateID != id2 {
		t.Fatalf("updates = %+v", ups)
	}
	if !ups[0].Message.IsCommand() || ups[0].Message.Command() != "status" {
		t.Errorf("first update is not the /status command: %+v", ups[0].Message)
	}
	cb := ups[1].CallbackQuery
	if cb == nil || cb.From.ID != 2 || cb.Data != "confirm" || cb.Message.Chat.Type != "group" {
		t.Errorf("callback = %+v", cb)
	}

	// Without confirming, the same updates come again.
	again, err := api.GetUpdates(tgbotapi.UpdateConfig{Timeout: 1})
	if err != nil || len(again) != 2 {
		t.Fatalf("redelivery: %d updates, %v", len(again), err)
	}
	// Offset id2 confirms id1 only.
	rest, err := api.GetUpdates(tgbotapi.UpdateConfig{Offset: id2, Timeout: 1})
	if err != nil || len(rest) != 1 || rest[0].UpdateID != id2 {
		t.Fatalf("after offset %d: %+v, %v", id2, rest, err)
	}
	if fake.Confirmed() != id2 || fake.Pending() != 1 {
		t.Errorf("confirmed %d pending %d", fake.Confirmed(), fake.Pending())
	}

	// An empty queue holds the request until an update arrives.
	go func() {
		time.Sleep(100 * time.Millisecond)
		fake.SendSticker(1, 1)
	}()
	start := time.Now()
	held, err := api.GetUpdates(tgbotapi.UpdateConfig{Offset: id2 + 1, Timeout: 5})
	if err != nil || len(held) != 1 || held[0].Message.Sticker == nil {
		t.Fatalf("held poll: %+v, %v", held, err)
	}
	if d := time.Since(start); d < 80*time.Millisecond || d > 3*time.Second {
		t.Errorf("held poll returned after %v", d)
	}
	// And answers empty at the timeout.
	start = time.Now()
	none, err := api.GetUpdates(tgbotapi.UpdateConfig{Offset: held[0].UpdateID + 1, Timeout: 1})
	if err != nil || len(none) != 0 || time.Since(start) < 900*time.Millisecond {
		t.Fatalf("timeout poll: %+v, %v after %v", none, err, time.Since(start))
	}
}

func TestServer_SendAndEdit(t *testing.T) {
	fake := tgfake.New(t, token)
	api := newBot(t, fake)

	m := tgbotapi.NewMessage(7, "<b>box1</b> started &amp; running")
	m.ParseMode = tgbotapi.ModeHTML
	m.ReplyMarkup = tgbotapi.NewInlineKeyboardMarkup(tgbotapi.NewInlineKeyboardRow(
		tgbotapi.NewInlineKeyboardButtonData("Confirm", "c:1"), tgbotapi.NewInlineKeyboardButtonData("Cancel", "x:1")))
	sent, err := api.Send(m)
	if err != nil {
		t.Fatal(err)
	}
	edit := tgbotapi.NewEditMessageText(7, sent.MessageID, "<b>box1</b> confirmed")
	edit.ParseMode = tgbotapi.ModeHTML
	if _, err := api.Send(edit); err != nil {
		t.Fatal(err)
	}
	_, err = api.Send(edit)
	var tgErr *tgbotapi.Error
	if !errors.As(err, &tgErr) || !strings.Contains(tgErr.Message, "message is not modified") {
		t.Errorf("identical edit: err = %v, want message is not modified", err)
	}
	msgs := fake.Messages(7)
	if len(msgs) != 1 {
		t.Fatalf("messages = %+v", msgs)
	}
	got := msgs[0]
	if got.Text != "<b>box1</b> confirmed" || len(got.History) != 1 || got.History[0] != "<b>box1</b> started &amp; running" || got.Buttons != nil {
		t.Errorf("edited message = %+v", got)
	}

	bad := []struct {
		name, text, want string
	}{
		{"unclosed", "<b>x", "can't parse entities"},
		{"unsupported", "<div>x</div>", "can't parse entities"},
		{"bare lt", "1 < 2", "can't parse entities"},
		{"misnested", "<b><i>x</b></i>", "can't parse entities"},
		{"too long", strings.Repeat("é", 4097), "message is too long"},
		{"empty", " ", "message text is empty"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			m := tgbotapi.NewMessage(7, tc.text)
			m.ParseMode = tgbotapi.ModeHTML
			_, err := api.Send(m)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	long := tgbotapi.NewMessage(7, "x")
	long.ReplyMarkup = tgbotapi.NewInlineKeyboardMarkup(tgbotapi.NewInlineKeyboardRow(
		tgbotapi.NewInlineKeyboardButtonData("B", strings.Repeat("d", 65))))
	if _, err := api.Send(long); err == nil || !strings.Contains(err.Error(), "BUTTON_DATA_INVALID") {
		t.Errorf("65-byte callback data: err = %v", err)
	}
}

func TestServer_Files(t *testing.T) {
	fake := tgfake.New(t, token)
	api := newBot(t, fake)
	data := []byte("a,b\n1,2\n\x00\xff")
	doc := tgbotapi.NewDocument(3, tgbotapi.FileBytes{Name: "ledger.csv", Bytes: data})
	doc.Caption = "<i>export</i>"
	doc.ParseMode = tgbotapi.ModeHTML
	if _, err := api.Send(doc); err != nil {
		t.Fatal(err)
	}
	photo := tgbotapi.NewPhoto(3, tgbotapi.FileBytes{Name: "chart.png", Bytes: []byte("\x89PNG")})
	if _, err := api.Send(photo); err != nil {
		t.Fatal(err)
	}
	msgs := fake.Messages(3)
	if len(msgs) != 2 || msgs[0].Document == nil || !bytes.Equal(msgs[0].Document.Data, data) || msgs[0].Document.Name != "ledger.csv" || msgs[0].Text != "<i>export</i>" {
		t.Fatalf("document = %+v", msgs)
	}
	if msgs[1].Photo == nil || string(msgs[1].Photo.Data) != "\x89PNG" {
		t.Errorf("photo = %+v", msgs[1])
	}
}

func TestServer_Failures(t *testing.T) {
	fake := tgfake.New(t, token)
	api := newBot(t, fake)
	fake.FailNext(1, 429, 3)
	_, err := api.Send(tgbotapi.NewMessage(1, "hi"))
	var tgErr *tgbotapi.Error
	if !errors.As(err, &tgErr) || tgErr.Code != 429 || tgErr.RetryAfter != 3 {
		t.Fatalf("err = %#v, want 429 retry_after 3", err)
	}
	if _, err := api.Send(tgbotapi.NewMessage(1, "hi")); err != nil {
		t.Fatalf("after the injected failure: %v", err)
	}
	fake.FailMethod("answerCallbackQuery", 1, 500, 0)
	if _, err := api.Send(tgbotapi.NewMessage(1, "hi again")); err != nil {
		t.Fatalf("failure for another method hit sendMessage: %v", err)
	}

	fake.SetDown(true)
	if _, err := api.GetMe(); err == nil {
		t.Fatal("getMe succeeded while down")
	}
	fake.SetDown(false)
	if _, err := api.GetMe(); err != nil {
		t.Fatalf("getMe after the outage: %v", err)
	}

	wrong, err := tgbotapi.NewBotAPIWithAPIEndpoint("1:wrong", fake.Endpoint())
	if err == nil || wrong != nil || !strings.Contains(err.Error(), "Unauthorized") {
		t.Errorf("wrong token: %v", err)
	}
}

func TestServer_Commands(t *testing.T) {
	fake := tgfake.New(t, token)
	api := newBot(t, fake)
	cfg := tgbotapi.NewSetMyCommands(tgbotapi.BotCommand{Command: "status", Description: "Running rentals"})
	if _, err := api.Request(cfg); err != nil {
		t.Fatal(err)
	}
	cfg = tgbotapi.NewSetMyCommands(tgbotapi.BotCommand{Command: "status", Description: "运行中的租用"})
	cfg.LanguageCode = "zh"
	if _, err := api.Request(cfg); err != nil {
		t.Fatal(err)
	}
	if got := fake.Commands(""); len(got) != 1 || got[0].Description != "Running rentals" {
		t.Errorf("default commands = %+v", got)
	}
	if got := fake.Commands("zh"); len(got) != 1 || got[0].Description != "运行中的租用" {
		t.Errorf("zh commands = %+v", got)
	}
	bad := tgbotapi.NewSetMyCommands(tgbotapi.BotCommand{Command: "Bad-Name", Description: "x"})
	if _, err := api.Request(bad); err == nil {
		t.Error("invalid command name accepted")
	}
}

func TestClient_ControlAPI(t *testing.T) {
	fake := tgfake.New(t, token)
	api := newBot(t, fake)
	c := tgfake.NewClient(fake.URL(), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	id, err := c.SendText(ctx, 5, 5, "hello")
	if err != nil {
		t.Fatal(err)
	}
	ups, err := api.GetUpdates(tgbotapi.UpdateConfig{Timeout: 1})
	if err != nil || len(ups) != 1 || ups[0].UpdateID != id || ups[0].Message.Text != "hello" {
		t.Fatalf("updates %+v, %v", ups, err)
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		_, _ = api.Send(tgbotapi.NewMessage(5, "hi there"))
	}()
	msgs, err := c.WaitMessages(ctx, 5, 1)
	if err != nil || len(msgs) != 1 || msgs[0].Text != "hi there" {
		t.Fatalf("messages %+v, %v", msgs, err)
	}
	if _, err := c.PressButton(ctx, 5, 5, msgs[0].ID, "ok"); err != nil {
		t.Fatal(err)
	}
	if err := c.FailNext(ctx, "sendMessage", 1, 502, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := api.Send(tgbotapi.NewMessage(5, "x")); err == nil {
		t.Error("injected 502 through the control API did not fail the call")
	}
	st, err := c.State(ctx)
	if err != nil || st.Pending != 2 || st.Calls["sendMessage"] != 2 {
		t.Errorf("state %+v, %v", st, err)
	}
	if _, err := c.SendText(ctx, 0, 0, ""); err == nil || !strings.Contains(err.Error(), "user_id") {
		t.Errorf("bad send: %v", err)
	}
}

func TestServer_Conflict(t *testing.T) {
	fake := tgfake.New(t, token)
	api := newBot(t, fake)
	errc := make(chan error, 1)
	go func() {
		_, err := api.GetUpdates(tgbotapi.UpdateConfig{Timeout: 5})
		errc <- err
	}()
	time.Sleep(100 * time.Millisecond)
	if _, err := api.GetUpdates(tgbotapi.UpdateConfig{Timeout: 1}); err != nil {
		t.Fatal(err)
	}
	err := <-errc
	var tgErr *tgbotapi.Error
	if !errors.As(err, &tgErr) || tgErr.Code != 409 {
		t.Errorf("older poll: err = %v, want 409", err)
	}
}

func TestServe_Binary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the tgfake-server binary; run without -short")
	}
	bin := t.TempDir() + "/tgfake-server"
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/tgfake-server").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-token", token)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	buf := make([]byte, 200)
	n, err := stdout.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSpace(string(buf[:n]))
	endpoint, ok := strings.CutPrefix(line, "TELEGRAM_API_ENDPOINT=")
	if !ok {
		t.Fatalf("first line = %q", line)
	}
	api, err := tgbotapi.NewBotAPIWithAPIEndpoint(token, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	c := tgfake.NewClient(strings.TrimSuffix(endpoint, "/bot%s/%s"), nil)
	if _, err := c.SendText(context.Background(), 9, 9, "/start"); err != nil {
		t.Fatal(err)
	}
	ups, err := api.GetUpdates(tgbotapi.UpdateConfig{Timeout: 1})
	if err != nil || len(ups) != 1 || ups[0].Message.Text != "/start" {
		t.Fatalf("updates %+v, %v", ups, err)
	}
}

func TestServer_DeleteMessage(t *testing.T) {
	fake := tgfake.New(t, token)
	api := newBot(t, fake)

	fake.SendText(1, 1, "/connect runpod rpa_SECRETKEY0001")
	ups, err := api.GetUpdates(tgbotapi.UpdateConfig{Timeout: 1})
	if err != nil || len(ups) != 1 {
		t.Fatalf("updates = %+v, %v", ups, err)
	}
	id := ups[0].Message.MessageID
	if _, err := api.Request(tgbotapi.NewDeleteMessage(1, id)); err != nil {
		t.Fatalf("deleteMessage: %v", err)
	}
	if got := fake.Deleted(1); len(got) != 1 || got[0] != id {
		t.Errorf("Deleted(1) = %v, want [%d]", got, id)
	}
	t.Run("ErrNotFound", func(t *testing.T) {
		for _, mid := range []int{id, id + 50} { // deleted already; never sent
			_, err := api.Request(tgbotapi.NewDeleteMessage(1, mid))
			if err == nil || !strings.Contains(err.Error(), "message to delete not found") {
				t.Errorf("deleting message %d: %v, want 'message to delete not found'", mid, err)
			}
		}
		if got := fake.Deleted(1); len(got) != 1 {
			t.Errorf("a failed delete was recorded: %v", got)
		}
	})
	t.Run("BotMessage", func(t *testing.T) {
		m, err := api.Send(tgbotapi.NewMessage(1, "hello"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := api.Request(tgbotapi.NewDeleteMessage(1, m.MessageID)); err != nil {
			t.Fatal(err)
		}
		if n := len(fake.Messages(1)); n != 0 {
			t.Errorf("the bot's deleted message is still listed: %d messages", n)
		}
	})
}

// TestServer_Malformed: a text sent with fmt's error mark is kept for the
// check New registers (which fails the test); a plain percent is not.
func TestServer_Malformed(t *testing.T) {
	s, err := tgfake.Start("127.0.0.1:0", token) // no tb: this test reads Malformed itself
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	api := newBot(t, s)
	for _, text := range []string{"50% of the budget", "over: %!d(string=2) GPUs"} {
		if _, err := api.Send(tgbotapi.NewMessage(7, text)); err != nil {
			t.Fatal(err)
		}
	}
	got := s.Malformed()
	if len(got) != 1 || !strings.Contains(got[0], "sendMessage: over: %!d(string=2) GPUs") {
		t.Errorf("Malformed() = %q, want the one text with %%!", got)
	}
}
