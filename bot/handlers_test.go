package bot

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gpuledger/gpuledger/bot/command"
	"github.com/gpuledger/gpuledger/chat"
)

// commandTypes reads the parser's package and returns the name of every
// type with a Kind method: every command Parse can return.
func commandTypes(t *testing.T) []string {
	t.Helper()
	dir := "command"
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var names []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		file, err := parser.ParseFile(fset, f, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Name.Name != "Kind" || len(fn.Recv.List) != 1 {
				continue
			}
			if id, ok := fn.Recv.List[0].Type.(*ast.Ident); ok {
				names = append(names, id.Name)
			}
		}
	}
	slices.Sort(names)
	return names
}

// TestHandlers_OnePerCommand: every command type of the parser has exactly
// one handler in the core's table, and the table holds no other type, so a
// new command cannot be forgotten nor registered twice.
func TestHandlers_OnePerCommand(t *testing.T) {
	names := commandTypes(t)
	if len(names) < 30 {
		t.Fatalf("found %d command types in the parser's package, want them all: %v", len(names), names)
	}
	tab := newTable()
	for _, k := range tab.dups {
		t.Errorf("%v has more than one handler", k)
	}
	pkg := reflect.TypeFor[command.RentCmd]().PkgPath()
	var have []string
	for k := range tab.by {
		if k.PkgPath() != pkg {
			t.Errorf("handler for %v, not a command of %s", k, pkg)
			continue
		}
		have = append(have, k.Name())
	}
	slices.Sort(have)
	for _, n := range names {
		if _, ok := slices.BinarySearch(have, n); !ok {
			t.Errorf("command.%s has no handler", n)
		}
	}
	for _, n := range have {
		if _, ok := slices.BinarySearch(names, n); !ok {
			t.Errorf("a handler for command.%s, which has no Kind method", n)
		}
	}
}

// TestDispatch_NoHandler: a command type nobody registered is an error
// that names it, not a panic nor a silent success.
func TestDispatch_NoHandler(t *testing.T) {
	r := &req{u: chat.Update{ChatType: chat.ChatPrivate}}
	err := r.dispatchCmd(unregistered{})
	if err == nil || !strings.Contains(err.Error(), "no handler for command bot.unregistered") {
		t.Fatalf("dispatchCmd(unregistered) = %v, want no handler for command bot.unregistered", err)
	}
}

type unregistered struct{}

func (unregistered) Kind() command.Kind { return "unregistered" }
