package nvim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestNeovimDiagnostics: what vim.diagnostic holds (two namespaces, two
// buffers, a position past multi-byte characters) reaches the model through
// its diagnostics tool, errors then warnings, information left out, the
// column in the negotiated encoding; the answer to waitMs waits for the file's
// DiagnosticChanged (test/diagnostics.lua checks it in Neovim).
func TestNeovimDiagnostics(t *testing.T) {
	t.Parallel()
	eachNeovim(t, testNeovimDiagnostics)
}

func testNeovimDiagnostics(t *testing.T, nvim string) {
	bin := lsptest.BuildBinary(t)
	fake := openaitest.New(t)
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "d1", Name: "diagnostics", Arguments: `{}`},
			{ID: "d2", Name: "diagnostics", Arguments: `{"path":"main.go"}`},
		}},
		openaitest.Reply{Chunks: []string{"Two errors."}},
	)
	work := t.TempDir()
	file := filepath.Join(work, "main.go")
	os.WriteFile(file, []byte("package main\n\nfunc main() {\n\tprintln(\"é 😀\", x)\n}\n"), 0o644)
	os.WriteFile(filepath.Join(work, "other.go"), []byte("package other\n"), 0o644)

	encFile := filepath.Join(t.TempDir(), "encoding")
	runNvim(t, nvim, work, "diagnostics.lua", append(os.Environ(), "CTXLS_TEST_ENCODING_FILE="+encFile, "CTXLS_BIN="+bin, "CTXLS_DATA_DIR="+t.TempDir(), "CTXLS_TEST_FILE="+file,
		"OPENAI_BASE_URL="+fake.URL, "OPENAI_API_KEY=", "HOME="+t.TempDir(), "XDG_CACHE_HOME="+t.TempDir()), 90*time.Second, "diagnostics")

	// x's column, 1-based, in the encoding the client negotiated (0.7:
	// none, so UTF-16; 0.10 and later: UTF-8).
	enc, _ := os.ReadFile(encFile)
	col, ok := map[string]int{"utf-8": 21, "utf-16": 18, "utf-32": 17}[string(enc)]
	if !ok {
		t.Fatalf("the client's encoding %q", enc)
	}
	var got map[string]string
	for _, r := range fake.Requests() {
		if res := r.ToolResults(); res["d1"] != "" {
			got = res
		}
	}
	for id, want := range map[string]string{
		"d1": fmt.Sprintf("main.go:4:%d error fake-ls(UndeclaredName): undefined: x\n", col) +
			"other.go:1:9 error fake-ls(42): package clash\n" +
			"main.go:3:6 warning fake-lint: main is too short\n    second line",
		"d2": fmt.Sprintf("main.go:4:%d error fake-ls(UndeclaredName): undefined: x\n", col) +
			"main.go:3:6 warning fake-lint: main is too short\n    second line",
	} {
		if got[id] != want {
			t.Errorf("%s: the model got\n%s\nwant\n%s", id, got[id], want)
		}
	}
}
