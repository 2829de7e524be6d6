package tgfake_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
)

// TestServer_WebAppMarkup checks the fake refuses web-app buttons where
// Telegram does: in groups, to a URL that is not https, and a button with
// neither callback data nor a web app.
func TestServer_WebAppMarkup(t *testing.T) {
	fake := tgfake.New(t, token)
	api := newBot(t, fake)
	send := func(chatID int64, markup string) error {
		_, err := api.MakeRequest("sendMessage", tgbotapi.Params{"chat_id": strconv.FormatInt(chatID, 10), "text": "x", "reply_markup": markup})
		return err
	}
	ok := `{"inline_keyboard":[[{"text":"Open","web_app":{"url":"https://h.example/app/"}}],[{"text":"R","callback_data":"r"}]]}`
	if err := send(5, ok); err != nil {
		t.Fatalf("a web-app button in a private chat: %v", err)
	}
	if m := fake.Messages(5); len(m) != 1 || m[0].Buttons[0][0].WebApp != "https://h.example/app/" || m[0].Buttons[1][0].Data != "r" {
		t.Fatalf("recorded %+v", m)
	}
	for name, tc := range map[string]struct {
		chat   int64
		markup string
		want   string
	}{
		"Group":    {-100, ok, "BUTTON_TYPE_INVALID"},
		"HTTP":     {5, `{"inline_keyboard":[[{"text":"Open","web_app":{"url":"http://h.example/app/"}}]]}`, "Only HTTPS"},
		"Neither":  {5, `{"inline_keyboard":[[{"text":"Open"}]]}`, "text buttons are unallowed"},
		"Both":     {5, `{"inline_keyboard":[[{"text":"Open","callback_data":"x","web_app":{"url":"https://h/"}}]]}`, "exactly one"},
		"Relative": {5, `{"inline_keyboard":[[{"text":"Open","web_app":{"url":"/app/"}}]]}`, "Only HTTPS"},
	} {
		if err := send(tc.chat, tc.markup); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", name, err, tc.want)
		}
	}
}

func TestServer_SetChatMenuButton(t *testing.T) {
	fake := tgfake.New(t, token)
	api := newBot(t, fake)
	set := func(mb string) error {
		_, err := api.MakeRequest("setChatMenuButton", tgbotapi.Params{"menu_button": mb})
		return err
	}
	if _, ok := fake.Menu(); ok {
		t.Fatal("a menu button before any was set")
	}
	if _, err := tgfake.NewClient(fake.URL(), nil).Menu(context.Background()); err == nil {
		t.Error("control API: a menu button before any was set")
	}
	if err := set(`{"type":"web_app","text":"Dashboard","web_app":{"url":"https://h.example/app/"}}`); err != nil {
		t.Fatal(err)
	}
	if mb, _ := fake.Menu(); mb != (tgfake.MenuButton{Type: "web_app", Text: "Dashboard", URL: "https://h.example/app/"}) {
		t.Errorf("menu = %+v", mb)
	}
	for _, bad := range []string{`{"type":"web_app","text":"D","web_app":{"url":"http://h/"}}`, `{"type":"web_app","web_app":{"url":"https://h/"}}`, `{"type":"nope"}`, `not json`} {
		if err := set(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	c := tgfake.NewClient(fake.URL(), nil)
	if mb, err := c.Menu(context.Background()); err != nil || mb.URL != "https://h.example/app/" {
		t.Errorf("control API menu = %+v, %v", mb, err)
	}
	if err := set(`{"type":"commands"}`); err != nil {
		t.Fatal(err)
	}
	if mb, _ := fake.Menu(); mb.Type != "commands" {
		t.Errorf("menu = %+v, want commands", mb)
	}
}
