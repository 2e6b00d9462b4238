package tool

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"go.lsp.dev/uri"

	"github.com/ctxls/ctxls/api"
)

func diag(line, col uint32, sev api.DiagnosticSeverity, source, code, msg string) api.Diagnostic {
	d := api.Diagnostic{Severity: sev, Source: source, Message: msg}
	d.Range.Start = api.Position{Line: line, Character: col}
	if code != "" {
		d.Code = json.RawMessage(code)
	}
	return d
}

// TestFormatDiagnostics: errors first, then warnings (information and
// hints left out), by path and position; paths relative to their workspace
// folder; 1-based lines and columns; codes as text; files outside the
// workspace and URIs that are not files left out; the path filter; the cap
// with the count left out.
func TestFormatDiagnostics(t *testing.T) {
	root, other := "/home/ann/app", "/home/ann/lib"
	file := func(p string) string { return string(uri.File(p)) }
	files := []api.FileDiagnostics{
		{URI: file(root + "/z.go"), Diagnostics: []api.Diagnostic{
			diag(9, 0, api.SeverityWarning, "vet", "", "unused result"),
			diag(2, 4, api.SeverityError, "compiler", `"UndeclaredName"`, "undefined: x"),
			diag(0, 0, api.SeverityInformation, "gopls", "", "info left out"),
			diag(0, 0, api.SeverityHint, "gopls", "", "hint left out"),
		}},
		{URI: file(root + "/src/a b.ts"), Diagnostics: []api.Diagnostic{
			diag(0, 6, 0, "ts", "2304", "Cannot find name 'y'.\nDid you mean 'x'?"),
			diag(4, 1, api.SeverityWarning, "", `{"value": "no-unused", "target": "https://eslint.org"}`, "unused"),
		}},
		{URI: file(other + "/lib.go"), Diagnostics: []api.Diagnostic{diag(0, 0, api.SeverityError, "compiler", "", "in the second folder")}},
		{URI: file("/etc/outside.conf"), Diagnostics: []api.Diagnostic{diag(0, 0, api.SeverityError, "x", "", "outside")}},
		{URI: "untitled:Untitled-1", Diagnostics: []api.Diagnostic{diag(0, 0, api.SeverityError, "x", "", "not a file")}},
		{URI: file(root + "/clean.go")},
	}
	roots := []string{root, other}
	want := strings.Join([]string{
		"lib.go:1:1 error compiler: in the second folder",
		"src/a b.ts:1:7 error ts(2304): Cannot find name 'y'.\n    Did you mean 'x'?",
		"z.go:3:5 error compiler(UndeclaredName): undefined: x",
		"src/a b.ts:5:2 warning (no-unused): unused",
		"z.go:10:1 warning vet: unused result",
	}, "\n")
	if got := formatDiagnostics(roots, files, ""); got != want {
		t.Errorf("all:\n%s\nwant:\n%s", got, want)
	}
	if got := formatDiagnostics(roots, files, root+"/src"); got != "src/a b.ts:1:7 error ts(2304): Cannot find name 'y'.\n    Did you mean 'x'?\nsrc/a b.ts:5:2 warning (no-unused): unused" {
		t.Errorf("a folder: %q", got)
	}
	if got := formatDiagnostics(roots, files, root+"/z.go"); got != "z.go:3:5 error compiler(UndeclaredName): undefined: x\nz.go:10:1 warning vet: unused result" {
		t.Errorf("a file: %q", got)
	}
	for _, p := range []string{root + "/clean.go", root + "/zz"} {
		if got := formatDiagnostics(roots, files, p); got != "No errors or warnings." {
			t.Errorf("%s: %q", p, got)
		}
	}
	// Without workspace folders every file is shown, by its absolute path.
	if got := formatDiagnostics(nil, files[3:4], ""); got != "/etc/outside.conf:1:1 error x: outside" {
		t.Errorf("no folders: %q", got)
	}

	// The cap: 100 diagnostics, errors first, then the count left out.
	var many []api.Diagnostic
	for i := range 150 {
		sev := api.SeverityWarning
		if i%3 == 0 {
			sev = api.SeverityError
		}
		many = append(many, diag(uint32(i), 0, sev, "lint", "", fmt.Sprintf("problem %d", i)))
	}
	got := formatDiagnostics(roots, []api.FileDiagnostics{{URI: file(root + "/big.go"), Diagnostics: many}}, "")
	lines := strings.Split(got, "\n")
	if len(lines) != 101 || !strings.HasPrefix(lines[0], "big.go:1:1 error") || !strings.HasPrefix(lines[49], "big.go:148:1 error") ||
		!strings.HasPrefix(lines[50], "big.go:2:1 warning") || lines[100] != "(50 more left out: 0 errors, 50 warnings; ask for a file or folder to see its own)" {
		t.Errorf("capped at 100: %d lines, %q … %q", len(lines), lines[0], lines[len(lines)-1])
	}
	// And 64 KiB.
	long := strings.Repeat("x", 1900)
	many = many[:0]
	for i := range 60 {
		many = append(many, diag(uint32(i), 0, api.SeverityError, "lint", "", long))
	}
	got = formatDiagnostics(roots, []api.FileDiagnostics{{URI: file(root + "/big.go"), Diagnostics: many}}, "")
	lines = strings.Split(got, "\n")
	if len(got) > maxDiagnosticsBytes || !strings.HasPrefix(lines[len(lines)-1], fmt.Sprintf("(%d more left out: %d errors, 0 warnings", 60-len(lines)+1, 60-len(lines)+1)) || len(lines) < 30 {
		t.Errorf("capped at 64 KiB: %d bytes, %d lines, last %q", len(got), len(lines), lines[len(lines)-1])
	}
}

// TestDiagnosticsTool: the schema is generated from diagnosticsArgs (an
// optional path); the path argument is resolved against the workspace.
func TestDiagnosticsTool(t *testing.T) {
	def := diagnosticsTool.def()
	var schema struct {
		Type       string
		Properties map[string]struct{ Type, Description string }
		Required   []string
	}
	if err := json.Unmarshal(def.Function.Parameters.(json.RawMessage), &schema); err != nil {
		t.Fatal(err)
	}
	if def.Function.Name != "diagnostics" || schema.Type != "object" || schema.Properties["path"].Type != "string" ||
		!strings.Contains(schema.Properties["path"].Description, "relative to the workspace") || len(schema.Required) != 0 {
		t.Errorf("the tool: %s %s", def.Function.Name, def.Function.Parameters)
	}
	root := t.TempDir()
	for _, c := range []struct{ in, want, err string }{
		{"", "", ""},
		{".", "", ""},
		{"src/a.go", filepath.Join(root, "src", "a.go"), ""},
		{root + "/src", filepath.Join(root, "src"), ""},
		{string(uri.File(root + "/x y.go")), filepath.Join(root, "x y.go"), ""},
		{"../elsewhere", "", "outside the workspace folders"},
		{"/etc/passwd", "", "outside the workspace folders"},
	} {
		got, err := diagnosticsPath([]string{root}, c.in)
		if got != c.want || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: %q, %v", c.in, got, err)
		}
	}
	if _, err := diagnosticsPath(nil, "a.go"); err == nil {
		t.Error("a relative path without workspace folders")
	}
}
