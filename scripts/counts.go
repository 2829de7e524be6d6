//go:build ignore

// Counts prints the structure figures the corridors are judged by, for
// the tree in the directory given (default "."): the exported names of
// the chat core's packages, the receivers with the most methods, the
// lines of the server's main package, the longest functions. Test files
// are left out. Run it on two checkouts to compare:
//
//	go run scripts/counts.go . && go run scripts/counts.go ../other
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type fn struct {
	name  string
	lines int
}

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	fset := token.NewFileSet()
	exported := map[string]int{}  // package dir -> exported names and methods
	receivers := map[string]int{} // dir.Type -> methods
	var funcs []fn
	mainLines := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if strings.HasPrefix(rel, "scripts"+string(filepath.Separator)) {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		if dir == "cmd/gpuledger" {
			b, _ := os.ReadFile(path)
			mainLines += strings.Count(string(b), "\n")
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				lines := fset.Position(d.End()).Line - fset.Position(d.Pos()).Line + 1
				name := dir + "." + d.Name.Name
				if d.Recv != nil && len(d.Recv.List) == 1 {
					t := d.Recv.List[0].Type
					if s, ok := t.(*ast.StarExpr); ok {
						t = s.X
					}
					if ix, ok := t.(*ast.IndexExpr); ok {
						t = ix.X
					}
					if id, ok := t.(*ast.Ident); ok {
						receivers[dir+"."+id.Name]++
						name = dir + ".(" + id.Name + ")." + d.Name.Name
						if id.IsExported() && d.Name.IsExported() {
							exported[dir]++
						}
					}
				} else if d.Name.IsExported() {
					exported[dir]++
				}
				funcs = append(funcs, fn{name, lines})
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							exported[dir]++
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								exported[dir]++
							}
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("tree %s\n", root)
	for _, p := range []string{"bot", "bot/command", "chat", "ledger/sqlite"} {
		if n, ok := exported[p]; ok {
			fmt.Printf("exported names (and methods) of %-14s %d\n", p, n)
		}
	}
	type kv struct {
		k string
		v int
	}
	var rs []kv
	for k, v := range receivers {
		rs = append(rs, kv{k, v})
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].v > rs[j].v || rs[i].v == rs[j].v && rs[i].k < rs[j].k })
	for i := 0; i < 4 && i < len(rs); i++ {
		fmt.Printf("methods of receiver %-28s %d\n", rs[i].k, rs[i].v)
	}
	fmt.Printf("lines of cmd/gpuledger (non-test) %d\n", mainLines)
	sort.Slice(funcs, func(i, j int) bool { return funcs[i].lines > funcs[j].lines })
	for i := 0; i < 4 && i < len(funcs); i++ {
		fmt.Printf("long function %-50s %d lines\n", funcs[i].name, funcs[i].lines)
	}
}
