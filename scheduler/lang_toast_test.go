package scheduler_test

import (
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/scheduler"
)

// TestPress_RefusalToastInUsersLanguage: a button press the ledger
// refuses (here a rental that is not the user's) is answered with a toast
// in the user's language, not the ledger's English.
func TestPress_RefusalToastInUsersLanguage(t *testing.T) {
	e := newZH(t, nil)
	for _, a := range []string{scheduler.ActRelease, scheduler.ActSnooze, scheduler.ActReleased} {
		p := chat.ButtonPress{Update: chat.Update{Key: "tg:update:zh" + a, Kind: chat.KindCallback, UserID: 1, ChatID: 1, MessageID: 1, CallbackID: "cb"},
			Action: a, Payload: "999", Now: e.clk.Now()}
		dispatch(t, e.db, e.btn, e.chat, p)
		got := e.chat.Toasts()[len(e.chat.Toasts())-1]
		if got == "" || strings.Contains(got, "rental") || strings.Contains(got, "yours") || !strings.Contains(got, "不是你的") {
			t.Errorf("press %s: toast %q, want the refusal in Chinese", a, got)
		}
	}
}
