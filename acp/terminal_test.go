package acp_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/internal/proctest"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// termClient is an ACP client built on the SDK's client side whose
// terminal/* run the commands for real, as an editor's terminal does: in
// the client's own environment (which holds a provider key of its own
// here) with the agent's variables applied, output kept to the byte limit
// (its end), kill and release ending the process group.
type termClient struct {
	mu        sync.Mutex
	terms     map[string]*clientTerm
	next      int
	created   []sdk.CreateTerminalRequest
	released  int
	updates   []sdk.SessionNotification
	pids      []int
	permitted int
}

type clientTerm struct {
	cmd   *exec.Cmd
	out   *bytes.Buffer
	limit int
	mu    sync.Mutex
	done  chan struct{}
}

func (c *termClient) CreateTerminal(_ context.Context, p sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	cmd := exec.Command(p.Command, p.Args...)
	if p.Cwd != nil {
		cmd.Dir = *p.Cwd
	}
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY=the-clients-own-key")
	for _, e := range p.Env {
		cmd.Env = append(cmd.Env, e.Name+"="+e.Value)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	t := &clientTerm{cmd: cmd, out: &bytes.Buffer{}, done: make(chan struct{})}
	if p.OutputByteLimit != nil {
		t.limit = *p.OutputByteLimit
	}
	w := writerFunc(func(b []byte) (int, error) { t.mu.Lock(); t.out.Write(b); t.mu.Unlock(); return len(b), nil })
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		return sdk.CreateTerminalResponse{}, err
	}
	go func() { cmd.Wait(); close(t.done) }()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	id := fmt.Sprintf("term-%d", c.next)
	if c.terms == nil {
		c.terms = map[string]*clientTerm{}
	}
	c.terms[id] = t
	c.created = append(c.created, p)
	c.pids = append(c.pids, cmd.Process.Pid)
	return sdk.CreateTerminalResponse{TerminalId: id}, nil
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

func (c *termClient) term(id string) (*clientTerm, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.terms[id]; t != nil {
		return t, nil
	}
	return nil, errors.New("no such terminal: " + id)
}

func (t *clientTerm) exit() *sdk.TerminalExitStatus {
	select {
	case <-t.done:
	default:
		return nil
	}
	st := t.cmd.ProcessState
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		sig := ws.Signal().String()
		return &sdk.TerminalExitStatus{Signal: &sig}
	}
	code := st.ExitCode()
	return &sdk.TerminalExitStatus{ExitCode: &code}
}

func (c *termClient) WaitForTerminalExit(ctx context.Context, p sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	t, err := c.term(p.TerminalId)
	if err != nil {
		return sdk.WaitForTerminalExitResponse{}, err
	}
	select {
	case <-t.done:
	case <-ctx.Done():
		return sdk.WaitForTerminalExitResponse{}, ctx.Err()
	}
	e := t.exit()
	return sdk.WaitForTerminalExitResponse{ExitCode: e.ExitCode, Signal: e.Signal}, nil
}

func (c *termClient) TerminalOutput(_ context.Context, p sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	t, err := c.term(p.TerminalId)
	if err != nil {
		return sdk.TerminalOutputResponse{}, err
	}
	t.mu.Lock()
	out := t.out.String()
	t.mu.Unlock()
	truncated := false
	if t.limit > 0 && len(out) > t.limit {
		out, truncated = out[len(out)-t.limit:], true
	}
	return sdk.TerminalOutputResponse{Output: out, Truncated: truncated, ExitStatus: t.exit()}, nil
}

func (c *termClient) KillTerminal(_ context.Context, p sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	t, err := c.term(p.TerminalId)
	if err != nil {
		return sdk.KillTerminalResponse{}, err
	}
	syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
	<-t.done
	return sdk.KillTerminalResponse{}, nil
}

func (c *termClient) ReleaseTerminal(_ context.Context, p sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	t, err := c.term(p.TerminalId)
	if err != nil {
		return sdk.ReleaseTerminalResponse{}, err
	}
	syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
	c.mu.Lock()
	delete(c.terms, p.TerminalId)
	c.released++
	c.mu.Unlock()
	return sdk.ReleaseTerminalResponse{}, nil
}

func (c *termClient) RequestPermission(context.Context, sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.permitted++
	c.mu.Unlock()
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected("allow_once")}, nil
}

func (c *termClient) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	c.updates = append(c.updates, n)
	c.mu.Unlock()
	return nil
}

