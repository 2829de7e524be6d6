package e2e

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestGroupKeepsSecretsAndCardsPrivate runs the real server against the
// fake Bot API: /agent sent in a group puts the new token and the install
// command in the user's private chat only, the group hears only where it
// went, and the idle card that follows goes to the private chat, not to
// the group where the user last spoke.
func TestGroupKeepsSecretsAndCardsPrivate(t *testing.T) {
	w := newWorld(t)
	const group = -424242
	old := w.token
	before := len(w.fake.Messages(userID))
	w.fake.SendText(userID, group, "/agent box1")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := w.fake.WaitFor(ctx, func() bool {
		for _, m := range w.fake.Messages(userID)[before:] {
			if s := tokenRE.FindString(m.Text); s != "" && s != old && strings.Contains(m.Text, "install.sh") {
				w.token = s
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("no new token in the private chat after /agent in a group: %v; private %+v, group %+v", err, w.fake.Messages(userID)[before:], w.fake.Messages(group))
	}
	groupMsgs := func() []string {
		var out []string
		for _, m := range w.fake.Messages(group) {
			out = append(out, m.Text)
		}
		return out
	}
	// The note follows the private answer.
	w.fake.WaitFor(ctx, func() bool { return len(w.fake.Messages(group)) > 0 })
	if g := groupMsgs(); len(g) != 1 || !strings.Contains(g[0], "privately") {
		t.Fatalf("group messages after /agent: %q; want one note that it was sent privately", g)
	}

	w.startAgent()
	w.setGPU(0)
	w.waitMessage("spent idle", 20*time.Second)
	for _, text := range groupMsgs() {
		for _, bad := range []string{w.token, old, "install.sh", "curl", "idle", "¥"} {
			if strings.Contains(text, bad) {
				t.Errorf("the group saw %q: %q", bad, text)
			}
		}
	}
	if g := groupMsgs(); len(g) != 1 {
		t.Fatalf("group messages: %q; want only the note", g)
	}
}
