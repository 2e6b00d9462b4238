package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/internal/testmcp"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// TestChatMCPTools: "ctxls chat" offers the user's MCP servers (their
// file), runs the calls --allow-tool allows, declines the others when
// there is no terminal to ask on (the model is told), and asks on a
// terminal when there is one (a pty, made by script(1)): "always" is kept
// with the session.
func TestChatMCPTools(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	config, dataDir, serverDir := t.TempDir(), t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(config, "ctxls"), 0o755)
	os.WriteFile(filepath.Join(config, "ctxls", "mcp.json"), testmcp.Config(map[string]map[string]any{"t": testmcp.Server(t, "t", serverDir)}), 0o644)
	env := []string{"XDG_CONFIG_HOME=" + config, "CTXLS_DATA_DIR=" + dataDir, "OPENAI_API_KEY=sk-test-not-real"}
	base := []string{"chat", "--base-url", fake.URL, "--model", "test-model"}

	// The dry run shows the server's tools with their schemas, counted.
	out, errOut, code := lsptest.Run(t, "", env, "chat", "--dry-run", "use the tools")
	if code != 0 || !regexp.MustCompile(`mcp__t__echo \(\d+ tokens\): \[MCP server t\] Echoes its text\.`).MatchString(out) || !strings.Contains(out, `"text":{"type":"string"}`) {
		t.Errorf("dry run: %d\n%s", code, out)
	}
	// ctxls's five tools alone cost about 400 tokens; the server's nine more.
	m := regexp.MustCompile(`history \d+, tools (\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no tools' tokens in the dry run:\n%s", out)
	}
	if n, _ := strconv.Atoi(m[1]); n < 600 {
		t.Errorf("the tools' tokens: %v\n%s", m, errOut)
	}
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "c1", Name: "mcp__t__echo", Arguments: `{"text":"hi"}`},
			{ID: "c2", Name: "mcp__t__add", Arguments: `{"a":1,"b":2}`},
		}},
		openaitest.Reply{Chunks: []string{"Done."}},
	)
	out, errOut, code = lsptest.Run(t, "", env, append(base, "--allow-tool", "t/ech?", "use the tools")...)
	if code != 0 || !strings.Contains(out, "Done.") {
		t.Fatalf("chat: %d\n%s\n%s", code, out, errOut)
	}
	res := fake.LastStreamed().ToolResults()
	if res["c1"] != "echo: hi" || !strings.Contains(res["c2"], "did not run") && !strings.Contains(res["c2"], "declined") {
		t.Errorf("results %q", res)
	}
	if !strings.Contains(errOut, "[calling t · echo]") || !strings.Contains(errOut, "t · add: declined, since there is no terminal to ask on; allow it with --allow-tool t/add") {
		t.Errorf("stderr:\n%s", errOut)
	}
	fake.WaitRequests(3, 10*time.Second) // the title's

	// On a terminal the user is asked: "a" allows add always in the session.
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "d1", Name: "mcp__t__add", Arguments: `{"a":2,"b":3}`}}},
		openaitest.Reply{Chunks: []string{"Five."}},
	)
	line := lsptest.BuildBinary(t) + " " + strings.Join(append(base, "--continue", "'add them'"), " ")
	cmd := exec.Command("script", "-qec", line, "/dev/null")
	cmd.Env = lsptest.Env(t, env)
	stdin, _ := cmd.StdinPipe()
	var screen strings.Builder
	cmd.Stdout = &screen
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The answer waits in the terminal's input until the question reads it
	// (nothing else reads the terminal: the message is an argument).
	stdin.Write([]byte("a\n"))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("chat on a terminal: %v\n%s", err, screen.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("chat on a terminal did not end:\n%s", screen.String())
	}
	if !strings.Contains(screen.String(), "the model wants to call t · add (may change or delete things) with {\"a\":2,\"b\":3}. Allow it?") {
		t.Errorf("the question:\n%s", screen.String())
	}
	if got := fake.LastStreamed().ToolResults()["d1"]; got != `{"sum":5}` {
		t.Errorf("add after yes: %q\n%s", got, screen.String())
	}
	// Always: the next turn runs add without asking, with no terminal.
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "e1", Name: "mcp__t__add", Arguments: `{"a":3,"b":4}`}}},
		openaitest.Reply{Chunks: []string{"Seven."}},
	)
	if _, errOut, code := lsptest.Run(t, "", env, append(base, "--continue", "again")...); code != 0 || fake.LastStreamed().ToolResults()["e1"] != `{"sum":7}` {
		t.Errorf("always: %d %q\n%s", code, fake.LastStreamed().ToolResults(), errOut)
	}
}

// TestMCPTrustCommand: a workspace's .mcp.json is not used by "ctxls chat"
// until "ctxls mcp trust" trusted it; "ctxls mcp list" says where it stands.
func TestMCPTrustCommand(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	work, dataDir, serverDir := t.TempDir(), t.TempDir(), t.TempDir()
	cfg := filepath.Join(work, ".mcp.json")
	os.WriteFile(cfg, testmcp.Config(map[string]map[string]any{"w": testmcp.Server(t, "w", serverDir)}), 0o644)
	env := []string{"CTXLS_DATA_DIR=" + dataDir, "OPENAI_API_KEY=sk-test-not-real"}

	out, _, code := lsptest.Run(t, work, env, "mcp", "list")
	if code != 0 || !strings.Contains(out, "workspace file "+cfg+": undecided") || !strings.Contains(out, "ctxls mcp trust "+cfg) {
		t.Errorf("list before: %d\n%s", code, out)
	}
	fake.Enqueue(openaitest.Reply{Chunks: []string{"No tools."}})
	_, errOut, code := lsptest.Run(t, work, env, "chat", "--base-url", fake.URL, "--model", "test-model", "--allow-tool", "*", "hello")
	if code != 0 || !strings.Contains(errOut, cfg+" is not used: it configures MCP servers and is not trusted yet") {
		t.Errorf("chat before: %d\n%s", code, errOut)
	}
	for _, tool := range fake.LastStreamed().Parsed.Tools {
		if strings.HasPrefix(tool.Function.Name, "mcp__w__") {
			t.Errorf("an untrusted file's tool is offered: %s", tool.Function.Name)
		}
	}
	out, _, code = lsptest.Run(t, work, env, "mcp", "trust")
	if code != 0 || !strings.Contains(out, cfg+": trusted (servers: w)") {
		t.Errorf("trust: %d\n%s", code, out)
	}
	// It says what it trusted: the command, its arguments, its env's keys.
	if !strings.Contains(out, "  w: "+testmcp.Binary(t)+" -name w (env TESTMCP_DIR, TESTMCP_SECRET)") || strings.Contains(out, "s3cret") {
		t.Errorf("trust does not say what runs:\n%s", out)
	}
	fake.WaitRequests(2, 10*time.Second)
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "w1", Name: "mcp__w__echo", Arguments: `{"text":"now"}`}}},
		openaitest.Reply{Chunks: []string{"Done."}},
	)
	_, errOut, code = lsptest.Run(t, work, env, "chat", "--base-url", fake.URL, "--model", "test-model", "--allow-tool", "w/*", "--continue", "use it")
	if got := fake.LastStreamed().ToolResults()["w1"]; code != 0 || got != "echo: now" {
		t.Errorf("chat after: %d %q\n%s", code, got, errOut)
	}
}
