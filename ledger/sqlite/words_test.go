package sqlite_test

import (
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/view"
)

// userText is what a user reading English is shown for err: the ledger
// keeps keys and arguments, the words are view's.
func userText(err error) string {
	return view.LedgerMessage(err, chat.LangEN, time.UTC, time.Time{})
}
