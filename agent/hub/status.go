package hub

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
	"github.com/gpuledger/gpuledger/view"
)

// codeStatus is the one table from ledger error codes to the HTTP status
// the hub answers with; every handler goes through StatusOf. A store that
// cannot serve now (busy, locked, full) is 503, which the agent retries;
// a 4xx tells the agent that retrying the same request cannot help.
var codeStatus = map[string]int{
	ledger.EINVALID:      http.StatusBadRequest,
	ledger.ENOTFOUND:     http.StatusNotFound,
	ledger.ECONFLICT:     http.StatusConflict,
	ledger.EDUPLICATE:    http.StatusConflict,
	ledger.EUNAUTHORIZED: http.StatusForbidden,
	ledger.EUNAVAILABLE:  http.StatusServiceUnavailable,
	ledger.EFULL:         http.StatusServiceUnavailable,
	ledger.EINTERNAL:     http.StatusInternalServerError,
}

// StatusOf returns the HTTP status for err by its ledger code: 200 for
// nil, 503 for a cancelled or expired request context (the ledger did not
// answer in time), 500 for an error of no known code.
func StatusOf(err error) int {
	if err == nil {
		return http.StatusOK
	}
	if ledger.ErrorCode(err) == ledger.EINTERNAL && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return http.StatusServiceUnavailable
	}
	if s, ok := codeStatus[ledger.ErrorCode(err)]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// statusText is what the hub tells an agent about err: the English words
// for a refusal (view.LedgerMessage, times in UTC), a retry hint for a store that cannot
// serve now, and nothing of an internal error's details (those are
// logged).
func statusText(err error) string {
	switch StatusOf(err) {
	case http.StatusServiceUnavailable:
		return "the ledger is unavailable; retry later"
	case http.StatusInternalServerError:
		return "internal error; retry later"
	}
	return view.LedgerMessage(err, chat.LangEN, time.UTC, time.Time{})
}

// writeLedgerError answers a request with err's status (StatusOf) and
// statusText as the JSON error.
func writeLedgerError(w http.ResponseWriter, err error) {
	writeError(w, StatusOf(err), statusText(err))
}
