package telegram

import (
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/chat"
)

func TestMergeAnswers(t *testing.T) {
	q := func(texts ...string) []answer {
		var out []answer
		for i, s := range texts {
			out = append(out, answer{id: int64(i + 1), m: chat.Outgoing{ChatID: 1, Text: s, Silent: true}})
		}
		return out
	}
	t.Run("JoinsInOrder", func(t *testing.T) {
		n, m := mergeAnswers(q("a", "b", "c"))
		if n != 3 || m.Text != "a\n\nb\n\nc" || !m.Silent {
			t.Errorf("n=%d %+v", n, m)
		}
	})
	t.Run("StaysWithinTheLimit", func(t *testing.T) {
		long := strings.Repeat("x", 1500)
		in := q(long, long, long, long, long)
		var sent []string
		for len(in) > 0 {
			n, m := mergeAnswers(in)
			if chat.UTF16Len(m.Text) > MaxTextLen {
				t.Fatalf("a merged message of %d units", chat.UTF16Len(m.Text))
			}
			sent = append(sent, m.Text)
			in = in[n:]
		}
		if len(sent) != 3 || strings.Count(strings.Join(sent, "\n\n"), long) != 5 {
			t.Errorf("%d messages: want 3 holding the 5 answers whole", len(sent))
		}
	})
	t.Run("OneLongAnswerAlone", func(t *testing.T) {
		huge := strings.Repeat("y", MaxTextLen+10)
		if n, m := mergeAnswers(q(huge, "z")); n != 1 || m.Text != huge {
			t.Errorf("n=%d: a longer answer goes alone (Send splits it)", n)
		}
	})
	t.Run("ButtonsOnlyLast", func(t *testing.T) {
		in := q("a", "card", "b")
		in[1].m.Buttons = [][]chat.Button{{{Text: "OK", Data: "ok"}}}
		n, m := mergeAnswers(in)
		if n != 2 || m.Text != "a\n\ncard" || len(m.Buttons) != 1 {
			t.Errorf("n=%d %+v: the buttons must stay under their own text, last", n, m)
		}
	})
}
