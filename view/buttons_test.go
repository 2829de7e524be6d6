package view

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// TestButtonErrors words a press's failure for the presser: a refusal in
// their language, a store that cannot serve or an internal error as
// "try again" (never the store's "it will be retried": a press is not
// delivered again), a redelivered press with no toast.
func TestButtonErrors(t *testing.T) {
	words := ButtonErrors(slog.New(slog.DiscardHandler))
	refused := fmt.Errorf("wrapped: %w", ledger.Errorc(ledger.ENOTFOUND, "rental_not_yours"))
	for _, c := range []struct {
		name, lang string
		err        error
		want       string
	}{
		{"refusal", chat.LangEN, refused, "that rental is not yours"},
		{"refusal, Chinese", chat.LangZH, refused, "这个租用不是你的"},
		{"unavailable", chat.LangEN, ledger.Errorc(ledger.EUNAVAILABLE, "store_unavailable"), "Something went wrong; nothing was changed. Try again."},
		{"unavailable, Chinese", chat.LangZH, ledger.Errorc(ledger.EUNAVAILABLE, "store_unavailable"), "出了点问题，没有做任何修改。请重试。"},
		{"not a ledger error", chat.LangEN, errors.New("boom"), "Something went wrong; nothing was changed. Try again."},
		{"cancelled", chat.LangZH, context.Canceled, "出了点问题，没有做任何修改。请重试。"},
		{"duplicate", chat.LangEN, ledger.Errorc(ledger.EDUPLICATE, ""), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := words(context.Background(), chat.ButtonPress{Lang: c.lang}, c.err); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
	for _, err := range pressTexts.Check() {
		t.Error(err)
	}
}
