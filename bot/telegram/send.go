package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/chat"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// maxRateLimitWaits bounds how many 429 answers one call waits out.
const maxRateLimitWaits = 5

// apiError returns the Bot API error in err's chain, or nil.
func apiError(err error) *tgbotapi.Error {
	var te *tgbotapi.Error
	if errors.As(err, &te) {
		return te
	}
	return nil
}

func apiSays(err error, text string) bool {
	te := apiError(err)
	return te != nil && strings.Contains(te.Message, text)
}

// call makes one Bot API request, paced for chatID (0: not paced), waiting
// out 429 answers (their retry_after) and retrying network failures and 5xx
// answers with backoff up to SendAttempts times. Other API errors (4xx)
// are returned at once.
func (t *Transport) call(ctx context.Context, chatID int64, c tgbotapi.Chattable) (*tgbotapi.APIResponse, error) {
	return t.do(ctx, chatID, chattable(c))
}

// do is call for any request (a method the library lacks).
func (t *Transport) do(ctx context.Context, chatID int64, req request) (*tgbotapi.APIResponse, error) {
	failures, waits := 0, 0
	for {
		if chatID != 0 {
			if err := t.cfg.Sleep(ctx, t.pace.reserve(chatID)); err != nil {
				return nil, err
			}
		}
		resp, err := req(t.bot(ctx))
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		te := apiError(err)
		switch {
		case te != nil && te.RetryAfter > 0:
			waits++
			if waits > maxRateLimitWaits {
				return nil, fmt.Errorf("telegram: still rate limited after %d waits: %w", maxRateLimitWaits, err)
			}
			d := time.Duration(te.RetryAfter) * time.Second
			t.log.Warn("telegram rate limit, waiting", "chat", chatID, "retry_after", d)
			if err := t.cfg.Sleep(ctx, d); err != nil {
				return nil, err
			}
		case te != nil && te.Code > 0 && te.Code < 500:
			return nil, fmt.Errorf("telegram: %w", err)
		default: // network failure or 5xx
			failures++
			if failures >= t.cfg.SendAttempts {
				return nil, fmt.Errorf("telegram: %d attempts failed: %w", failures, err)
			}
			if err := t.cfg.Sleep(ctx, t.cfg.Backoff.delay(failures)); err != nil {
				return nil, err
			}
		}
	}
}

// message calls a method that returns a Message and returns its ID.
func (t *Transport) message(ctx context.Context, chatID int64, c tgbotapi.Chattable) (int, error) {
	return t.messageOf(ctx, chatID, chattable(c))
}

// messageOf is message for any request.
func (t *Transport) messageOf(ctx context.Context, chatID int64, req request) (int, error) {
	resp, err := t.do(ctx, chatID, req)
	if err != nil {
		return 0, err
	}
	var m tgbotapi.Message
	if err := json.Unmarshal(resp.Result, &m); err != nil {
		return 0, fmt.Errorf("telegram: decode sent message: %w", err)
	}
	return m.MessageID, nil
}

func keyboard(rows [][]chat.Button) *tgbotapi.InlineKeyboardMarkup {
	if len(rows) == 0 {
		return nil
	}
	mk := tgbotapi.InlineKeyboardMarkup{InlineKeyboard: [][]tgbotapi.InlineKeyboardButton{}}
	for _, row := range rows {
		r := []tgbotapi.InlineKeyboardButton{}
		for _, b := range row {
			r = append(r, tgbotapi.NewInlineKeyboardButtonData(b.Text, b.Data))
		}
		mk.InlineKeyboard = append(mk.InlineKeyboard, r)
	}
	return &mk
}

// Length limits used when sending, in UTF-16 code units of the raw HTML
// (markup included). Telegram allows 4096 and 1024 visible characters, so
// counting markup too keeps every part within the limit.
const (
	MaxTextLen    = 4000
	MaxCaptionLen = 1000
)

