package main

import (
	"os"
	"strings"
	"testing"
)

// TestPlatforms_Registry: the server's list of platforms passes the
// registry's own check (each key a ledger profile, a constructor, usable
// default bases, no variable twice), and docs/config.md documents every
// base's variable with its default, so a platform added to the list
// without its line there fails here.
func TestPlatforms_Registry(t *testing.T) {
	if err := platforms.Check(); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for line := range strings.SplitSeq(string(doc), "\n") {
		if env, rest, ok := strings.Cut(strings.TrimPrefix(line, "| `"), "` |"); ok && strings.HasPrefix(line, "| `") {
			rows[env] = rest
		}
	}
	for _, s := range platforms {
		for _, b := range s.Bases {
			row, ok := rows[b.Env]
			if !ok {
				t.Errorf("%s: docs/config.md has no row for %s", s.Key, b.Env)
				continue
			}
			if !strings.Contains(row, "`"+b.Default+"`") {
				t.Errorf("%s: docs/config.md's row for %s does not give its default %s: %s", s.Key, b.Env, b.Default, row)
			}
		}
	}
}
