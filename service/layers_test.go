package service

import (
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
