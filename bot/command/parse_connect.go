package command

import (
	"strconv"
	"strings"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// The platform commands: /connect, /disconnect, /reconcile.
//
// /connect carries a secret. Its words are read as they were typed (no
// merging of tokens), and no error it gives quotes a word of it: a key
// typed in the platform's place, or a key with a typo, must never come
// back in a reply or a log. A malformed /connect is not a parse error
// either: it is a ConnectCmd with Err set, so the core deletes the
// message that may hold a key before it answers.

// ConnectPlatforms are the platforms /connect and /disconnect read as
// platforms to connect, in the order their errors list them. The parser
// is a function of the text alone, so it keeps its own copy of the
// server's list (cmd/gpuledger's connector.Registry); bot.New refuses
// connectors it does not read.
var ConnectPlatforms = []string{"runpod", "vast", "lambda", "autodl"}

// Key bounds: API keys are printable ASCII without spaces; RunPod's,
// Vast.ai's, Lambda's and AutoDL's are 32 to a few hundred characters.
const (
	minKeyLen = 8
	maxKeyLen = 1024
)

// ConnectCmd is /connect: with neither Platform nor Key, the listing;
// with both, the key to check and store. Secret is set when the message
// has words beyond a platform name, which may be a key: the core deletes
// the message whatever else is wrong with it. Err, when set, is what is
// wrong, to answer once the message is deleted.
type ConnectCmd struct {
	Platform string // profile key, "" when not given or not a platform
	Key      string
	Secret   bool
	Err      *ParseError
}

// DisconnectCmd is /disconnect PLATFORM.
type DisconnectCmd struct {
	Platform string
}

// ReconcileCmd is /reconcile [YYYY-MM]: the month [From, To) in the
// user's zone; Month is "YYYY-MM".
type ReconcileCmd struct {
	Month    string
	From, To time.Time
}

func (ConnectCmd) Kind() Kind    { return KindConnect }
func (DisconnectCmd) Kind() Kind { return KindDisconnect }
func (ReconcileCmd) Kind() Kind  { return KindReconcile }

// ConnectPlatform returns the /connect platform a word names (aliases
// included), and whether the word names a platform the ledger knows at
// all (so an error may quote it: a known platform name is no secret).
func ConnectPlatform(word string) (key string, connectable, known bool) {
	k, ok := ledger.CanonicalPlatform(word)
	if !ok {
		return "", false, false
	}
	for _, p := range ConnectPlatforms {
		if p == k {
			return k, true, true
		}
	}
	return k, false, true
}

// platformList is "runpod, vast, lambda, autodl".
func platformList() string { return strings.Join(ConnectPlatforms, ", ") }

// connect parses /connect's words, as typed: "", "PLATFORM KEY", or
// "KEY PLATFORM" (the order does not matter; one of them must name a
// platform).
func (p *parser) connect(toks []string) (Command, error) {
	c := ConnectCmd{}
	fail := func(key string, args ...string) (Command, error) {
		c.Key = ""
		c.Err = newParseError(KindConnect, key, args...)
		return c, nil
	}
	switch len(toks) {
	case 0:
		return c, nil
	case 1:
		plat, ok, known := ConnectPlatform(toks[0])
		if ok {
			c.Platform = plat
			return fail("connect_no_key", plat)
		}
		if known {
			return fail("connect_unsupported", quote(toks[0]), platformList())
		}
		c.Secret = true
		return fail("connect_no_platform", platformList())
	case 2:
	default:
		c.Secret = true
		return fail("connect_words", platformList())
	}
	c.Secret = true
	a, b := toks[0], toks[1]
	plat, ok, known := ConnectPlatform(a)
	key := b
	if !ok && !known {
		if p2, ok2, known2 := ConnectPlatform(b); ok2 || known2 {
			plat, ok, known, key = p2, ok2, known2, a
		}
	}
	switch {
	case ok:
		c.Platform = plat
	case known:
		return fail("connect_unsupported", quote(plat), platformList())
	default:
		return fail("connect_no_platform", platformList())
	}
	key = strings.TrimPrefix(key, "key=")
	if n := len(key); n < minKeyLen || n > maxKeyLen {
		return fail("connect_key_length", strconv.Itoa(n), strconv.Itoa(minKeyLen), strconv.Itoa(maxKeyLen), c.Platform)
	}
	for i := 0; i < len(key); i++ {
		if key[i] <= ' ' || key[i] > '~' {
			return fail("connect_key_chars", c.Platform)
		}
	}
	c.Key = key
	return c, nil
}

// disconnect parses /disconnect PLATFORM.
func (p *parser) disconnect(toks []string) (Command, error) {
	if len(toks) != 1 {
		if len(toks) == 0 {
			return nil, p.err("disconnect_usage", platformList())
		}
		return nil, p.err("unexpected", quote(toks[1]), string(KindDisconnect))
	}
	plat, ok, known := ConnectPlatform(toks[0])
	if !ok {
		if known {
			return nil, p.err("connect_unsupported", quote(toks[0]), platformList())
		}
		return nil, p.err("disconnect_platform", quote(toks[0]), platformList())
	}
	return DisconnectCmd{Platform: plat}, nil
}

// reconcile parses /reconcile [YYYY-MM]: the current month in the user's
// zone by default; a month after it is an error (nothing is billed yet).
func (p *parser) reconcile(toks []string) (Command, error) {
	local := p.now.In(p.loc)
	y, m := local.Year(), local.Month()
	switch len(toks) {
	case 0:
	case 1:
		w := strings.ToLower(toks[0])
		switch w {
		case "month", "this-month", "本月", "这个月":
		case "last-month", "上月", "上个月":
			m--
		default:
			yy, mm, ok := parseYearMonth(w)
			if !ok {
				return nil, p.err("bad_month", quote(toks[0]))
			}
			if yy > y || yy == y && mm > m {
				return nil, p.err("future_month", quote(toks[0]), local.Format("2006-01"))
			}
			y, m = yy, mm
		}
	default:
		return nil, p.err("unexpected", quote(toks[1]), string(KindReconcile))
	}
	from := time.Date(y, m, 1, 0, 0, 0, 0, p.loc)
	return ReconcileCmd{Month: from.Format("2006-01"), From: from, To: from.AddDate(0, 1, 0)}, nil
}

// parseYearMonth reads "YYYY-MM" (also "YYYY/MM"), years 2000..2200.
func parseYearMonth(w string) (int, time.Month, bool) {
	w = strings.ReplaceAll(w, "/", "-")
	if len(w) != 7 || w[4] != '-' || !isDigits(w[:4]) || !isDigits(w[5:]) {
		return 0, 0, false
	}
	y, _ := strconv.Atoi(w[:4])
	m, _ := strconv.Atoi(w[5:])
	if y < 2000 || y > 2200 || m < 1 || m > 12 {
		return 0, 0, false
	}
	return y, time.Month(m), true
}