// Send delivers m (see chat.Sender) and returns the ID of the last message
// sent, or of the edited message. Text is sent as HTML, split into parts
// of at most MaxTextLen with the buttons under the last part; if Telegram
// cannot parse the HTML the part is sent again as plain text. An edit
// whose text is unchanged succeeds; an edit of a message that is gone or
// too old to edit is sent as a new message. A document or photo carries
// Text as its caption when it fits MaxCaptionLen, and is followed by Text
// as messages otherwise. Send is safe for concurrent use.
//
// A refusal is typed by sendError: chat.ErrNoPrivateChat, chat.ErrChatGone
// or *chat.MigratedError. Send never resends to a migrated group's new ID
// itself: the caller keeps the chat's ID (a team's room) and must move it,
// so it is told, and sends again (the answers to updates, which belong to
// no room, are resent by the inbox's delivery: see deliver).
func (t *Transport) Send(ctx context.Context, m chat.Outgoing) (int, error) {
	if m.ChatID == 0 {
		return 0, errors.New("telegram: send: no chat ID")
	}
	var id int
	var err error
	switch {
	case m.Document != nil || m.Photo != nil:
		id, err = t.sendFile(ctx, m)
	case m.EditMessageID != 0:
		id, err = t.edit(ctx, m)
	default:
		id, err = t.sendText(ctx, m)
	}
	return id, sendError(m.ChatID, err)
}

// sendError types a refused send for the caller (package chat's errors):
// a private chat (its ID is the user's, positive) the user never started
// or has blocked answers 403: chat.ErrNoPrivateChat, and the core tells
// them where to start it. A group upgraded to a supergroup answers 400
// with parameters.migrate_to_chat_id: *chat.MigratedError with the new
// ID. A group or supergroup (a negative ID) that answers 403 (the bot was
// kicked, is not a member, the group was deleted) or 400 "chat not found"
// no longer takes the bot's messages: chat.ErrChatGone. Other errors are
// returned as they are.
func sendError(chatID int64, err error) error {
	te := apiError(err)
	switch {
	case te == nil:
		return err
	case te.MigrateToChatID != 0:
		return &chat.MigratedError{To: te.MigrateToChatID, Err: err}
	case te.Code == 403 && chatID > 0:
		return fmt.Errorf("%w: %w", chat.ErrNoPrivateChat, err)
	case chatID < 0 && (te.Code == 403 || te.Code == 400 && strings.Contains(te.Message, "chat not found")):
		return fmt.Errorf("%w: %w", chat.ErrChatGone, err)
	}
	return err
}

func (t *Transport) sendText(ctx context.Context, m chat.Outgoing) (int, error) {
	parts := chat.SplitHTML(m.Text, MaxTextLen)
	if len(parts) == 0 {
		return 0, errors.New("telegram: send: empty text")
	}
	id := 0
	for i, part := range parts {
		cfg := tgbotapi.NewMessage(m.ChatID, part)
		cfg.ParseMode = tgbotapi.ModeHTML
		cfg.DisableWebPagePreview = true
		cfg.DisableNotification = m.Silent
		if i == len(parts)-1 {
			cfg.ReplyMarkup = t.markup(ctx, m.ChatID, m.Buttons)
		}
		var err error
		id, err = t.message(ctx, m.ChatID, cfg)
		if apiSays(err, "can't parse entities") {
			t.log.Warn("telegram rejected the HTML, sending plain text", "chat", m.ChatID, "err", t.scrubErr(err))
			cfg.ParseMode, cfg.Text = "", chat.StripHTML(part)
			id, err = t.message(ctx, m.ChatID, cfg)
		}
		if err != nil {
			return id, fmt.Errorf("telegram: send part %d of %d: %w", i+1, len(parts), err)
		}
	}
	return id, nil
}

func (t *Transport) edit(ctx context.Context, m chat.Outgoing) (int, error) {
	parts := chat.SplitHTML(m.Text, MaxTextLen-1)
	if len(parts) == 0 {
		return 0, errors.New("telegram: edit: empty text")
	}
	text := parts[0]
	if len(parts) > 1 {
		text += "…" // a card is one message: the rest is cut
	}
	mk := t.markup(ctx, m.ChatID, m.Buttons)
	id, err := t.editText(ctx, m, text, tgbotapi.ModeHTML, mk)
	if apiSays(err, "can't parse entities") {
		id, err = t.editText(ctx, m, chat.StripHTML(text), "", mk)
	}
	switch {
	case err == nil:
		return id, nil
	case apiSays(err, "message is not modified"):
		return m.EditMessageID, nil
	case apiSays(err, "message to edit not found"), apiSays(err, "message can't be edited"), apiSays(err, "no text in the message"):
		t.log.Debug("message cannot be edited, sending a new one", "chat", m.ChatID, "message", m.EditMessageID)
		m.EditMessageID = 0
		return t.sendText(ctx, m)
	}
	return 0, fmt.Errorf("telegram: edit message %d: %w", m.EditMessageID, err)
}

