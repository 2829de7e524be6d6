package telegram_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/bot/telegram"
	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
	"github.com/gpuledger/gpuledger/chat"
)

const miniApp = "https://ledger.example/app/"

func dashRow() []chat.Button { return chat.DashboardRow("en", miniApp) }

// TestSend_WebAppButtons sends web-app buttons through the real library to
// the fake Bot API, which reads reply_markup as Telegram does.
func TestSend_WebAppButtons(t *testing.T) {
	ctx := context.Background()
	t.Run("Private", func(t *testing.T) {
		fake := tgfake.New(t, token)
		tr, _ := sender(t, fake, nil)
		rows := [][]chat.Button{{{Text: "Release", Data: "r:1"}}, dashRow()}
		if _, err := tr.Send(ctx, chat.Outgoing{ChatID: 5, Text: "<b>status</b>", Buttons: rows}); err != nil {
			t.Fatal(err)
		}
		m := fake.Messages(5)
		if len(m) != 1 || len(m[0].Buttons) != 2 {
			t.Fatalf("messages = %+v", m)
		}
		if b := m[0].Buttons[0][0]; b.Data != "r:1" || b.WebApp != "" {
			t.Errorf("callback button = %+v", b)
		}
		if b := m[0].Buttons[1][0]; b.WebApp != miniApp || b.Text != "📊 Open dashboard" || b.Data != "" {
			t.Errorf("web-app button = %+v, want one opening %s", b, miniApp)
		}
		if !m[0].NoPreview {
			t.Error("sent with a link preview")
		}
	})
	t.Run("GroupDropsWebApp", func(t *testing.T) {
		fake := tgfake.New(t, token)
		tr, logs := sender(t, fake, nil)
		const group = -100123
		rows := [][]chat.Button{{{Text: "Release", Data: "r:1"}}, dashRow()}
		if _, err := tr.Send(ctx, chat.Outgoing{ChatID: group, Text: "note", Buttons: rows}); err != nil {
			t.Fatalf("send to a group: %v", err)
		}
		if _, err := tr.Send(ctx, chat.Outgoing{ChatID: group, Text: "only the app", Buttons: [][]chat.Button{dashRow()}}); err != nil {
			t.Fatalf("send to a group: %v", err)
		}
		m := fake.Messages(group)
		if len(m) != 2 || len(m[0].Buttons) != 1 || m[0].Buttons[0][0].Data != "r:1" || m[1].Buttons != nil {
			t.Fatalf("group messages = %+v, want the callback button only", m)
		}
		if !strings.Contains(logs.String(), "web-app button dropped") || !strings.Contains(logs.String(), "level=DEBUG") {
			t.Errorf("the drop was not logged at debug:\n%s", logs)
		}
	})
	t.Run("Edit", func(t *testing.T) {
		fake := tgfake.New(t, token)
		tr, _ := sender(t, fake, nil)
		id, err := tr.Send(ctx, chat.Outgoing{ChatID: 5, Text: "idle 30m", Buttons: [][]chat.Button{{{Text: "Release", Data: "r"}}}})
		if err != nil {
			t.Fatal(err)
		}
		rows := [][]chat.Button{{{Text: "Release", Data: "r"}}, dashRow()}
		if got, err := tr.Send(ctx, chat.Outgoing{ChatID: 5, EditMessageID: id, Text: "<b>idle</b> 45m", Buttons: rows}); err != nil || got != id {
			t.Fatalf("edit = %d, %v", got, err)
		}
		m := fake.Messages(5)
		if len(m) != 1 || m[0].Text != "<b>idle</b> 45m" || m[0].ParseMode != "HTML" || len(m[0].Buttons) != 2 || m[0].Buttons[1][0].WebApp != miniApp {
			t.Fatalf("edited card = %+v", m)
		}
		// Unchanged: Telegram's "message is not modified" is a success.
		if got, err := tr.Send(ctx, chat.Outgoing{ChatID: 5, EditMessageID: id, Text: "<b>idle</b> 45m", Buttons: rows}); err != nil || got != id {
			t.Errorf("unchanged edit = %d, %v", got, err)
		}
		// Bad HTML falls back to plain text, the buttons kept.
		if _, err := tr.Send(ctx, chat.Outgoing{ChatID: 5, EditMessageID: id, Text: "<b>idle 50m", Buttons: rows}); err != nil {
			t.Fatal(err)
		}
		if m := fake.Messages(5); m[0].Text != "idle 50m" || m[0].ParseMode != "" || len(m[0].Buttons) != 2 {
			t.Errorf("plain fallback = %+v", m[0])
		}
	})
	t.Run("Photo", func(t *testing.T) {
		fake := tgfake.New(t, token)
		tr, _ := sender(t, fake, nil)
		if _, err := tr.Send(ctx, chat.Outgoing{ChatID: 5, Text: "chart", Photo: &chat.File{Name: "c.png", Data: []byte("png")}, Buttons: [][]chat.Button{dashRow()}}); err != nil {
			t.Fatal(err)
		}
		if m := fake.Messages(5); len(m) != 1 || len(m[0].Buttons) != 1 || m[0].Buttons[0][0].WebApp != miniApp {
			t.Errorf("photo = %+v", m)
		}
	})
}

// TestTransport_MenuButton: the menu button opens the Mini App when
// MenuApp is set, and is the command list otherwise; a failure is logged
// and the bot runs on.
func TestTransport_MenuButton(t *testing.T) {
	t.Run("WebApp", func(t *testing.T) {
		fake := tgfake.New(t, token)
		start(t, fake, &recorder{}, newMemStore(), func(c *telegram.Config) {
			c.MenuApp = telegram.MenuApp{Text: "📊 Dashboard", URL: miniApp}
		})
		waitFor(t, "menu button", func() bool { _, ok := fake.Menu(); return ok })
		if mb, _ := fake.Menu(); mb != (tgfake.MenuButton{Type: "web_app", Text: "📊 Dashboard", URL: miniApp}) {
			t.Errorf("menu button = %+v", mb)
		}
		if n := fake.Calls("setChatMenuButton"); n != 1 {
			t.Errorf("setChatMenuButton called %d times, want once", n)
		}
	})
	t.Run("Commands", func(t *testing.T) {
		fake := tgfake.New(t, token)
		start(t, fake, &recorder{}, newMemStore(), nil)
		waitFor(t, "menu button", func() bool { _, ok := fake.Menu(); return ok })
		if mb, _ := fake.Menu(); mb != (tgfake.MenuButton{Type: "commands"}) {
			t.Errorf("menu button = %+v, want the command list", mb)
		}
	})
	t.Run("FailureLogged", func(t *testing.T) {
		fake := tgfake.New(t, token)
		fake.FailMethod("setChatMenuButton", 1, 400, 0)
		h := &recorder{}
		e := start(t, fake, h, newMemStore(), func(c *telegram.Config) { c.MenuApp = telegram.MenuApp{URL: miniApp} })
		waitFor(t, "the failure logged", func() bool { return strings.Contains(e.logs.String(), "setChatMenuButton failed") })
		fake.SendText(1, 1, "/status")
		waitFor(t, "an update after the failure", func() bool { return len(h.updates()) == 1 })
		if _, ok := fake.Menu(); ok {
			t.Error("a menu button was set despite the failure")
		}
	})
}
