package telegram

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// BotNameKey is the meta key holding the bot's username as Telegram's
// getMe last gave it: Run stores it when it connects, so that a server
// started while Telegram is unreachable still knows it (BotName).
const BotNameKey = "telegram.bot_name"

// metaSetter is a Store that can write meta (ledger/sqlite's DB).
type metaSetter interface {
	SetMeta(ctx context.Context, key, value string) error
}

// Username asks Telegram once for the bot's username (getMe), without
// '@', within ctx. The parts built before the transport runs need it:
// the core writes the t.me links of team invites with it. token and
// endpoint are Config's; a nil client is NewHTTPClient's default. The
// token never appears in the error.
func Username(ctx context.Context, token, endpoint string, client *http.Client) (string, error) {
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	if strings.Count(endpoint, "%s") != 2 {
		return "", fmt.Errorf("telegram: endpoint %q must contain %%s twice", endpoint)
	}
	if client == nil {
		client = NewHTTPClient(0, nil)
	}
	api := &tgbotapi.BotAPI{Token: token, Client: ctxDoer{ctx: ctx, c: client, token: token}, Buffer: 1}
	api.SetAPIEndpoint(endpoint)
	me, err := api.GetMe()
	if err != nil {
		return "", fmt.Errorf("telegram: getMe: %s", scrub(err.Error(), token))
	}
	if me.UserName == "" {
		return "", errors.New("telegram: getMe gave no username")
	}
	return me.UserName, nil
}

// BotName returns the bot's username: Telegram's answer to getMe within
// ctx (stored in st under BotNameKey for the next start when st can
// write meta), else the one stored by an earlier start, else "" with the
// error that kept Telegram's answer.
func BotName(ctx context.Context, st Store, token, endpoint string, client *http.Client) (string, error) {
	name, err := Username(ctx, token, endpoint, client)
	if err == nil {
		if ms, ok := st.(metaSetter); ok {
			if old, _, _ := st.Meta(ctx, BotNameKey); old != name {
				_ = ms.SetMeta(context.WithoutCancel(ctx), BotNameKey, name) // only a hint for the next start
			}
		}
		return name, nil
	}
	stored, ok, serr := st.Meta(context.WithoutCancel(ctx), BotNameKey)
	if serr == nil && ok && stored != "" {
		return stored, nil
	}
	return "", err
}
