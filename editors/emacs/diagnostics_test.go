package emacs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestEmacsDiagnostics: Flymake's diagnostics of two Emacs Lisp buffers
// (the byte compiler's error in one, its warning in the other; checkdoc's
// notes left out) reach the model through its diagnostics tool, errors
// first; ctxls-test-diagnostics checks in Emacs that waitMs waits for the
// file's diagnostics to change.
func TestEmacsDiagnostics(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		fake := openaitest.New(t)
		fake.Enqueue(
			openaitest.Reply{ToolCalls: []openaitest.ToolCall{
				{ID: "d1", Name: "diagnostics", Arguments: `{}`},
				{ID: "d2", Name: "diagnostics", Arguments: `{"path":"warned.el"}`},
			}},
			openaitest.Reply{Chunks: []string{"Found them."}},
		)
		r := emacsRunner{emacs: emacs, bin: lsptest.BuildBinary(t), work: workspace(t), dataDir: t.TempDir(), fakeURL: fake.URL}
		for name, text := range map[string]string{
			// A form never closed: the byte compiler's error.
			"broken.el": ";;; broken.el --- A test file  -*- lexical-binding: t; -*-\n;;; Code:\n(defun ctxls-broken-f ()\n  \"Do nothing.\"\n  (list 1 2)\n",
			// A free variable: its warning.
			"warned.el": ";;; warned.el --- A test file  -*- lexical-binding: t; -*-\n;;; Code:\n(defun ctxls-warned-f ()\n  \"Set a variable never declared.\"\n  (setq ctxls-warned-undeclared 1))\n",
		} {
			if err := os.WriteFile(filepath.Join(r.work, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		r.run(t, "ctxls-test-diagnostics")

		var got map[string]string
		for _, req := range fake.Requests() {
			if res := req.ToolResults(); res["d1"] != "" {
				got = res
			}
		}
		line := `(broken|warned)\.el:\d+:\d+ (error|warning) elisp-flymake-byte-compile: .+`
		d1 := strings.Split(got["d1"], "\n")
		if len(d1) < 2 || !regexp.MustCompile(`^broken\.el:\d+:\d+ error elisp-flymake-byte-compile: .+`).MatchString(d1[0]) ||
			!regexp.MustCompile(`^warned\.el:5:\d+ warning elisp-flymake-byte-compile: .*ctxls-warned-undeclared`).MatchString(d1[len(d1)-1]) {
			t.Errorf("d1: the model got\n%s", got["d1"])
		}
		for _, l := range d1 {
			if !regexp.MustCompile(`^` + line + `$`).MatchString(l) {
				t.Errorf("d1: a line of another shape (a note, another backend): %q", l)
			}
		}
		if !regexp.MustCompile(`^warned\.el:5:\d+ warning elisp-flymake-byte-compile: .*ctxls-warned-undeclared[^\n]*$`).MatchString(got["d2"]) {
			t.Errorf("d2: the model got\n%s", got["d2"])
		}
	})
}
