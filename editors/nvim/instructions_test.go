package nvim_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// instructionsWorkspace is a workspace with instructions files: AGENTS.md
// at its root, and in pkg/ one larger than the daemon gives of a file
// (32 KiB), beside main.go and pkg/util.go.
func instructionsWorkspace(t *testing.T) string {
	t.Helper()
	work := t.TempDir()
	os.MkdirAll(filepath.Join(work, "pkg"), 0o755)
	long := "PKG-RULE: keep functions short.\n" + strings.Repeat("Prefer table-driven tests over copies of one test with other values.\n", 600)
	for name, text := range map[string]string{
		"AGENTS.md":     "# Rules\n\nROOT-RULE: run go vet before answering.\n",
		"main.go":       "package main\n\nfunc main() {}\n",
		"pkg/AGENTS.md": long,
		"pkg/util.go":   "package pkg\n\nfunc Util() {}\n",
	} {
		if err := os.WriteFile(filepath.Join(work, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return work
}

// TestNeovimInstructions: the project's instructions files a turn gives
// the model are named under the chat's header, workspace-relative
// ("_instructions: AGENTS.md_"), from the turn's result and again when the
// context changes (a file of pkg/ added brings pkg/AGENTS.md, "(cut)"; its
// unsaved edit "(unsaved, cut)"); :CtxlsContext and :CtxlsPreview list them;
// the provider's requests carry their text in the system message. With
// project_instructions = false, set by setup() while the daemon runs
// (workspace/didChangeConfiguration) or from the start (initialization
// options), the line goes and the requests carry none.
func TestNeovimInstructions(t *testing.T) {
	t.Parallel()
	eachNeovim(t, testNeovimInstructions)
}

func testNeovimInstructions(t *testing.T, nvim string) {
	bin := lsptest.BuildBinary(t)
	fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Project rules"}}))
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Rule one."}}, openaitest.Reply{Chunks: []string{"Rule two."}},
		openaitest.Reply{Chunks: []string{"Rule three."}}, openaitest.Reply{Chunks: []string{"Off answer."}})
	run := func(phase string) {
		t.Helper()
		runNvim(t, nvim, instructionsWorkspace(t), "instructions.lua", append(os.Environ(), "CTXLS_BIN="+bin, "CTXLS_DATA_DIR="+t.TempDir(),
			"OPENAI_BASE_URL="+fake.URL, "OPENAI_API_KEY=", "CTXLS_TEST_PHASE="+phase, "HOME="+t.TempDir()), 60*time.Second, phase)
	}
	run("on")
	run("off")
	system := map[string]string{}
	for _, r := range fake.Streamed() {
		system[strings.TrimSpace(r.Question())] = r.SystemPrompt()
	}
	for _, c := range []struct {
		question string
		want     []string // in the system message
		not      []string
	}{
		{"What are the rules?", []string{"## Project Instructions", "ROOT-RULE: run go vet"}, []string{"PKG-RULE"}},
		{"And now?", []string{"ROOT-RULE", "UNSAVED-RULE: answer in French.\nPKG-RULE", "[cut: "}, nil},
		{"Third?", nil, []string{"## Project Instructions", "ROOT-RULE", "PKG-RULE"}},
		{"Any rules?", nil, []string{"## Project Instructions", "ROOT-RULE"}},
	} {
		sys, ok := system[c.question]
		if !ok {
			t.Errorf("no request asked %q (asked: %d)", c.question, len(system))
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(sys, w) {
				t.Errorf("%q: the system message lacks %q", c.question, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(sys, n) {
				t.Errorf("%q: the system message holds %q", c.question, n)
			}
		}
	}
}
