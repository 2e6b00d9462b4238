package service

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestLayers keeps the layering of docs/architecture.md: the doors (lsp,
// acp, cli, mcp and the packages below them) reach the domain through the
// service and api, never chat, prompts or a store backend directly; and no
// package below the doors imports a door. It reads every package's imports
// with go list -deps.
func TestLayers(t *testing.T) {
	t.Parallel()
	const mod = "github.com/ctxls/ctxls/"
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}\t{{join .Imports \" \"}}", mod+"cmd/ctxls", mod+"lsp/...", mod+"acp/...", mod+"cli/...", mod+"mcp/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	door := func(p string) bool {
		for _, d := range []string{"lsp", "acp", "cli", "mcp"} {
			if p == mod+d || strings.HasPrefix(p, mod+d+"/") {
				return true
			}
		}
		return false
	}
	forbidden := []string{mod + "chat", mod + "prompts", mod + "session/sqlite", mod + "session/postgres"}
	doors := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, "\t")
		if !strings.HasPrefix(pkg, mod) {
			continue
		}
		deps := strings.Fields(imports)
		if door(pkg) {
			doors++
			for _, f := range forbidden {
				if slices.Contains(deps, f) {
					t.Errorf("%s imports %s: a door calls the service (package service) instead", pkg, f)
				}
			}
			continue
		}
		if pkg == mod+"cmd/ctxls" {
			continue
		}
		for _, d := range deps {
			if door(d) {
				t.Errorf("%s imports the door %s: the domain never imports a door", pkg, d)
			}
		}
	}
	if doors < 4 {
		t.Fatalf("go list found %d door packages:\n%s", doors, out)
	}
}

// TestDoorImports: a door (lsp, acp, cli, mcp) imports of ctxls only api
// and service (and buffer, the LSP door's open documents), besides the
// CLI's internal/termsafe (text made safe for a terminal: the CLI's
// transport), which knows nothing of ctxls; never another door (cmd/ctxls
// puts the doors together: cli.Doors, and does what the process does once
// started),
// the engine, the turn's runner, the tools or the store. What a door needs
// from below, the service re-exports (turnevents.go, doors.go,
// storeadmin.go): one surface. Its own imports, not its dependencies':
// those go through the service.
func TestDoorImports(t *testing.T) {
	t.Parallel()
	const mod = "github.com/ctxls/ctxls/"
	allowed := map[string][]string{
		"lsp": {"api", "service", "buffer"},
		"acp": {"api", "service"},
		"mcp": {"api", "service"},
		"cli": {"api", "service", "internal/termsafe"},
	}
	for door, ok := range allowed {
		out, err := exec.Command("go", "list", "-f", "{{join .Imports \"\\n\"}}", mod+door).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", door, err)
		}
		n := 0
		for _, imp := range strings.Fields(string(out)) {
			if !strings.HasPrefix(imp, mod) {
				continue // the standard library, the protocols' and the transports' libraries
			}
			n++
			if !slices.Contains(ok, strings.TrimPrefix(imp, mod)) {
				t.Errorf("the door %s imports %s: it imports only %s (the service re-exports what a door needs)", door, imp, strings.Join(ok, ", "))
			}
		}
		if n == 0 {
			t.Errorf("go list found no ctxls import of %s:\n%s", door, out)
		}
	}
}

// TestOneNamePerConcept: no two exported types share a name across the
// doors, the service, the turn's runner, the engine, the tools and api (an
// alias is the same type under another package's name, and may). Two
// types named alike (chat.Turn, turn.Turn and service.Turn were three)
// make a reader of a door ask which is meant.
func TestOneNamePerConcept(t *testing.T) {
	t.Parallel()
	where := map[string][]string{}
	for _, pkg := range []string{"lsp", "acp", "cli", "mcp", "service", "turn", "chat", "tool", "api"} {
		files, _ := filepath.Glob(filepath.Join("..", pkg, "*.go"))
		fset := token.NewFileSet()
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range af.Decls {
				gd, ok := d.(*ast.GenDecl)
				if !ok || gd.Tok != token.TYPE {
					continue
				}
				for _, sp := range gd.Specs {
					ts := sp.(*ast.TypeSpec)
					if ts.Name.IsExported() && !ts.Assign.IsValid() {
						where[ts.Name.Name] = append(where[ts.Name.Name], pkg)
					}
				}
			}
		}
	}
	if len(where) < 100 {
		t.Fatalf("found only %d exported types", len(where))
	}
	for name, pkgs := range where {
		if len(pkgs) > 1 {
			t.Errorf("%s is a type of %s: one name per concept (rename one, or make it an alias of the other)", name, strings.Join(pkgs, " and "))
		}
	}
}

// TestShortFunctions: no function of the service, the engine or the doors
// is over 80 lines (generated files and tests aside): a longer one is read
// in pieces anyway, so it is written in pieces with names.
func TestShortFunctions(t *testing.T) {
	t.Parallel()
	const most = 80
	funcs := 0
	for _, pkg := range []string{"service", "turn", "chat", "lsp", "acp", "cli", "mcp"} {
		files, _ := filepath.Glob(filepath.Join("..", pkg, "*.go"))
		fset := token.NewFileSet()
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(fset, f, nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			if ast.IsGenerated(af) {
				continue
			}
			ast.Inspect(af, func(n ast.Node) bool {
				var body *ast.BlockStmt
				switch fn := n.(type) {
				case *ast.FuncDecl:
					body = fn.Body
				case *ast.FuncLit:
					body = fn.Body
				}
				if body == nil {
					return true
				}
				funcs++
				start, end := fset.Position(n.Pos()), fset.Position(body.End())
				if lines := end.Line - start.Line + 1; lines > most {
					t.Errorf("%s: a function of %d lines (at most %d)", start, lines, most)
				}
				return true
			})
		}
	}
	if funcs < 500 {
		t.Fatalf("found only %d functions", funcs)
	}
}

// TestDomainSeams: the session types know no LSP (session imports no
// go.lsp.dev package, directly or not), and the engine knows no database
// driver (chat imports no store backend, pgx or SQLite driver).
func TestDomainSeams(t *testing.T) {
	t.Parallel()
	const mod = "github.com/ctxls/ctxls/"
	for pkg, forbidden := range map[string][]string{
		mod + "session": {"go.lsp.dev/"},
		mod + "chat":    {mod + "session/backend", mod + "session/sqlite", mod + "session/postgres", "github.com/jackc/", "modernc.org/sqlite"},
	} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, f := range forbidden {
				if strings.HasPrefix(dep, f) {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}

// TestServiceFields keeps Service small enough to read (issue 31: at most
// 30 fields): related fields go into a struct of their own.
func TestServiceFields(t *testing.T) {
	if n := reflect.TypeOf(Service{}).NumField(); n > 30 {
		t.Errorf("Service has %d fields; group related ones (at most 30)", n)
	}
}

// TestServiceSize keeps package service to the adapting of the domain to
// api (issue 31: at most 3,000 lines besides tests): rules of their own
// go to the package they are about (workspace, search, session, chat).
func TestServiceSize(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	lines := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += strings.Count(string(data), "\n")
	}
	if lines > 3000 {
		t.Errorf("package service has %d lines besides its tests (at most 3,000)", lines)
	}
}
