package view

import (
	"context"
	"log/slog"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// pressTexts are the toasts of presses that failed for no reason of the
// user's.
var pressTexts = chat.Catalog{
	"press_internal": {
		"Something went wrong; nothing was changed. Try again.",
		"出了点问题，没有做任何修改。请重试。"},
}

// ButtonErrors returns the chat.ErrorText of the server's buttons: how a
// press's failure reads, in the presser's language and zone. A refusal
// of the ledger is worded as LedgerMessage words it; a press already
// applied (a redelivery) is answered without a toast; an internal error
// or a store that cannot serve now is logged in full and answered
// "something went wrong, try again": a press is not delivered again, the
// user presses again.
func ButtonErrors(log *slog.Logger) chat.ErrorText {
	return func(ctx context.Context, p chat.ButtonPress, err error) string {
		code := ledger.ErrorCode(err)
		switch {
		case code == ledger.EDUPLICATE:
			return ""
		case code == ledger.EINTERNAL || ledger.Transient(err):
			log.ErrorContext(ctx, "button press failed", "action", p.Action, "payload", p.Payload, "user", p.Update.UserID, "err", err)
			return pressTexts.Text(p.Lang, "press_internal")
		}
		loc := p.Loc
		if loc == nil {
			loc = time.UTC
		}
		return LedgerMessage(err, p.Lang, loc, p.Now)
	}
}
