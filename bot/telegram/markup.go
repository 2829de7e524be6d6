package telegram

import (
	"context"
	"strconv"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/gpuledger/gpuledger/chat"
)

// go-telegram-bot-api v5.5.1 predates Telegram's Web Apps (Bot API 6.0):
// its InlineKeyboardButton has no web_app field. A keyboard with a web-app
// button is built from these types instead, which carry the Bot API's JSON
// names, and handed to the library's untyped ReplyMarkup fields (or, for
// an edit, whose config types its markup, to MakeRequest).

// webAppMarkup is an inline keyboard that may hold web-app buttons.
type webAppMarkup struct {
	InlineKeyboard [][]webAppButton `json:"inline_keyboard"`
}

type webAppButton struct {
	Text         string      `json:"text"`
	CallbackData *string     `json:"callback_data,omitempty"`
	WebApp       *webAppInfo `json:"web_app,omitempty"`
}

// webAppInfo is the Bot API's WebAppInfo.
type webAppInfo struct {
	URL string `json:"url"`
}

// privateChat reports whether chatID is a private chat: on Telegram a
// private chat's ID is the user's, positive; groups, supergroups and
// channels have negative IDs.
func privateChat(chatID int64) bool { return chatID > 0 }

// markup renders rows for chatID: nil for no buttons, the library's
// keyboard when none opens a web app, a webAppMarkup otherwise. A web-app
// button is kept only in a private chat, since Telegram refuses the whole
// message elsewhere (BUTTON_TYPE_INVALID); a dropped one is logged at
// debug level, as the core should not have made it. Rows left empty are
// dropped.
func (t *Transport) markup(ctx context.Context, chatID int64, rows [][]chat.Button) any {
	web := false
	var kept [][]chat.Button
	for _, row := range rows {
		var r []chat.Button
		for _, b := range row {
			if b.WebApp != "" && !privateChat(chatID) {
				t.log.DebugContext(ctx, "telegram: web-app button dropped: Telegram allows them in private chats only", "chat", chatID, "button", b.Text)
				continue
			}
			web = web || b.WebApp != ""
			r = append(r, b)
		}
		if len(r) > 0 {
			kept = append(kept, r)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	if !web {
		return keyboard(kept)
	}
	mk := &webAppMarkup{InlineKeyboard: [][]webAppButton{}}
	for _, row := range kept {
		r := []webAppButton{}
		for _, b := range row {
			if b.WebApp != "" {
				r = append(r, webAppButton{Text: b.Text, WebApp: &webAppInfo{URL: b.WebApp}})
				continue
			}
			data := b.Data
			r = append(r, webAppButton{Text: b.Text, CallbackData: &data})
		}
		mk.InlineKeyboard = append(mk.InlineKeyboard, r)
	}
	return mk
}

// editRequest is an editMessageText whose markup may hold web-app
// buttons: the library's EditMessageTextConfig cannot carry them, so the
// request goes through MakeRequest with the Bot API's parameters.
func editRequest(chatID int64, messageID int, text, parseMode string, mk any) (request, error) {
	p := tgbotapi.Params{"chat_id": strconv.FormatInt(chatID, 10), "text": text}
	p.AddNonZero("message_id", messageID)
	p.AddNonEmpty("parse_mode", parseMode)
	p.AddBool("disable_web_page_preview", true)
	if err := p.AddInterface("reply_markup", mk); err != nil {
		return nil, err
	}
	return method("editMessageText", p), nil
}

// request is one Bot API call made with a client that carries the call's
// context (Transport.bot).
type request func(b *tgbotapi.BotAPI) (*tgbotapi.APIResponse, error)

// chattable is the request of one of the library's configs.
func chattable(c tgbotapi.Chattable) request {
	return func(b *tgbotapi.BotAPI) (*tgbotapi.APIResponse, error) { return b.Request(c) }
}

// method is a request for a Bot API method the library has no config
// for, through its generic MakeRequest.
func method(name string, p tgbotapi.Params) request {
	return func(b *tgbotapi.BotAPI) (*tgbotapi.APIResponse, error) { return b.MakeRequest(name, p) }
}
