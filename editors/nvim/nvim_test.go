// Package nvim_test runs the Neovim plugin headless against the built ctxls
// binary and the in-repo OpenAI-compatible test server.
package nvim_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

func TestNeovimPlugin(t *testing.T) {
	nvim, err := exec.LookPath("nvim")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("nvim is not installed; .ci/run installs Debian's neovim")
		}
		t.Skip("nvim is not installed")
	}
	bin := lsptest.BuildBinary(t)
	fake := openaitest.New(t)
	fake.Enqueue(openaitest.Reply{Chunks: []string{"It prints ", "hello."}}, openaitest.Reply{Chunks: []string{"Hello program"}})
	work := t.TempDir()
	file := filepath.Join(work, "main.go")
	os.WriteFile(file, []byte("package main\n\nfunc main() { println(\"hello\") }\n"), 0o644)
	dataDir := t.TempDir()
	run := func(phase string) {
		cmd := exec.Command(nvim, "--headless", "--clean", "-c", "set rtp+=.", "-c", "luafile test/e2e.lua")
		cmd.Dir = "."
		cmd.Env = append(os.Environ(), "CTXLS_BIN="+bin, "CTXLS_DATA_DIR="+dataDir, "CTXLS_TEST_FILE="+file,
			"OPENAI_BASE_URL="+fake.URL, "OPENAI_API_KEY=", "CTXLS_TEST_PHASE="+phase, "HOME="+t.TempDir())
		done := make(chan struct{})
		var out []byte
		go func() { out, err = cmd.CombinedOutput(); close(done) }()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Fatalf("%s: nvim did not finish:\n%s", phase, out)
		}
		if err != nil {
			t.Fatalf("%s: %v\n%s", phase, err, out)
		}
	}
	run("ask")
	reqs := fake.WaitRequests(1, 5*time.Second)
	if sys := reqs[0].SystemPrompt(); !strings.Contains(sys, "// UNSAVED LINE FROM NEOVIM") {
		t.Errorf("the provider did not get the unsaved buffer:\n%s", sys)
	}
	// The resume phase's second turn, then the summary :CtxlsCompact asks for.
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Then it ", "exits."}}, openaitest.Reply{Chunks: []string{"## Goal\n\nExplain main.go."}})
	run("resume")
	reqs = fake.Requests()
	if n := len(reqs); n != 4 || !strings.HasPrefix(reqs[3].SystemPrompt(), "You are compacting") {
		t.Fatalf("%d requests; want the first turn, its title, the second turn and a summary", n)
	}
	if !strings.Contains(reqs[3].Parsed.Messages[1].Content, "It prints hello.") {
		t.Errorf("the summary request lacks the first answer: %.300s", reqs[3].Parsed.Messages[1].Content)
	}
}
