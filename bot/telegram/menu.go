package telegram

import (
	"context"
	"encoding/json"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// MenuApp is the bot's menu button when it opens a Mini App (the
// dashboard): Text on the button, URL the https page it opens. The zero
// value (no URL) means the default menu button, the command list.
type MenuApp struct {
	Text string
	URL  string
}

// DefaultMenuText is the menu button's text when MenuApp.Text is empty.
const DefaultMenuText = "Dashboard"

// menuButton is the Bot API's MenuButton (setChatMenuButton's
// menu_button), which the library (v5.5.1) predates.
type menuButton struct {
	Type   string      `json:"type"` // "web_app" or "commands"
	Text   string      `json:"text,omitempty"`
	WebApp *webAppInfo `json:"web_app,omitempty"`
}

// setMenu sets the default menu button, once at start, through the
// library's generic MakeRequest: a web-app button to MenuApp, or, when
// there is none, the command list, so that a button left by an earlier
// run whose server has since lost its https URL stops opening a dead
// page. A failure is logged; the bot works without it.
func (t *Transport) setMenu(ctx context.Context) {
	mb := menuButton{Type: "commands"}
	if app := t.cfg.MenuApp; app.URL != "" {
		text := app.Text
		if text == "" {
			text = DefaultMenuText
		}
		mb = menuButton{Type: "web_app", Text: text, WebApp: &webAppInfo{URL: app.URL}}
	}
	raw, err := json.Marshal(mb)
	if err != nil { // cannot happen: plain strings
		t.log.Warn("setChatMenuButton: encode", "err", err)
		return
	}
	if _, err := t.do(ctx, 0, method("setChatMenuButton", tgbotapi.Params{"menu_button": string(raw)})); err != nil && ctx.Err() == nil {
		t.log.Warn("setChatMenuButton failed; the menu button stays as it was", "type", mb.Type, "err", t.scrubErr(err))
	}
}
