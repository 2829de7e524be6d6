package connsync_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/chat"
	"github.com/gpuledger/gpuledger/ledger"
)

// TestSync_RefusedPressInUsersLanguage: a question's button the ledger
// refuses (binding a rental another instance took in the meantime) is
// answered in the user's language, as the scheduler's buttons are; the
// sync once answered it in the ledger's English.
func TestSync_RefusedPressInUsersLanguage(t *testing.T) {
	e := newEnv(t)
	u, err := e.db.User(e.ctx, uid)
	if err != nil {
		t.Fatal(err)
	}
	u.Lang = chat.LangZH
	if _, err := e.db.UpdateUser(e.ctx, ledger.Action{UserID: uid, At: e.clk.Now()}, u); err != nil {
		t.Fatal(err)
	}
	e.handRental("box", "runpod", t0.Add(-3*time.Hour))
	e.rp.SetPods(pod("abc123", "", "RUNNING", "0.79", t0.Add(-time.Hour)), pod("def456", "", "RUNNING", "0.79", t0.Add(-time.Hour)))
	e.connect("runpod")
	e.round()
	var binds []string // each question's "box" button
	for _, m := range e.snd.take() {
		for _, row := range m.Buttons {
			for _, b := range row {
				if strings.HasPrefix(b.Text, "box") {
					binds = append(binds, b.Data)
				}
			}
		}
	}
	if len(binds) != 2 {
		t.Fatalf("want two questions offering box, got %d buttons", len(binds))
	}
	e.press(binds[0], "tg:update:1")
	e.press(binds[1], "tg:update:2")
	got := e.snd.answers
	if len(got) != 2 {
		t.Fatalf("answers %q", got)
	}
	if !strings.Contains(got[1], "已经绑定到") || strings.Contains(got[1], "already bound") {
		t.Errorf("the refusal reads %q, want it in Chinese", got[1])
	}
}
