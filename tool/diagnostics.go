package tool

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.lsp.dev/uri"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/internal/human"
	"github.com/ctxls/ctxls/session"
)

// The editor's diagnostics for the model: the tool diagnostics lists the
// errors and warnings the editor's language servers and linters report,
// asked of the door (over LSP ctxls/diagnostics, to a client that set
// initializationOptions.diagnostics; never over ACP or in the CLI). The
// door, the tool's argument, its schema, its call and the formatting are
// all in this file.

// toolDiagnostics is the tool's name.
const toolDiagnostics = "diagnostics"

// Limits of what the tool returns: the first diagnostics (errors first) up
// to either, then how many were left out.
const (
	maxDiagnostics      = 100
	maxDiagnosticsBytes = 64 << 10
)

// DiagnosticsDoor gives the editor's diagnostics. uris nil: every file the
// editor has diagnostics for. wait > 0: the editor answers once the
// diagnostics of those files (of any, without uris) have changed after the
// request arrived, or once wait has passed, whichever comes first (after an
// edit, so what the editor's language servers say of the new text is
// seen). The door bounds how long it waits for the answer.
type DiagnosticsDoor interface {
	Diagnostics(ctx context.Context, uris []string, wait time.Duration) ([]api.FileDiagnostics, error)
}

// SetDiagnosticsDoor sets how the connection reads the editor's
// diagnostics; without one the diagnostics tool is not offered.
func (b *Box) SetDiagnosticsDoor(d DiagnosticsDoor) {
	b.mu.Lock()
	b.diagnostics = d
	b.mu.Unlock()
}

// diagnosticsDoor is the connection's diagnostics door, or nil.
func (b *Box) diagnosticsDoor() DiagnosticsDoor {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.diagnostics
}

// diagnosticsArgs are the tool's arguments.
type diagnosticsArgs struct {
	Path string `json:"path,omitempty" jsonschema:"a file or folder: relative to the workspace, or absolute inside it; every file when left out"`
}

var diagnosticsTool = define(Tool{
	Name: toolDiagnostics,
	Description: "List the errors and warnings the user's editor reports (its language servers and linters) for a file or folder of the workspace, or for all files: " +
		"one per line as path:line:col severity source: message, errors first. The editor checks the files it has open, so a file not open may have none listed. " +
		"Use it after changing code to see what broke.",
	ReadOnly: true,
	Kind:     "read",
	Offered:  func(_ context.Context, t *TurnTools) bool { return t.box.diagnosticsDoor() != nil },
}, nil, func(ctx context.Context, c *Call, a diagnosticsArgs) (string, error) {
	door := c.box.diagnosticsDoor()
	if door == nil {
		return "", errors.New("this client does not give its diagnostics")
	}
	path, err := diagnosticsPath(c.TT.Roots, a.Path)
	if err != nil {
		return "", err
	}
	var uris []string // every file's, filtered here, unless one file is asked for
	if info, err := os.Stat(path); path != "" && err == nil && info.Mode().IsRegular() {
		uris = []string{string(uri.File(path))}
	}
	files, err := door.Diagnostics(ctx, uris, 0)
	if err != nil {
		if ctx.Err() != nil {
			return "", errors.New("the call was cancelled")
		}
		return "", fmt.Errorf("the editor's diagnostics could not be read: %v", err)
	}
	shown := collectDiagnostics(c.TT.Roots, files, path)
	c.Summarize(diagnosticsSummary(shown))
	return formatShown(shown), nil
})

// diagnosticsSummary counts the diagnostics shown for the card.
func diagnosticsSummary(shown []shownDiagnostic) string {
	errs := 0
	for _, d := range shown {
		if d.severity == api.SeverityError {
			errs++
		}
	}
	return fmt.Sprintf("%s, %s", human.Count(errs, "error"), human.Count(len(shown)-errs, "warning"))
}

// diagnosticsPath is the tool's path argument made absolute: "" for every
// file; a relative path is the first workspace folder's.
func diagnosticsPath(roots []string, p string) (string, error) {
	p = strings.TrimSpace(p)
	switch {
	case p == "" || p == ".":
		return "", nil
	case strings.ContainsRune(p, 0):
		return "", errors.New("path contains a NUL character")
	case strings.HasPrefix(p, "file://"):
		path, ok := session.PathFromURI(p)
		if !ok {
			return "", fmt.Errorf("%q is not a usable file URI", session.Truncate(p, 200))
		}
		p = path
	case !filepath.IsAbs(p) && len(roots) == 0:
		return "", fmt.Errorf("%s is relative and the editor gave no workspace folder; use an absolute path", p)
	case !filepath.IsAbs(p):
		p = filepath.Join(roots[0], p)
	}
	p = filepath.Clean(p)
	if len(roots) > 0 && !slices.ContainsFunc(roots, func(r string) bool { return session.Within(p, r) }) {
		return "", fmt.Errorf("%s is outside the workspace folders", p)
	}
	return p, nil
}

