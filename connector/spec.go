package connector

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/gpuledger/gpuledger/ledger"
)

// Spec is one platform's connector as the server wires it. Each platform
// package exports one (runpod.Spec, vast.Spec, …) and the server lists
// them once in a Registry: everything the sync, the chat and the
// configuration need to know about a platform's API is here, so a new
// platform is its package, its profile in ledger/profiles.json, its words
// in the chat's catalogs and one line in cmd/gpuledger.
type Spec struct {
	// Key is the platform's ledger profile key ("runpod"): what
	// /connect takes and what Client.Platform returns.
	Key string
	// CanStop says the API can stop an instance: compute billing ends
	// and the disk stays. False where it can only terminate (Lambda).
	// The client agrees (its Stop returns ErrNotSupported), but the sync
	// and the scheduler ask here before any call, to know which button
	// to show and whether a "stop" policy can act at all.
	CanStop bool
	// Bases are the API bases the client calls, each with the variable
	// that replaces it (for tests and self-hosted proxies), in the order
	// they are read and documented (docs/config.md).
	Bases []Base
	// KeyPage is where the user creates a key, as the chat shows it
	// ("runpod.io/console/user/settings"); "" where the console has no
	// page of its own to point at. The words around it are in the chat's
	// catalogs, in English and Chinese, under "where_" + Key.
	KeyPage string
	// New makes the client of one account: key is the user's API key,
	// base holds each of Bases by its variable, read and checked
	// (Registry.ReadBases), and hc is the HTTP client every platform
	// shares (proxy, timeouts). An error means the key cannot be used at
	// all (empty, spaces in it), before any call.
	New func(key string, base BaseURLs, hc *http.Client) (Client, error)
}

// Base is one API base of a platform: the variable that sets it and the
// documented address used when the variable is unset.
type Base struct {
	Env     string // "GPULEDGER_RUNPOD_URL"
	Default string // "https://rest.runpod.io/v1"
}

// BaseURLs are the API bases in use, by their variable's name.
type BaseURLs map[string]string

// Registry is the list of platforms the server has a connector for, in
// the order /connect lists them. It is made once, in main, and handed to
// what needs it: nothing else lists the platforms.
type Registry []Spec

// Keys are the platforms' profile keys, in order.
func (r Registry) Keys() []string {
	keys := make([]string, len(r))
	for i, s := range r {
		keys[i] = s.Key
	}
	return keys
}

// Lookup returns the spec of the platform key ("runpod"); false when no
// connector serves it.
func (r Registry) Lookup(key string) (Spec, bool) {
	i := slices.IndexFunc(r, func(s Spec) bool { return s.Key == key })
	if i < 0 {
		return Spec{}, false
	}
	return r[i], true
}

// Supports reports whether a connector serves the platform key.
func (r Registry) Supports(key string) bool {
	_, ok := r.Lookup(key)
	return ok
}

// CanStop reports whether the platform's API can stop an instance; false
// for one it can only terminate, and for a platform without a connector.
func (r Registry) CanStop(key string) bool {
	s, ok := r.Lookup(key)
	return ok && s.CanStop
}

// String is the keys as /connect lists them: "runpod, vast, lambda".
func (r Registry) String() string { return strings.Join(r.Keys(), ", ") }

// Check reports what is wrong with the list, all of it at once: a spec
// without a key, a constructor or a base; a key the ledger has no profile
// for (its rentals would have no billing rules); a key or variable given
// twice; a default that is not a usable base. The server checks at start,
// so a slip in the list shows before any user meets it.
func (r Registry) Check() error {
	var errs []error
	keys, envs := map[string]bool{}, map[string]string{}
	for _, s := range r {
		if s.Key == "" {
			errs = append(errs, errors.New("connector: a spec without a key"))
			continue
		}
		if keys[s.Key] {
			errs = append(errs, fmt.Errorf("connector: %s is listed twice", s.Key))
		}
		keys[s.Key] = true
		if p, ok := ledger.LookupProfile(s.Key); !ok || p.Key != s.Key {
			errs = append(errs, fmt.Errorf("connector: %s is not the key of a profile in ledger/profiles.json", s.Key))
		}
		if s.New == nil {
			errs = append(errs, fmt.Errorf("connector: %s has no constructor", s.Key))
		}
		if len(s.Bases) == 0 {
			errs = append(errs, fmt.Errorf("connector: %s has no API base", s.Key))
		}
		for _, b := range s.Bases {
			if b.Env == "" {
				errs = append(errs, fmt.Errorf("connector: %s has a base without a variable", s.Key))
			} else if other, dup := envs[b.Env]; dup {
				errs = append(errs, fmt.Errorf("connector: %s is the variable of %s and of %s", b.Env, other, s.Key))
			} else {
				envs[b.Env] = s.Key
			}
			if err := checkBase(b.Env, b.Default, b.Default); err != nil {
				errs = append(errs, fmt.Errorf("connector: %s's default: %w", s.Key, err))
			}
		}
	}
	return errors.Join(errs...)
}

// ReadBases reads each platform's bases from the environment, the
// documented one where a variable is unset. It refuses one that is not an
// http(s) URL with a host, so a typo shows at start and not as a failed
// /connect; the error names the variable and gives its default as the
// example.
func (r Registry) ReadBases(getenv func(string) string) (BaseURLs, error) {
	urls := BaseURLs{}
	for _, s := range r {
		for _, b := range s.Bases {
			v := getenv(b.Env)
			if v == "" {
				v = b.Default
			}
			if err := checkBase(b.Env, v, b.Default); err != nil {
				return nil, err
			}
			urls[b.Env] = v
		}
	}
	return urls, nil
}

// checkBase refuses s unless it is an http(s) URL with a host and without
// credentials or a query.
func checkBase(env, s, example string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" {
		return fmt.Errorf("%s: %q is not an http(s) URL with a host and no query (e.g. %s)", env, s, example)
	}
	return nil
}

// Clients returns the constructor the sync calls for a user's key: the
// platform's spec, pointed at base, over hc. A platform without a
// connector is an error naming the ones there are.
func (r Registry) Clients(base BaseURLs, hc *http.Client) func(platform, key string) (Client, error) {
	return func(platform, key string) (Client, error) {
		s, ok := r.Lookup(platform)
		if !ok {
			return nil, fmt.Errorf("no connector for platform %q (one of %s)", platform, r)
		}
		return s.New(key, base, hc)
	}
}

// Made returns what a platform's New returned as a Client, with a nil
// Client, not a typed nil, beside an error: a Spec's New is one line,
// return connector.Made(New(cfg)).
func Made[C Client](c C, err error) (Client, error) {
	if err != nil {
		return nil, err
	}
	return c, nil
}
