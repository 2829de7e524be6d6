package bot_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/gpuledger/gpuledger/bot"
	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/internal/testkit"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/ledger/sqlite"
)

// unavailableCreate is the real store whose CreateRental fails as a busy
// database does.
type unavailableCreate struct{ *sqlite.DB }

func (unavailableCreate) CreateRental(context.Context, ledger.Action, ledger.Rental) (*ledger.Rental, error) {
	return nil, ledger.Errorc(ledger.EUNAVAILABLE, "store_unavailable")
}

// TestPress_StoreUnavailable confirms a proposed rental while the store
// cannot record it: the press is answered "try again", in the user's
// language, as the scheduler's and the sync's buttons are, and nothing is
// recorded; the core used to leave it unanswered and have the transport
// deliver it again later.
func TestPress_StoreUnavailable(t *testing.T) {
	for _, c := range []struct{ lang, want string }{
		{"en", "Something went wrong; nothing was changed. Try again."},
		{"zh", "出了点问题，没有做任何修改。请重试。"},
	} {
		t.Run(c.lang, func(t *testing.T) {
			ctx := context.Background()
			db := openStore(t)
			if _, err := db.EnsureUser(ctx, ledger.User{ID: alice, Lang: c.lang, TZ: "UTC"}); err != nil {
				t.Fatal(err)
			}
			core, err := bot.New(ctx, bot.Config{Store: unavailableCreate{db}, AllowedUsers: []int64{alice}, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			snd := &testkit.Sender{}
			if err := core.Handle(ctx, chat.Update{Key: "k1", Kind: chat.KindText, UserID: alice, ChatID: alice, ChatType: chat.ChatPrivate, Text: "rented 2x4090 on vast at $0.70/h"}, snd); err != nil {
				t.Fatal(err)
			}
			sent := snd.Sent()
			if len(sent) != 1 || len(sent[0].Buttons) == 0 {
				t.Fatalf("proposal: %+v", sent)
			}
			confirm := sent[0].Buttons[0][0].Data
			if err := core.Handle(ctx, chat.Update{Key: "k2", Kind: chat.KindCallback, UserID: alice, ChatID: alice, ChatType: chat.ChatPrivate, CallbackID: "cb", CallbackData: confirm, MessageID: 1}, snd); err != nil {
				t.Fatalf("the press was left to be delivered again: %v", err)
			}
			toasts := snd.Toasts()
			if len(toasts) != 1 || toasts[0] != c.want {
				t.Errorf("toasts %q, want [%q]", toasts, c.want)
			}
			if b, err := db.Book(ctx, alice); err != nil || len(b.Rentals) != 0 {
				t.Errorf("book %+v, %v: want nothing recorded", b, err)
			}
		})
	}
}