// shownDiagnostic is one diagnostic as the model is told it.
type shownDiagnostic struct {
	path       string // as shown: relative to its workspace folder
	line, col  uint32 // 1-based
	severity   api.DiagnosticSeverity
	label, msg string
}

// formatDiagnostics is what the model is told of files' diagnostics: the
// errors, then the warnings (information and hints left out), each as
// path:line:col severity source(code): message, by path and position
// within each, at most maxDiagnostics of them in maxDiagnosticsBytes, then
// how many were left out; "No errors or warnings." when there are none.
// path ("" for all) is an absolute file or folder: only the files it is or
// holds are shown. Paths are relative to the workspace folder holding them
// (roots); with workspace folders, files outside them are left out, and so
// are URIs that are not file:// URIs. Lines and columns are 1-based; a
// column counts in the connection's position encoding (UTF-16 code units
// unless UTF-8 was negotiated).
func formatDiagnostics(roots []string, files []api.FileDiagnostics, path string) string {
	return formatShown(collectDiagnostics(roots, files, path))
}

// collectDiagnostics are the errors and warnings of files under path,
// in the order they are shown (see formatDiagnostics).
func collectDiagnostics(roots []string, files []api.FileDiagnostics, path string) []shownDiagnostic {
	var shown []shownDiagnostic
	for _, f := range files {
		p, ok := session.PathFromURI(f.URI)
		switch {
		case !ok:
			continue
		case path != "" && !session.Within(p, path):
			continue
		case len(roots) > 0 && !slices.ContainsFunc(roots, func(r string) bool { return session.Within(p, r) }):
			continue
		}
		rel := relativeTo(roots, p)
		for _, d := range f.Diagnostics {
			sev := cmp.Or(d.Severity, api.SeverityError) // absent: an error, as editors take it
			if sev != api.SeverityError && sev != api.SeverityWarning {
				continue
			}
			label := d.Source
			if code := diagnosticCode(d.Code); code != "" {
				label += "(" + code + ")"
			}
			shown = append(shown, shownDiagnostic{path: rel, line: d.Range.Start.Line + 1, col: d.Range.Start.Character + 1,
				severity: sev, label: label, msg: d.Message})
		}
	}
	slices.SortStableFunc(shown, func(a, b shownDiagnostic) int {
		return cmp.Or(cmp.Compare(a.severity, b.severity), strings.Compare(a.path, b.path), cmp.Compare(a.line, b.line), cmp.Compare(a.col, b.col))
	})
	return shown
}

// formatShown is the diagnostics' text, capped (see formatDiagnostics).
func formatShown(shown []shownDiagnostic) string {
	if len(shown) == 0 {
		return "No errors or warnings."
	}
	var out strings.Builder
	n := 0
	for _, d := range shown {
		line := d.String()
		if n == maxDiagnostics || out.Len()+len(line)+1 > maxDiagnosticsBytes-100 {
			break
		}
		out.WriteString(line)
		out.WriteByte('\n')
		n++
	}
	if left := len(shown) - n; left > 0 {
		errs := 0
		for _, d := range shown[n:] {
			if d.severity == api.SeverityError {
				errs++
			}
		}
		fmt.Fprintf(&out, "(%d more left out: %d errors, %d warnings; ask for a file or folder to see its own)\n", left, errs, left-errs)
	}
	return strings.TrimSuffix(out.String(), "\n")
}

// String is the diagnostic's line; a message of several lines goes on
// with its lines indented.
func (d shownDiagnostic) String() string {
	sev := "error"
	if d.severity == api.SeverityWarning {
		sev = "warning"
	}
	label := ""
	if d.label != "" {
		label = " " + d.label
	}
	msg := strings.TrimSpace(session.Truncate(d.msg, 2000))
	msg = strings.ReplaceAll(strings.ReplaceAll(msg, "\r\n", "\n"), "\n", "\n    ")
	return fmt.Sprintf("%s:%d:%d %s%s: %s", d.path, d.line, d.col, sev, label, msg)
}

// diagnosticCode is a diagnostic's code as text: a string or a number
// (VS Code's {value, target} is read for its value).
func diagnosticCode(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	var obj struct{ Value json.RawMessage }
	if json.Unmarshal(raw, &obj) == nil && len(obj.Value) > 0 && obj.Value[0] != '{' {
		return diagnosticCode(obj.Value)
	}
	return ""
}

// relativeTo is path relative to the workspace folder holding it (the
// deepest, when folders nest), else path itself.
func relativeTo(roots []string, path string) string {
	best := ""
	for _, r := range roots {
		if session.Within(path, r) && len(r) > len(best) {
			best = r
		}
	}
	if best == "" {
		return path
	}
	rel, err := filepath.Rel(best, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(rel)
}
