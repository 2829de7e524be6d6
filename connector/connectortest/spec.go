package connectortest

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/connector"
)

// SpecWorks checks a platform's Spec against the platform's fake: the
// spec alone passes Registry.Check (its key is a ledger profile, its
// defaults are usable bases); base sets every one of its variables, and
// nothing else; the client New makes from key at base says the spec's
// platform and passes Check, while another key is refused with
// ErrUnauthorized; and Stop agrees with CanStop: an instance that does not
// exist is refused as such where the API can stop, and as
// ErrNotSupported where it cannot.
func SpecWorks(t *testing.T, s connector.Spec, key string, base connector.BaseURLs) {
	t.Helper()
	if err := (connector.Registry{s}).Check(); err != nil {
		t.Fatalf("%s: %v", s.Key, err)
	}
	if len(base) != len(s.Bases) {
		t.Fatalf("%s: the test gives %d bases for %d variables", s.Key, len(base), len(s.Bases))
	}
	for _, b := range s.Bases {
		if base[b.Env] == "" {
			t.Fatalf("%s: the test gives no base for %s", s.Key, b.Env)
		}
	}
	hc := &http.Client{Timeout: 5 * time.Second}
	ctx := context.Background()
	c, err := s.New(key, base, hc)
	if err != nil {
		t.Fatalf("%s: New: %v", s.Key, err)
	}
	if c.Platform() != s.Key {
		t.Errorf("%s: the client says it is %q", s.Key, c.Platform())
	}
	if err := c.Check(ctx); err != nil {
		t.Errorf("%s: Check with the fake's key: %v", s.Key, err)
	}
	other, err := s.New("wrong-"+key, base, hc)
	if err != nil {
		t.Fatalf("%s: New with another key: %v", s.Key, err)
	}
	if err := other.Check(ctx); !errors.Is(err, connector.ErrUnauthorized) {
		t.Errorf("%s: Check with a key the fake does not know: %v, want ErrUnauthorized", s.Key, err)
	}
	if c, err := s.New("", base, hc); err == nil || c != nil {
		t.Errorf("%s: New with no key = %v, %v; want a nil Client and an error", s.Key, c, err)
	}
	err = c.Stop(ctx, "nosuchinstance1")
	if got := errors.Is(err, connector.ErrNotSupported); got == s.CanStop || err == nil {
		t.Errorf("%s: Stop of an instance that does not exist: %v, but CanStop is %v", s.Key, err, s.CanStop)
	}
}
