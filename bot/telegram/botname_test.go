package telegram_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/bot/telegram"
	"github.com/gpuledger/gpuledger/bot/telegram/tgfake"
)

// metaStore is a memStore that can write meta, as the ledger's store can.
type metaStore struct{ *memStore }

func (s metaStore) SetMeta(_ context.Context, key, value string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = value
	return nil
}

// TestBotName: the bot's username comes from getMe and is kept for the
// next start; with Telegram unreachable the kept one is used, and with
// none kept the error says why without the token. Run keeps it too.
func TestBotName(t *testing.T) {
	fake := tgfake.New(t, token)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st := metaStore{newMemStore()}

	name, err := telegram.BotName(ctx, st, token, fake.Endpoint(), nil)
	if err != nil || name != tgfake.BotUsername {
		t.Fatalf("BotName = %q, %v; want %q", name, err, tgfake.BotUsername)
	}
	if v, ok, _ := st.Meta(ctx, telegram.BotNameKey); !ok || v != tgfake.BotUsername {
		t.Errorf("kept %q (%v), want %q", v, ok, tgfake.BotUsername)
	}

	fake.SetDown(true)
	if name, err := telegram.BotName(ctx, st, token, fake.Endpoint(), nil); err != nil || name != tgfake.BotUsername {
		t.Errorf("Telegram down, a name kept: %q, %v; want the kept one", name, err)
	}
	name, err = telegram.BotName(ctx, metaStore{newMemStore()}, token, fake.Endpoint(), nil)
	if err == nil || name != "" {
		t.Errorf("Telegram down, nothing kept: %q, %v; want an error", name, err)
	}
	if err != nil && (strings.Contains(err.Error(), "LEAKME") || strings.Contains(err.Error(), token)) {
		t.Errorf("the token is in the error: %v", err)
	}
	fake.SetDown(false)

	if _, err := telegram.Username(ctx, "1:wrong", fake.Endpoint(), nil); err == nil {
		t.Error("a rejected token gave a name")
	}

	// Run keeps the name it connects with.
	run := metaStore{newMemStore()}
	e := start(t, fake, &recorder{}, run, nil)
	waitFor(t, "the name kept", func() bool {
		v, ok, _ := run.Meta(ctx, telegram.BotNameKey)
		return ok && v == tgfake.BotUsername
	})
	e.stop()
}