func (c *termClient) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, errors.New("not offered")
}

func (c *termClient) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, errors.New("not offered")
}

// terminalUpdates are, per tool call (by ACP's id), the terminal ids its
// updates carried, and whether its last update carried one.
func (c *termClient) terminalUpdates() (terms map[string][]string, last map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	terms, last = map[string][]string{}, map[string]bool{}
	for _, u := range c.updates {
		tc := u.Update.ToolCallUpdate
		if tc == nil {
			continue
		}
		id := string(tc.ToolCallId)
		has := len(tc.Content) > 0 && tc.Content[0].Terminal != nil
		if has {
			terms[id] = append(terms[id], tc.Content[0].Terminal.TerminalId)
		}
		last[id] = has
	}
	return terms, last
}

// TestRunCommandInClientTerminal: a client that advertises
// clientCapabilities.terminal (the SDK's client side) runs run_command's
// command in its own terminal: terminal/create with sh -c, the folder, the
// provider key variables set empty (the client's own key is not seen) and
// the output limit; the tool call shows the terminal live and at its end;
// the output and exit status reach the model; a command past its timeout
// is killed through terminal/kill; every terminal is released.
func TestRunCommandInClientTerminal(t *testing.T) {
	t.Parallel()
	fake, dataDir, cwd := newFixture(t)
	cmd := exec.Command(lsptest.BuildBinary(t), "acp", "--data-dir", dataDir, "--base-url", fake.URL, "--model", "test-model")
	cmd.Env = lsptest.Env(t, []string{"OPENAI_API_KEY=sk-test-not-real", "CTXLS_MODEL=", "OPENAI_BASE_URL=", "XDG_CONFIG_HOME=" + t.TempDir()})
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	client := &termClient{}
	conn := sdk.NewClientSideConnection(client, in, out)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: sdk.ClientCapabilities{Terminal: true}}); err != nil {
		t.Fatal(err)
	}
	sess, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: cwd, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "t1", Name: "run_command", Arguments: `{"command":"echo hi from $(pwd); echo \"key=[$OPENAI_API_KEY]\"; exit 3"}`},
			{ID: "t2", Name: "run_command", Arguments: `{"command":"echo started; sleep 30","timeout_seconds":1}`},
		}},
		openaitest.Reply{Chunks: []string{"Ran."}},
	)
	if _, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: sess.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("run them")}}); err != nil {
		t.Fatal(err)
	}
	results := fake.LastStreamed().ToolResults()
	if want := "hi from " + cwd + "\nkey=[]\n[exit status 3]"; results["t1"] != want {
		t.Errorf("the first command's result: %q, want %q", results["t1"], want)
	}
	if r := results["t2"]; !strings.HasPrefix(r, "started\n") || !strings.Contains(r, "timed out after 1s") {
		t.Errorf("the command past its timeout: %q", r)
	}
	client.mu.Lock()
	created, released, pids := client.created, client.released, client.pids
	client.mu.Unlock()
	if len(created) != 2 || released != 2 {
		t.Fatalf("%d terminals created, %d released", len(created), released)
	}
	c := created[0]
	blank := map[string]bool{}
	for _, e := range c.Env {
		if e.Value == "" {
			blank[e.Name] = true
		}
	}
	if c.Command != "sh" || len(c.Args) != 2 || c.Args[0] != "-c" || c.Cwd == nil || *c.Cwd != cwd || c.OutputByteLimit == nil || *c.OutputByteLimit != 30<<10 ||
		!blank["OPENAI_API_KEY"] || !blank["ANTHROPIC_API_KEY"] || !blank["CTXLS_MCP_TOKEN"] {
		t.Errorf("terminal/create: %+v (env %+v)", c, c.Env)
	}
	// Each call showed its own terminal as it ran and at its end.
	terms, last := client.terminalUpdates()
	shown := map[string]bool{}
	for call, ids := range terms {
		if len(ids) < 2 || !last[call] || ids[0] != ids[len(ids)-1] {
			t.Errorf("the tool call %s showed terminals %v, at its end: %v", call, ids, last[call])
		}
		shown[ids[0]] = true
	}
	if len(terms) != 2 || !shown["term-1"] || !shown["term-2"] {
		t.Errorf("the terminals shown: %v", terms)
	}
	for _, pid := range pids { // the timed-out one's sleep killed with it
		if !proctest.Gone(pid, 5*time.Second) {
			t.Errorf("the command's process %d is still running", pid)
		}
	}
}
