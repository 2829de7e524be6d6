package boundary

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// module is the module's path, the prefix of its own packages.
const module = "github.com/gpuledger/gpuledger"

// listed is the part of `go list -json` output the rules read.
type listed struct {
	ImportPath string
	Standard   bool
	Imports    []string
	CgoFiles   []string
	DepOnly    bool
	Error      *struct{ Err string }
}

// check returns why a package in a rule's dependency closure breaks the
// rule, or "" when it does not.
type check func(p *listed) string

// rule is one boundary: every package that roots (patterns relative to the
// module root) link when built with env must pass check.
type rule struct {
	name  string
	roots []string
	env   []string
	check check
}

// Build settings the rules are evaluated under. The agent ships as a cgo
// build for linux/amd64 (NVML); the server ships without cgo, but its rule
// is checked with cgo on, where a package with cgo files would show.
var (
	linuxCgo   = []string{"GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=1"}
	linuxNoCgo = []string{"GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=0"}
)

// agentForbids is what the agent binary must not link: it runs on a rented
// machine, small, with no storage or chat of its own.
var agentForbids = forbid(named("sqlite"), tree("github.com/go-telegram-bot-api"), tree("github.com/prometheus"), tree(module+"/ledger"), tree(module+"/bot"), tree(module+"/scheduler"))

// rules are the module's dependency boundaries, one line each.
var rules = []rule{
	{"the ledger imports only the standard library and stdlib-only leaf packages", []string{"./ledger"}, linuxCgo, onlyStdAnd(module+"/internal/clip", module+"/perf")},
	{"perf, the bench's figures and references, is a leaf: only the standard library", []string{"./perf"}, linuxCgo, onlyStdAnd()},
	{"the agent links no SQLite, Telegram, Prometheus, ledger, bot or scheduler", []string{"./cmd/gpuledger-agent"}, linuxCgo, agentForbids},
	{"the agent without cgo links no SQLite, Telegram, Prometheus, ledger, bot or scheduler", []string{"./cmd/gpuledger-agent"}, linuxNoCgo, agentForbids},
	{"the server has no cgo code outside the standard library", []string{"./cmd/gpuledger"}, linuxCgo, noCgoOutsideStd},
	{"the chat vocabulary imports only the standard library and stdlib-only leaf packages", []string{"./chat"}, linuxCgo, onlyStdAnd(module + "/internal/clip")},
	{"the platform connectors import only the standard library, the ledger and stdlib-only leaf packages (no chat, store or agent)", []string{"./connector/..."}, linuxCgo, onlyStdAnd(module+"/internal/clip", module+"/perf", module+"/ledger")},
	{"the binaries link no browser harness (chromedp is for tests alone)", []string{"./cmd/..."}, linuxCgo, forbid(tree("github.com/chromedp"), exactly(module+"/internal/browser"))},
	{"the views, the scheduler, the transports and hubload do not link the core or the parser", []string{"./view", "./scheduler", "./bot/telegram", "./bot/console", "./cmd/hubload"}, linuxCgo, forbid(exactly(module+"/bot"), exactly(module+"/bot/command"))},
	{"the room-following send imports only the standard library, the ledger, the chat vocabulary and stdlib-only leaf packages (no actor: the scheduler and the sync both use it)", []string{"./teamroom"}, linuxCgo, onlyStdAnd(module+"/internal/clip", module+"/perf", module+"/ledger", module+"/chat")},
	{"the parser imports only the standard library, the ledger, the chat vocabulary and stdlib-only leaf packages (no store, core, scheduler, hub or transport)", []string{"./bot/command"}, linuxCgo, onlyStdAnd(module+"/internal/clip", module+"/perf", module+"/ledger", module+"/chat")},
	{"the core links no store, scheduler, hub, platform sync or transport: they meet it through its Config and the chat's types", []string{"./bot"}, linuxCgo, forbid(tree(module+"/ledger/sqlite"), exactly(module+"/scheduler"), exactly(module+"/agent/hub"), exactly(module+"/connsync"), tree(module+"/bot/telegram"), tree(module+"/bot/console"))},
	{"the scheduler and the views do not import the wire protocol (the ledger has the order words; the hub maps them)", []string{"./scheduler", "./view"}, linuxCgo, forbid(exactly(module + "/agent/wire"))},
	{"only the binaries link the event bus: the actors publish and subscribe through the ledger's interfaces, and main makes the one bus", []string{"./agent/...", "./bot/...", "./chat", "./connector/...", "./connsync", "./dashboard/...", "./ledger/...", "./scheduler", "./view"}, linuxCgo, forbid(exactly(module + "/events"))},
	actorRule("./agent/hub"),
	actorRule("./scheduler"),
	actorRule("./connsync"),
	actorRule("./dashboard"),
	actorRule("./bot"),
}

