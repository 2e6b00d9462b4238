package mcpclient

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMain runs a small MCP server written with the Go SDK when the test
// binary is started as one (the tests start it as a stdio server), or a
// raw one that answers as no SDK server would (serveRaw).
func TestMain(m *testing.M) {
	if os.Getenv("MCPCLIENT_TEST_SERVER") == "raw" {
		serveRaw(os.Stdin, os.Stdout, os.Getenv("MCPCLIENT_RAW_TOOLS"))
		os.Exit(0)
	}
	if os.Getenv("MCPCLIENT_TEST_SERVER") == "1" {
		srv := sdk.NewServer(&sdk.Implementation{Name: "testserver", Version: "1"}, nil)
		type echoIn struct {
			Text string `json:"text"`
		}
		sdk.AddTool(srv, &sdk.Tool{Name: "echo", Description: "Echoes the text", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
			func(_ context.Context, _ *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
				if in.Text == "$ENV" { // the server's whole environment
					return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Join(os.Environ(), "\n")}}}, nil, nil
				}
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Text + " " + os.Getenv("SECRET_TOKEN")}}}, nil, nil
			})
		sdk.AddTool(srv, &sdk.Tool{Name: "touch", Description: "Changes something"},
			func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
				return nil, nil, nil
			})
		if err := srv.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestParse(t *testing.T) {
	cfg := `{"mcpServers": {
		"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/w"], "env": {"TOKEN": "s3cret"}},
		"docs": {"type": "http", "url": "https://docs.example/mcp", "headers": {"Authorization": "Bearer x"}, "timeoutSeconds": 5},
		"web": {"url": "http://127.0.0.1:9000/mcp"},
		"typo": {"comand": "x"},
		"nocmd": {"args": ["x"]},
		"badurl": {"type": "http", "url": "ftp://x"},
		"both": {"command": "x", "url": "http://x/mcp"},
		"sse": {"type": "sse", "url": "http://x/sse"},
		"neg": {"command": "x", "timeoutSeconds": -1},
		"sp ace": {"command": "x"}
	}}`
	servers, errs := Parse([]byte(cfg), "/home/ann/.config/ctxls/mcp.json")
	var names []string
	for _, s := range servers {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"docs", "fs", "web"}) {
		t.Errorf("servers %v", names)
	}
	fs := servers[1]
	if fs.Type != "stdio" || fs.Command != "npx" || len(fs.Args) != 3 || fs.Env["TOKEN"] != "s3cret" || fs.Timeout != DefaultTimeout {
		t.Errorf("fs: %+v", fs)
	}
	if d := servers[0]; d.Type != "http" || d.Timeout != 5*time.Second || d.Headers["Authorization"] != "Bearer x" {
		t.Errorf("docs: %+v", d)
	}
	if w := servers[2]; w.Type != "http" || w.URL != "http://127.0.0.1:9000/mcp" {
		t.Errorf("web: %+v", w)
	}
	want := map[string]string{
		"typo": "field comand: unknown field", "nocmd": "field command: is required", "badurl": "field url: must be an http",
		"both": "field url: a stdio server", "sse": "field type: must be", "neg": "field timeoutSeconds", "sp ace": "name is 1 to 64",
	}
	if len(errs) != len(want) {
		t.Errorf("%d errors, want %d: %v", len(errs), len(want), errs)
	}
	for _, err := range errs {
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), "/home/ann/.config/ctxls/mcp.json: server ") || !strings.Contains(err.Error(), want[ce.Server]) {
			t.Errorf("error %v", err)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("an error shows a secret: %v", err)
		}
	}
	if _, errs := Parse([]byte(`{"servers": {}}`), "x.json"); len(errs) != 1 || !strings.Contains(errs[0].Error(), `not a {"mcpServers"`) {
		t.Errorf("a VS Code file: %v", errs)
	}
	if s, errs := Parse([]byte("  "), "x"); s != nil || errs != nil {
		t.Errorf("an empty file: %v %v", s, errs)
	}
}

func TestMerge(t *testing.T) {
	user := []Server{{Name: "a", Source: "user"}, {Name: "b", Source: "user"}}
	settings := []Server{{Name: "b", Source: "settings"}, {Name: "c", Source: "settings"}}
	got, notes := Merge(user, settings)
	if len(got) != 3 || got[1].Source != "settings" || len(notes) != 1 || !strings.Contains(notes[0], `"b" of user is replaced by the one of settings`) {
		t.Errorf("%+v %v", got, notes)
	}
}

func TestUserConfig(t *testing.T) {
	env := map[string]string{"HOME": "/home/ann"}
	if got := UserConfig(func(k string) string { return env[k] }); got != "/home/ann/.config/ctxls/mcp.json" {
		t.Error(got)
	}
	env["XDG_CONFIG_HOME"] = "/cfg"
	if got := UserConfig(func(k string) string { return env[k] }); got != "/cfg/ctxls/mcp.json" {
		t.Error(got)
	}
}