// editText edits m's message to text in parseMode with the markup mk
// (see markup): through the library's config, or, when mk holds web-app
// buttons it cannot type, through MakeRequest.
func (t *Transport) editText(ctx context.Context, m chat.Outgoing, text, parseMode string, mk any) (int, error) {
	if web, ok := mk.(*webAppMarkup); ok {
		req, err := editRequest(m.ChatID, m.EditMessageID, text, parseMode, web)
		if err != nil {
			return 0, fmt.Errorf("telegram: encode reply markup: %w", err)
		}
		return t.messageOf(ctx, m.ChatID, req)
	}
	cfg := tgbotapi.NewEditMessageText(m.ChatID, m.EditMessageID, text)
	cfg.ParseMode = parseMode
	cfg.DisableWebPagePreview = true
	if kb, ok := mk.(*tgbotapi.InlineKeyboardMarkup); ok {
		cfg.ReplyMarkup = kb
	}
	return t.message(ctx, m.ChatID, cfg)
}

func (t *Transport) sendFile(ctx context.Context, m chat.Outgoing) (int, error) {
	caption, rest := "", ""
	if parts := chat.SplitHTML(m.Text, MaxCaptionLen); len(parts) == 1 {
		caption = parts[0]
	} else if len(parts) > 1 {
		rest = m.Text
	}
	var cfg tgbotapi.Chattable
	var what string
	buttons := t.markup(ctx, m.ChatID, m.Buttons)
	if rest != "" {
		buttons = nil // they go under the text that follows
	}
	if m.Document != nil {
		what = "document"
		c := tgbotapi.NewDocument(m.ChatID, tgbotapi.FileBytes{Name: m.Document.Name, Bytes: m.Document.Data})
		c.Caption, c.DisableNotification = caption, m.Silent
		if caption != "" {
			c.ParseMode = tgbotapi.ModeHTML
		}
		if buttons != nil {
			c.ReplyMarkup = buttons
		}
		cfg = c
	} else {
		what = "photo"
		c := tgbotapi.NewPhoto(m.ChatID, tgbotapi.FileBytes{Name: m.Photo.Name, Bytes: m.Photo.Data})
		c.Caption, c.DisableNotification = caption, m.Silent
		if caption != "" {
			c.ParseMode = tgbotapi.ModeHTML
		}
		if buttons != nil {
			c.ReplyMarkup = buttons
		}
		cfg = c
	}
	id, err := t.message(ctx, m.ChatID, cfg)
	if err != nil {
		return 0, fmt.Errorf("telegram: send %s: %w", what, err)
	}
	if rest == "" {
		return id, nil
	}
	m.Document, m.Photo = nil, nil
	return t.sendText(ctx, m)
}

// AnswerCallback answers a button press (see chat.Sender); text, if any, is
// shown as a toast and cut to Telegram's 200 characters. A press too old to
// answer is not an error: there is nothing left to stop.
func (t *Transport) AnswerCallback(ctx context.Context, callbackID, text string) error {
	if r := []rune(text); len(r) > 200 {
		text = string(r[:199]) + "…"
	}
	_, err := t.call(ctx, 0, tgbotapi.NewCallback(callbackID, text))
	if apiSays(err, "query is too old") || apiSays(err, "query ID is invalid") {
		t.log.Debug("callback too old to answer", "callback", callbackID)
		return nil
	}
	if err != nil {
		return fmt.Errorf("telegram: answer callback: %w", err)
	}
	return nil
}

var _ chat.Deleter = (*Transport)(nil)

// DeleteMessage deletes a message from a chat (chat.Deleter): the core
// deletes a message that holds a secret as soon as it has read it. A
// message that is gone already (Telegram answers "message to delete not
// found": an earlier attempt, or the user, deleted it) is not an error.
// Telegram lets a bot delete a user's message in a private chat within 48
// hours, and in a group only when the bot is an admin allowed to delete
// messages; other refusals are returned.
func (t *Transport) DeleteMessage(ctx context.Context, chatID int64, messageID int) error {
	_, err := t.call(ctx, 0, tgbotapi.NewDeleteMessage(chatID, messageID))
	if apiSays(err, "message to delete not found") {
		return nil
	}
	if err != nil {
		return fmt.Errorf("telegram: delete message %d in chat %d: %w", messageID, chatID, err)
	}
	return nil
}

func (t *Transport) scrubErr(err error) slog.Value {
	if err == nil {
		return slog.StringValue("")
	}
	return slog.StringValue(scrub(err.Error(), t.cfg.Token))
}
