package command

import (
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/gpuledger/gpuledger/ledger"
)

// Near names. A typo must not create things: a name that matches nothing
// the user has is compared with what it could have meant, and the core
// asks before it records anything on a new name. The comparison is the
// optimal string alignment distance (Damerau-Levenshtein where no part is
// edited twice): one insertion, deletion, substitution, or swap of two
// neighbouring letters counts one edit, "autdl" is one from "autodl" and
// "stauts" one from "status". Letters are compared in lower case.

// editDistance returns the optimal string alignment distance between a and
// b in runes, ignoring case.
func editDistance(a, b string) int {
	x, y := []rune(strings.ToLower(a)), []rune(strings.ToLower(b))
	// Three rows: two back (for swaps), one back, and this one.
	prev2 := make([]int, len(y)+1)
	prev := make([]int, len(y)+1)
	cur := make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d = min(d, prev2[j-2]+1)
			}
			cur[j] = d
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(y)]
}

// nearLimit is how many edits a typed word of n runes may be from a name
// for the name to be suggested: none for one or two runes (every short
// name is one edit from many others), one up to five, two beyond. The
// bound grows with the length so that a long name with two slips is still
// found while short names do not all look alike.
func nearLimit(n int) int {
	switch {
	case n <= 2:
		return 0
	case n <= 5:
		return 1
	}
	return 2
}

// maxNear bounds the suggestions of one reply (and its buttons).
const maxNear = 3

// Nearest returns the candidates nearest to typed, within nearLimit: those
// at the smallest distance found, at most maxNear, in the candidates'
// order. A candidate equal to typed (ignoring case) counts as distance 0,
// so "Box1" finds "box1". Duplicates (ignoring case) are kept once.
func Nearest(typed string, cands []string) []string {
	return nearestWith(typed, cands, false)
}

// nearestWith is nearest where, with prefixes, a candidate that starts
// with typed (of three runes or more) counts as one edit away: "/stat" is
// short for "/status" more often than a slip for "/start".
func nearestWith(typed string, cands []string, prefixes bool) []string {
	n := utf8.RuneCountInString(typed)
	limit := nearLimit(n)
	lower := strings.ToLower(typed)
	best := limit + 1
	var out []string
	seen := map[string]bool{}
	for _, c := range cands {
		k := strings.ToLower(c)
		if c == "" || seen[k] {
			continue
		}
		seen[k] = true
		// Each edit changes the length by one at most: a far longer or
		// shorter name is skipped before any work (a 4 KB command word
		// costs nothing).
		if m := utf8.RuneCountInString(c); m < n-limit || m > n+limit && !prefixes {
			continue
		}
		d := editDistance(typed, c)
		if prefixes && n >= 3 && d > 1 && strings.HasPrefix(k, lower) {
			d = 1
		}
		if c == typed || d > limit || d > best {
			continue
		}
		if d < best {
			best, out = d, out[:0]
		}
		if len(out) < maxNear {
			out = append(out, c)
		}
	}
	return out
}

// KnownPlatformNames lists the ledger's platform profiles' keys, then
// their aliases: a match on an alias suggests the profile's key.
func KnownPlatformNames() []string {
	ps := ledger.Profiles()
	var out []string
	for _, p := range ps {
		out = append(out, p.Key)
	}
	for _, p := range ps {
		out = append(out, p.Aliases...)
	}
	return out
}

// NearPlatforms returns the known platforms and the user's own (mine)
// Nearest to name, as profile keys where they are a profile's.
func NearPlatforms(name string, mine []string) []string {
	got := Nearest(name, append(KnownPlatformNames(), mine...))
	seen := map[string]bool{}
	var out []string
	for _, g := range got {
		if p, ok := ledger.LookupProfile(g); ok {
			g = p.Key
		}
		if !seen[g] && g != name {
			seen[g] = true
			out = append(out, g)
		}
	}
	return out
}

// UserPlatforms returns the platforms the user's ledger names: those of
// rentals, volumes, charges, top-ups and balances.
func UserPlatforms(b *ledger.Book) []string {
	var out []string
	for _, x := range b.Rentals {
		out = append(out, x.Platform)
	}
	for _, v := range b.Volumes {
		out = append(out, v.Platform)
	}
	for _, c := range b.Charges {
		out = append(out, c.Platform)
	}
	for _, t := range b.TopUps {
		out = append(out, t.Platform)
	}
	for _, x := range b.Balances {
		out = append(out, x.Platform)
	}
	return out
}

// NearCommands returns the command words nearest to head (without the
// slash), English names first, then the other words in sorted order.
func NearCommands(head string) []string {
	cands := make([]string, 0, len(commandNames))
	for _, x := range kinds {
		cands = append(cands, string(x.kind))
	}
	var rest []string
	for w := range commandNames {
		rest = append(rest, w)
	}
	sort.Strings(rest)
	return nearestWith(strings.ToLower(head), append(cands, rest...), true)
}