// TestManagerTools starts a Go SDK server over stdio through a manager,
// lists its tools and calls one (the env reaches the server); one process
// serves two names of the same configuration; a command that does not
// exist is an error naming the server, and the next try waits for the
// back-off.
func TestManagerTools(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	m := NewManager("test", nil)
	defer m.Close()
	s := Server{Name: "test", Type: "stdio", Command: os.Args[0], Env: map[string]string{"MCPCLIENT_TEST_SERVER": "1", "SECRET_TOKEN": "tok"}}
	tools, err := m.Tools(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 2 || tools[0].Name != "echo" || !tools[0].ReadOnly || tools[1].Name != "touch" || tools[1].ReadOnly || !tools[1].Destructive {
		t.Errorf("tools %+v", tools)
	}
	res, err := m.Call(ctx, s, "echo", []byte(`{"text":"hi"}`), nil)
	if err != nil || Text(res) != "hi tok" {
		t.Errorf("call: %v %v", res, err)
	}
	again := s
	again.Name = "same"
	if _, err := m.Tools(ctx, again); err != nil || m.Running() != 1 || !m.IsRunning(again) {
		t.Errorf("a second name of the same configuration: %v, %d running", err, m.Running())
	}
	ghost := Server{Name: "ghost", Type: "stdio", Command: "ctxls-no-such-command"}
	_, err = m.Tools(ctx, ghost)
	if err == nil || !strings.Contains(err.Error(), `server "ghost": command "ctxls-no-such-command" not found`) {
		t.Errorf("a missing command: %v", err)
	}
	_, err = m.Tools(ctx, ghost)
	if err == nil || !strings.Contains(err.Error(), "it is tried again in") {
		t.Errorf("within the back-off: %v", err)
	}
}

// TestServerEnvironment: a stdio server sees the MCP SDKs' short default
// environment and its own env (with ${VAR} and ${VAR:-default} expanded
// from the daemon's), never the provider's keys or CTXLS_MCP_TOKEN, even
// when its env asks for them by name.
func TestServerEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-provider-key")
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-provider-key")
	t.Setenv("CTXLS_MCP_TOKEN", "mcp-door-token")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
	t.Setenv("CTXLS_TEST_GITHUB", "ghp_given")
	t.Setenv("GROQ_API_KEY", "gsk-provider-key") // the connection's apiKeyEnv
	t.Setenv("PATH", os.Getenv("PATH"))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	m := NewManager("test", nil)
	m.KeyEnvs = func() []string { return []string{"GROQ_API_KEY"} }
	defer m.Close()
	t.Setenv("MCPCLIENT_TEST_GITHUB", "ghp_given")
	s := Server{Name: "env", Type: "stdio", Command: os.Args[0], Env: map[string]string{
		"MCPCLIENT_TEST_SERVER": "1", "GITHUB_TOKEN": "${MCPCLIENT_TEST_GITHUB}", "MODE": "${MCPCLIENT_TEST_UNSET:-fallback}", "PLAIN": "$HOME and ${MCPCLIENT_TEST_UNSET}",
		// Asked for by name (a repository's .mcp.json may): held back all the same.
		"STOLEN_OPENAI": "${OPENAI_API_KEY}", "STOLEN_ANTHROPIC": "${ANTHROPIC_API_KEY:-none}", "STOLEN_TOKEN": "x${CTXLS_MCP_TOKEN}x",
		"STOLEN_GROQ": "${GROQ_API_KEY}",
	}}
	res, err := m.Call(ctx, s, "echo", []byte(`{"text":"$ENV"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range strings.Split(Text(res), "\n") {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CTXLS_MCP_TOKEN", "AWS_SECRET_ACCESS_KEY", "CTXLS_TEST_GITHUB"} {
		if v, ok := env[k]; ok {
			t.Errorf("the server sees %s=%s", k, v)
		}
	}
	if env["STOLEN_OPENAI"] != "" || env["STOLEN_ANTHROPIC"] != "none" || env["STOLEN_TOKEN"] != "xx" || env["STOLEN_GROQ"] != "" {
		t.Errorf("a server's env named the provider's keys and got %q, %q, %q, %q", env["STOLEN_OPENAI"], env["STOLEN_ANTHROPIC"], env["STOLEN_TOKEN"], env["STOLEN_GROQ"])
	}
	if env["PATH"] != os.Getenv("PATH") || env["GITHUB_TOKEN"] != "ghp_given" || env["MODE"] != "fallback" || env["PLAIN"] != "$HOME and " {
		t.Errorf("the server's environment: %v", env)
	}
}

// TestManagerHTTP reaches a streamable HTTP server with the configured
// headers.
func TestManagerHTTP(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "httpserver", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "ping", Description: "Answers pong"},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "pong"}}}, nil, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer right" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	m := NewManager("test", nil)
	defer m.Close()
	s := Server{Name: "web", Type: "http", URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer right"}}
	res, err := m.Call(ctx, s, "ping", nil, nil)
	if err != nil || Text(res) != "pong" {
		t.Fatalf("call: %v %v", res, err)
	}
	wrong := Server{Name: "wrong", Type: "http", URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer wrong"}}
	if _, err := m.Tools(ctx, wrong); err == nil || !strings.Contains(err.Error(), `server "wrong"`) {
		t.Errorf("a refused header: %v", err)
	}
}
