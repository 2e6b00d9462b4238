// Package vscode_test runs the extension's protocol tests (node --test, in
// TypeScript compiled by tsc) against the built binary and the in-repo
// OpenAI-compatible test server.
package vscode_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/editors/screenshot"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

func TestExtensionProtocol(t *testing.T) {
	if _, err := os.Stat("node_modules/.bin/tsc"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("editors/vscode/node_modules is missing; .ci/run runs npm ci")
		}
		t.Skip("run npm ci in editors/vscode first")
	}
	bin := lsptest.BuildBinary(t)
	fake := openaitest.New(t)
	fake.Enqueue(openaitest.Reply{Chunks: []string{"x is ", "one."}}, openaitest.Reply{Chunks: []string{"About x"}})
	cmd := exec.Command("npm", "test", "--silent")
	html := filepath.Join(t.TempDir(), "chat.html")
	if dir := os.Getenv("CTXLS_SCREENSHOT_DIR"); dir != "" {
		html = filepath.Join(dir, "vscode-chat.html")
	}
	cmd.Env = append(os.Environ(), "CTXLS_BIN="+bin, "OPENAI_BASE_URL="+fake.URL, "OPENAI_API_KEY=", "CTXLS_CHAT_HTML="+html)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("npm test: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "pass 1") {
		t.Fatalf("the node tests did not run:\n%s", out)
	}
	if dir := os.Getenv("CTXLS_SCREENSHOT_DIR"); dir != "" {
		page, err := os.ReadFile(html)
		if err != nil {
			t.Fatal(err)
		}
		if err := screenshot.HTML(string(page), filepath.Join(dir, "vscode-chat.png"), 760, 520); err != nil {
			t.Fatal(err)
		}
		os.Remove(html)
	}
	sys := fake.WaitRequests(1, 5*time.Second)[0].SystemPrompt()
	if !strings.Contains(sys, "// UNSAVED FROM VSCODE") {
		t.Errorf("the provider did not get the unsaved text:\n%s", sys)
	}
}
