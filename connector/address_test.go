package connector_test

import (
	"errors"
	"testing"

	"github.com/gpuledger/gpuledger/connector"
)

func TestParseAddress(t *testing.T) {
	for _, c := range []struct {
		in, want string
		bad      bool
	}{
		{"", "invalid IP", false},
		{"198.51.100.7", "198.51.100.7", false},
		{"2001:db8::1", "2001:db8::1", false},
		{"::ffff:198.51.100.7", "198.51.100.7", false},
		{"198.51.100.7:22", "", true},
		{"198.51.100.0/24", "", true},
		{" 198.51.100.7", "", true},
		{"fe80::1%eth0", "", true},
		{"pod-host.example", "", true},
		{"1.2.3", "", true},
	} {
		a, err := connector.ParseAddress(c.in)
		if c.bad {
			if !errors.Is(err, connector.ErrBadAnswer) {
				t.Errorf("ParseAddress(%q) = %v, %v; want ErrBadAnswer", c.in, a, err)
			}
			continue
		}
		if err != nil || a.String() != c.want {
			t.Errorf("ParseAddress(%q) = %q, %v; want %q", c.in, a, err, c.want)
		}
	}
}
