// Package vscode_test runs the extension's tests: the protocol layer and the
// parts that need no VS Code (node --test, in TypeScript compiled by tsc)
// against the built binary and the in-repo OpenAI-compatible test server, and
// (e2e_test.go) the packaged extension inside code-server.
package vscode_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/openaitest"
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
	fake.Enqueue(
		openaitest.Reply{Chunks: []string{"x is ", "one."}},
		openaitest.Reply{Chunks: []string{"About x"}}, // the title, asked after the first answer
		openaitest.Reply{Chunks: []string{"partial ", "never sent"}, Fault: openaitest.FaultStall, FaultAfter: 1},
	)
	cmd := exec.Command("npm", "test", "--silent")
	cmd.Env = append(os.Environ(), "CTXLS_BIN="+bin, "OPENAI_BASE_URL="+fake.URL, "OPENAI_API_KEY=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("npm test: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "pass 7") || !strings.Contains(string(out), "fail 0") {
		t.Fatalf("the node tests did not all run:\n%s", out)
	}
	reqs := fake.WaitRequests(3, 5*time.Second)
	if sys := reqs[0].SystemPrompt(); !strings.Contains(sys, "// UNSAVED FROM VSCODE") {
		t.Errorf("the provider did not get the unsaved text:\n%s", sys)
	}
	fake.WaitCancelled(2, 5*time.Second)
}
