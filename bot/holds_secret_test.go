package bot

import "testing"

// TestHoldsSecret: every text the core would delete from the chat as one
// that may hold a key is one the transport keeps out of its store, and
// everyday commands are not.
func TestHoldsSecret(t *testing.T) {
	const key = "rpa_0123456789abcdefABCDEF"
	for _, c := range []struct {
		text string
		want bool
	}{
		{"/connect runpod " + key, true},
		{"/connect@" + "gpuledger_bot runpod " + key, true},
		{"/CONNECT runpod " + key, true},
		{"／connect runpod " + key, true},
		{"/连接 autodl " + key, true},
		{"/connect", true},
		{"/status\n/connect runpod " + key, true},
		{"please /connect runpod " + key, true},
		{"/conect runpod " + key, true},
		{"/connnect " + key, true},
		{"/status", false},
		{"/rent box1 autodl 4090 1.88/h", false},
		{"/conect", false},
		{"hello", false},
		{"", false},
	} {
		if got := holdsSecret(c.text); got != c.want {
			t.Errorf("holdsSecret(%q) = %v, want %v", c.text, got, c.want)
		}
	}
}
