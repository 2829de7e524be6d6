package connector_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/connector"
)

// stub is a Client that only says its platform.
type stub struct{ platform, key, base string }

func (s *stub) Platform() string                        { return s.platform }
func (s *stub) Check(context.Context) error             { return nil }
func (s *stub) MinInterval() time.Duration              { return time.Minute }
func (s *stub) Stop(context.Context, string) error      { return nil }
func (s *stub) Terminate(context.Context, string) error { return nil }
func (s *stub) Instances(context.Context) ([]connector.Instance, error) {
	return nil, nil
}
func (s *stub) Balance(context.Context) (connector.Balance, error) {
	return connector.Balance{}, nil
}
func (s *stub) Billed(context.Context, time.Time, time.Time) ([]connector.BilledItem, error) {
	return nil, nil
}

// spec is a complete spec of platform key with one base under env.
func spec(key, env string, canStop bool) connector.Spec {
	return connector.Spec{
		Key:     key,
		CanStop: canStop,
		Bases:   []connector.Base{{Env: env, Default: "https://api.example.com/v1"}},
		New: func(k string, base connector.BaseURLs, _ *http.Client) (connector.Client, error) {
			if k == "" {
				return connector.Made((*stub)(nil), errors.New("no key"))
			}
			return connector.Made(&stub{platform: key, key: k, base: base[env]}, nil)
		},
	}
}

func TestRegistry_Lookup(t *testing.T) {
	r := connector.Registry{spec("runpod", "A_URL", true), spec("lambda", "B_URL", false)}
	if got := r.Keys(); strings.Join(got, ",") != "runpod,lambda" {
		t.Errorf("Keys() = %v, want the listed order", got)
	}
	if r.String() != "runpod, lambda" {
		t.Errorf("String() = %q", r.String())
	}
	if !r.Supports("runpod") || !r.Supports("lambda") || r.Supports("vast") || r.Supports("") {
		t.Error("Supports answers for a platform that is not listed, or not for one that is")
	}
	if !r.CanStop("runpod") || r.CanStop("lambda") || r.CanStop("vast") {
		t.Error("CanStop: runpod can, lambda cannot, an unlisted platform cannot")
	}
	if s, ok := r.Lookup("lambda"); !ok || s.Key != "lambda" {
		t.Errorf("Lookup(lambda) = %v, %v", s.Key, ok)
	}
}

func TestRegistry_Check(t *testing.T) {
	if err := (connector.Registry{spec("runpod", "A_URL", true), spec("vast", "B_URL", true)}).Check(); err != nil {
		t.Fatalf("a complete list: %v", err)
	}
	noNew := spec("vast", "B_URL", true)
	noNew.New = nil
	noBase := spec("vast", "B_URL", true)
	noBase.Bases = nil
	badDefault := spec("vast", "B_URL", true)
	badDefault.Bases[0].Default = "api.example.com"
	noEnv := spec("vast", "", true)
	for name, c := range map[string]struct {
		r    connector.Registry
		want string
	}{
		"no key":          {connector.Registry{spec("", "A_URL", true)}, "without a key"},
		"twice":           {connector.Registry{spec("runpod", "A_URL", true), spec("runpod", "B_URL", true)}, "runpod is listed twice"},
		"no profile":      {connector.Registry{spec("nosuchcloud", "A_URL", true)}, "nosuchcloud is not the key of a profile"},
		"an alias":        {connector.Registry{spec("runpod.io", "A_URL", true)}, "runpod.io is not the key of a profile"},
		"no constructor":  {connector.Registry{noNew}, "vast has no constructor"},
		"no base":         {connector.Registry{noBase}, "vast has no API base"},
		"bad default":     {connector.Registry{badDefault}, `vast's default: B_URL: "api.example.com" is not an http(s) URL`},
		"no variable":     {connector.Registry{noEnv}, "vast has a base without a variable"},
		"shared variable": {connector.Registry{spec("runpod", "A_URL", true), spec("vast", "A_URL", true)}, "A_URL is the variable of runpod and of vast"},
	} {
		err := c.r.Check()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Check() = %v, want %q", name, err, c.want)
		}
	}
}

func TestRegistry_ReadBases(t *testing.T) {
	r := connector.Registry{spec("runpod", "A_URL", true), spec("vast", "B_URL", true)}
	env := map[string]string{"B_URL": "http://127.0.0.1:9/api/v0"}
	got, err := r.ReadBases(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if got["A_URL"] != "https://api.example.com/v1" || got["B_URL"] != "http://127.0.0.1:9/api/v0" || len(got) != 2 {
		t.Errorf("ReadBases = %v, want A_URL's default and B_URL as set", got)
	}
	for _, bad := range []string{"ftp://x", "api.example.com", "https://", "https://u:p@x", "https://x/?q=1", "://"} {
		env["B_URL"] = bad
		_, err := r.ReadBases(func(k string) string { return env[k] })
		if err == nil || !strings.HasPrefix(err.Error(), "B_URL: ") || !strings.Contains(err.Error(), "(e.g. https://api.example.com/v1)") {
			t.Errorf("B_URL=%q: err = %v, want one naming the variable with its default as the example", bad, err)
		}
	}
}

func TestRegistry_Clients(t *testing.T) {
	r := connector.Registry{spec("runpod", "A_URL", true), spec("vast", "B_URL", true)}
	clients := r.Clients(connector.BaseURLs{"A_URL": "https://a", "B_URL": "https://b"}, http.DefaultClient)
	c, err := clients("vast", "k1")
	if err != nil {
		t.Fatal(err)
	}
	if s := c.(*stub); s.platform != "vast" || s.key != "k1" || s.base != "https://b" {
		t.Errorf("clients(vast) = %+v, want vast's client at its own base with the key", s)
	}
	if _, err := clients("lambda", "k1"); err == nil || !strings.Contains(err.Error(), `"lambda" (one of runpod, vast)`) {
		t.Errorf("an unlisted platform: err = %v", err)
	}
	// A constructor's error comes back with a nil Client, not a typed nil
	// a caller's c != nil would take for a client.
	if c, err := clients("runpod", ""); err == nil || c != nil {
		t.Errorf("an unusable key: %v, %v; want a nil Client and the error", c, err)
	}
}