// actors are the server's parts that main builds in one pass (the hub, the
// scheduler, the platform sync, the dashboard, the chat core).
var actors = []string{"./agent/hub", "./scheduler", "./connsync", "./dashboard", "./bot"}

// actorRule is the rule that keeps the corridors straight for one actor: it
// links none of the others, so none can call another but through what main
// hands it at construction (an interface in its Config), and no forwarder
// or late setter can be needed to close a cycle.
func actorRule(self string) rule {
	var others []func(string) bool
	for _, a := range actors {
		if a != self {
			others = append(others, exactly(module+strings.TrimPrefix(a, ".")))
		}
	}
	return rule{"the actor " + strings.TrimPrefix(self, "./") + " links no other actor (hub, scheduler, sync, dashboard, core): they meet only in main", []string{self}, linuxCgo, forbid(others...)}
}

// TestBoundaries checks every rule against what go list says the roots
// link, and names the import chain that breaks one.
func TestBoundaries(t *testing.T) {
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			pkgs := goList(t, r.env, r.roots)
			for _, msg := range violations(r, pkgs) {
				t.Error(msg)
			}
		})
	}
}

// TestServerBuildsWithoutCgo builds the server for real with CGO_ENABLED=0:
// go list cannot see code that compiles only when cgo is on.
func TestServerBuildsWithoutCgo(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "gpuledger")
	out, err := goCmd(t, linuxNoCgo, "build", "-o", bin, "./cmd/gpuledger").CombinedOutput()
	if err != nil {
		t.Fatalf("CGO_ENABLED=0 go build ./cmd/gpuledger: %v\n%s", err, out)
	}
}

// violations lists, for each package of pkgs (the closure of r.roots) that
// breaks r and is not imported only through another that does, the rule
// and the shortest import chain from a root to it.
// Packages go list could not load break every rule: what cannot be listed
// cannot be checked.
func violations(r rule, pkgs map[string]*listed) []string {
	var roots []string
	for _, p := range pkgs {
		if !p.DepOnly {
			roots = append(roots, p.ImportPath)
		}
	}
	slices.Sort(roots)
	why := map[string]string{}
	for path, p := range pkgs {
		w := r.check(p)
		if p.Error != nil {
			w = "go list: " + p.Error.Err
		}
		if w != "" {
			why[path] = w
		}
	}
	var out []string
	for path, w := range why {
		c := chain(pkgs, roots, path)
		// Only the first offender on a chain is named: what it pulls in
		// goes when it goes, and one line says what to fix.
		if slices.ContainsFunc(c[:len(c)-1], func(at string) bool { return why[at] != "" }) {
			continue
		}
		out = append(out, fmt.Sprintf("rule %q broken: %s (%s)", r.name, strings.Join(c, " → "), w))
	}
	slices.Sort(out)
	return out
}

// chain is the shortest import chain from one of roots to target, found by
// a breadth-first walk of the import graph; just target if none reaches it.
func chain(pkgs map[string]*listed, roots []string, target string) []string {
	prev := map[string]string{}
	queue := slices.Clone(roots)
	for _, r := range roots {
		prev[r] = ""
	}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == target {
			var c []string
			for at := cur; at != ""; at = prev[at] {
				c = append(c, at)
			}
			slices.Reverse(c)
			return c
		}
		p, ok := pkgs[cur]
		if !ok {
			continue
		}
		for _, imp := range p.Imports {
			if _, seen := prev[imp]; !seen {
				prev[imp] = cur
				queue = append(queue, imp)
			}
		}
	}
	return []string{target}
}

