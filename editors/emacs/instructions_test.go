package emacs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// The project's instructions files instructionsWorkspace writes.
const (
	rootRules = "# Rules\n\nAnswer briefly; name the files you used.\n"
	pkgRule   = "PKG RULE: keep pkg small."
)

// instructionsWorkspace is workspace's folder with AGENTS.md at its root,
// and pkg/util.go beside pkg/AGENTS.md, which is over the 32 KiB a file is
// given (the model gets its first lines, marked cut).
func instructionsWorkspace(t *testing.T) string {
	t.Helper()
	work := workspace(t)
	var pkg strings.Builder
	pkg.WriteString("# pkg\n\n" + pkgRule + "\n\n")
	for i := 1; pkg.Len() <= 40_000; i++ {
		fmt.Fprintf(&pkg, "- note %d: helpers stay small and documented, one concern each.\n", i)
	}
	for name, text := range map[string]string{
		"AGENTS.md":     rootRules,
		"pkg/AGENTS.md": pkg.String(),
		"pkg/util.go":   "package pkg\n\n// Twice doubles n.\nfunc Twice(n int) int { return 2 * n }\n",
	} {
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return work
}

// TestEmacsInstructions: the *ctxls context* buffer names the project's
// instructions files (RET visits one; unsaved and cut ones marked), so does
// the prompt preview; the model gets their text, the root's as typed in
// Emacs; with ctxls-project-instructions set to nil (M-x set-variable) the
// next turn goes without them and the context buffer's line is gone.
func TestEmacsInstructions(t *testing.T) {
	t.Parallel()
	eachEmacs(t, func(t *testing.T, emacs emacsVersion) {
		fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Emacs Test Title"}}))
		fake.Enqueue(openaitest.Reply{Chunks: []string{"Briefly: the root's and pkg's."}},
			openaitest.Reply{Chunks: []string{"No rules given."}})
		work := instructionsWorkspace(t)
		r := emacsRunner{emacs: emacs, bin: lsptest.BuildBinary(t), work: work, dataDir: t.TempDir(), fakeURL: fake.URL}
		r.run(t, "ctxls-test-instructions")
		asked := map[string]openaitest.Request{}
		for _, req := range fake.Requests() {
			asked[req.Question()] = req
		}
		on, ok := asked["which rules apply?"]
		if !ok {
			t.Fatal("the first question did not reach the model")
		}
		sys := on.SystemPrompt()
		for _, want := range []string{
			"## Project Instructions",
			"Instructions from " + filepath.Join(work, "AGENTS.md") + ":",
			rootRules + "Unsaved rule: name the rules you followed.\n", // the buffer's text
			"Instructions from " + filepath.Join(work, "pkg", "AGENTS.md") + ":",
			pkgRule,
		} {
			if !strings.Contains(sys, want) {
				t.Errorf("the system message lacks %q:\n%.3000s", want, sys)
			}
		}
		off, ok := asked["and without them?"]
		if !ok {
			t.Fatal("the question asked with ctxls-project-instructions nil did not reach the model")
		}
		if sys := off.SystemPrompt(); strings.Contains(sys, "## Project Instructions") || strings.Contains(sys, "Answer briefly") || strings.Contains(sys, pkgRule) {
			t.Errorf("with ctxls-project-instructions nil the model got instructions:\n%.3000s", sys)
		}
	})
}
