package ledger_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuledger/gpuledger/ledger"
)

// TestErrorc_NoWords: a keyed error carries its key and arguments and no
// text of its own (the words are view's); its Error, for logs, names the
// code, the key and the arguments, times in UTC.
func TestErrorc_NoWords(t *testing.T) {
	at := time.Date(2026, 11, 2, 9, 30, 0, 0, time.FixedZone("CST", 8*3600))
	err := ledger.Errorc(ledger.EINVALID, "before_start", "stop", at, "box1", 90*time.Minute)
	if err.Message != "" {
		t.Errorf("Message = %q, want none: the ledger keeps no words for a keyed error", err.Message)
	}
	want := `ledger: invalid: before_start("stop", 2026-11-02 01:30:00Z, "box1", 1h30m0s)`
	if got := err.Error(); got != want {
		t.Errorf("Error() = %s, want %s", got, want)
	}
	for key := range ledger.ErrorKeys() {
		if e := ledger.Errorc(ledger.ECONFLICT, key); e.Message != "" || !strings.HasPrefix(e.Error(), "ledger: conflict: "+key+"(") {
			t.Errorf("%s: Message %q, Error %s", key, e.Message, e.Error())
		}
	}
	if got := ledger.Errorf(ledger.ENOTFOUND, "no order %q", "o-1").Error(); got != `ledger: not_found: no order "o-1"` {
		t.Errorf("Errorf's Error() = %s", got)
	}
}

// TestErrorKeys_EveryCall parses the module's Go files and checks that
// every Errorc call with a literal key names a key of ErrorKeys with as
// many arguments as the key carries: a new refusal cannot reach a user
// without its words (view's catalog test walks ErrorKeys).
func TestErrorKeys_EveryCall(t *testing.T) {
	keys := ledger.ErrorKeys()
	used := map[string]bool{}
	fset := token.NewFileSet()
	root := ".."
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || n == "node_modules" || strings.HasPrefix(n, ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) < 2 {
				return true
			}
			switch fn := call.Fun.(type) {
			case *ast.Ident:
				if fn.Name != "Errorc" {
					return true
				}
			case *ast.SelectorExpr:
				if x, ok := fn.X.(*ast.Ident); !ok || x.Name != "ledger" || fn.Sel.Name != "Errorc" {
					return true
				}
			default:
				return true
			}
			lit, ok := call.Args[1].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true // a key computed at run time: the view's test sees its texts
			}
			key, _ := strconv.Unquote(lit.Value)
			used[key] = true
			want, known := keys[key]
			switch {
			case !known:
				t.Errorf("%s: Errorc key %q is not in ErrorKeys", fset.Position(call.Pos()), key)
			case call.Ellipsis == token.NoPos && len(call.Args)-2 != want:
				t.Errorf("%s: Errorc(%q) with %d arguments, the key carries %d", fset.Position(call.Pos()), key, len(call.Args)-2, want)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(used) < len(keys)/2 {
		t.Fatalf("found %d keys in Errorc calls of %d: is the walk reading the module?", len(used), len(keys))
	}
}