// onlyStdAnd allows the standard library and the listed packages of the
// module (leaves that themselves import only the standard library, which
// their own closure shows: their imports are checked by the same rule).
func onlyStdAnd(allowed ...string) check {
	return func(p *listed) string {
		if p.Standard || !p.DepOnly || slices.Contains(allowed, p.ImportPath) {
			return ""
		}
		if strings.HasPrefix(p.ImportPath, module+"/") {
			return "a package of the module not allowed here"
		}
		return "outside the standard library"
	}
}

// forbid refuses every package one of match matches.
func forbid(match ...func(path string) bool) check {
	return func(p *listed) string {
		for _, m := range match {
			if m(p.ImportPath) {
				return "forbidden here"
			}
		}
		return ""
	}
}

// tree matches the package prefix and every package below it.
func tree(prefix string) func(string) bool {
	return func(path string) bool { return path == prefix || strings.HasPrefix(path, prefix+"/") }
}

// exactly matches the one package path, not those below it.
func exactly(path string) func(string) bool {
	return func(p string) bool { return p == path }
}

// named matches a package with word in any element of its path (so any
// SQLite driver, not only the one the server uses).
func named(word string) func(string) bool {
	return func(path string) bool {
		return slices.ContainsFunc(strings.Split(path, "/"), func(el string) bool {
			return strings.Contains(strings.ToLower(el), word)
		})
	}
}

// noCgoOutsideStd refuses a package with cgo files. The standard library's
// (runtime/cgo, net's libc resolver, os/user) are let through: each has a
// pure-Go build that CGO_ENABLED=0 selects, and the server ships that way.
func noCgoOutsideStd(p *listed) string {
	if p.Standard || len(p.CgoFiles) == 0 {
		return ""
	}
	return "has cgo files " + strings.Join(p.CgoFiles, ", ")
}

// goList runs `go list -e -deps -json` on roots under env and returns the
// packages by import path.
func goList(t *testing.T, env, roots []string) map[string]*listed {
	t.Helper()
	cmd := goCmd(t, env, append([]string{"list", "-e", "-deps", "-json=ImportPath,Standard,Imports,CgoFiles,DepOnly,Error"}, roots...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v\n%s", roots, err, stderr.Bytes())
	}
	pkgs := map[string]*listed{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		p := new(listed)
		if err := dec.Decode(p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list %v: decoding its output: %v", roots, err)
		}
		pkgs[p.ImportPath] = p
	}
	if len(pkgs) == 0 {
		t.Fatalf("go list %v listed no packages", roots)
	}
	return pkgs
}

// goCmd is the go command that runs this test, at the module root, with env
// on top of the test's environment. The go command is required, not
// optional: go test itself needs it, so the test never skips.
func goCmd(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		// go test puts its own GOROOT/bin first on PATH; this is for a
		// test binary run by hand.
		if root := os.Getenv("GOROOT"); root != "" {
			gobin = filepath.Join(root, "bin", "go")
		}
	}
	if gobin == "" {
		t.Fatalf("the go command is needed to list dependencies: %v", err)
	}
	cmd := exec.Command(gobin, args...)
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// TestViolations checks the reporting on a hand-made graph: the shortest
// chain is named, and what a forbidden package pulls in is not named again.
func TestViolations(t *testing.T) {
	pkgs := map[string]*listed{
		"a":         {ImportPath: "a", Imports: []string{"b", "fmt"}},
		"b":         {ImportPath: "b", DepOnly: true, Imports: []string{"bad", "c"}},
		"c":         {ImportPath: "c", DepOnly: true, Imports: []string{"bad"}},
		"bad":       {ImportPath: "bad", DepOnly: true, Imports: []string{"bad/inner"}},
		"bad/inner": {ImportPath: "bad/inner", DepOnly: true},
		"fmt":       {ImportPath: "fmt", DepOnly: true, Standard: true, Error: &struct{ Err string }{"no such thing"}},
	}
	got := violations(rule{name: "r", check: forbid(tree("bad"))}, pkgs)
	want := []string{
		`rule "r" broken: a → b → bad (forbidden here)`,
		`rule "r" broken: a → fmt (go list: no such thing)`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n got %q\nwant %q", got, want)
	}
}
