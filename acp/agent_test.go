package acp_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/acp/acptest"
	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/internal/pgtest"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/backend"
)

// agent is a `ctxls acp` process under test with its data directory and
// workspace folder.
type agent struct {
	*acptest.Client
	t       *testing.T
	fake    *openaitest.Server
	dataDir string
	cwd     string
}

// startAgent starts the built binary as an ACP agent over real stdio,
// initialized with the client capabilities fs (nil: none).
func startAgent(t *testing.T, fake *openaitest.Server, dataDir, cwd string, fs map[string]bool, flags ...string) *agent {
	t.Helper()
	bin := lsptest.BuildBinary(t)
	c := acptest.Start(t, bin, append([]string{"acp", "--data-dir", dataDir, "--base-url", fake.URL, "--model", "test-model"}, flags...),
		[]string{"OPENAI_API_KEY=sk-test-not-real", "CTXLS_MODEL=", "OPENAI_BASE_URL="})
	var res map[string]any
	caps := map[string]any{}
	if fs != nil {
		caps["fs"] = fs
	}
	if err := c.Call("initialize", map[string]any{
		"protocolVersion": 1, "clientCapabilities": caps,
		"clientInfo": map[string]any{"name": "acptest", "version": "1.0"},
	}, &res); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return &agent{Client: c, t: t, fake: fake, dataDir: dataDir, cwd: cwd}
}

func newFixture(t *testing.T) (*openaitest.Server, string, string) {
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Canary rollback plan"}}))
	return fake, t.TempDir(), t.TempDir()
}

func (a *agent) newSession() string {
	a.t.Helper()
	var res struct{ SessionID string }
	if err := a.Call("session/new", map[string]any{"cwd": a.cwd, "mcpServers": []any{}}, &res); err != nil {
		a.t.Fatalf("session/new: %v", err)
	}
	if res.SessionID == "" {
		a.t.Fatal("session/new gave no sessionId")
	}
	return res.SessionID
}

type promptResult struct {
	StopReason string `json:"stopReason"`
	Usage      *struct {
		InputTokens, OutputTokens, TotalTokens, CachedReadTokens int
	} `json:"usage"`
}

func (a *agent) prompt(id string, blocks ...map[string]any) (promptResult, error) {
	var res promptResult
	err := a.Call("session/prompt", map[string]any{"sessionId": id, "prompt": blocks}, &res)
	return res, err
}

func text(s string) map[string]any { return map[string]any{"type": "text", "text": s} }

// byCall names the tool calls of updates by the provider's ids: the i-th
// toolCallId first seen is called[i]'s (the agent's ids are its own).
func byCall(updates []acptest.Update, called ...string) map[string]string {
	names := map[string]string{}
	for _, u := range updates {
		if id := u.ToolCallID(); (u.Kind == "tool_call" || u.Kind == "tool_call_update") && id != "" {
			if _, ok := names[id]; !ok && len(names) < len(called) {
				names[id] = called[len(names)]
			}
		}
	}
	return names
}

func rpcCode(t *testing.T, err error) int {
	t.Helper()
	var re *acptest.RPCError
	if !errors.As(err, &re) {
		t.Fatalf("want a JSON-RPC error, got %v", err)
	}
	return re.Code
}

// waitModelTitle waits for the session_info_update carrying the model's
// title, so the title request never takes a reply queued for a turn.
func (a *agent) waitModelTitle(id string) {
	a.t.Helper()
	a.WaitUpdate("the model's title", func(u acptest.Update) bool {
		return u.SessionID == id && u.Kind == "session_info_update" && u.Title() == "Canary rollback plan"
	})
}

func TestInitializeAndNewSession(t *testing.T) {
	t.Parallel()
	fake, dataDir, cwd := newFixture(t)
	bin := lsptest.BuildBinary(t)
	c := acptest.Start(t, bin, []string{"acp", "--data-dir", dataDir, "--base-url", fake.URL}, nil)
	var res struct {
		ProtocolVersion   int `json:"protocolVersion"`
		AgentCapabilities struct {
			LoadSession        bool `json:"loadSession"`
			PromptCapabilities struct {
				EmbeddedContext, Image, Audio bool
			} `json:"promptCapabilities"`
			SessionCapabilities map[string]any `json:"sessionCapabilities"`
		} `json:"agentCapabilities"`
		AgentInfo   struct{ Name, Version string } `json:"agentInfo"`
		AuthMethods []any                          `json:"authMethods"`
	}
	if err := c.Call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, &res); err != nil {
		t.Fatal(err)
	}
	caps := res.AgentCapabilities
	if res.ProtocolVersion != 1 || !caps.LoadSession || !caps.PromptCapabilities.EmbeddedContext || !caps.PromptCapabilities.Image ||
		caps.PromptCapabilities.Audio || res.AgentInfo.Name != "ctxls" || res.AuthMethods == nil || len(res.AuthMethods) != 0 {
		t.Errorf("initialize: %+v", res)
	}
	for _, k := range []string{"list", "resume", "close", "delete"} {
		if _, ok := caps.SessionCapabilities[k]; !ok {
			t.Errorf("sessionCapabilities lacks %s: %v", k, caps.SessionCapabilities)
		}
	}
	var ns struct{ SessionID string }
	resp := <-c.Async("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}})
	if resp.Error != nil {
		t.Fatal(resp.Error)
	}
	json.Unmarshal(resp.Result, &ns)
	u := c.WaitUpdate("available commands", func(u acptest.Update) bool {
		return u.SessionID == ns.SessionID && u.Kind == "available_commands_update"
	})
	// The client learns the session's id from the response: the commands
	// must come after it on the wire.
	if u.Seq < resp.Seq {
		t.Errorf("available_commands_update (message %d) came before the session/new response (message %d)", u.Seq, resp.Seq)
	}
	for _, name := range []string{"context", "add", "drop", "files", "title", "export"} {
		if !strings.Contains(string(u.Raw), `"name":"`+name+`"`) {
			t.Errorf("command %s not offered: %s", name, u.Raw)
		}
	}
	store := openStore(t, dataDir)
	if s, err := store.Get(context.Background(), ns.SessionID); err != nil || s.Meta.Workspace != cwd {
		t.Errorf("stored session: %+v %v", s, err)
	}
	if errs := c.ProtocolErrors(); len(errs) > 0 {
		t.Errorf("stdout carried more than frames: %v", errs)
	}
}

func openStore(t *testing.T, dir string) session.Store {
	t.Helper()
	st, err := backend.Open(context.Background(), dir, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestPromptStreamsWithTitlesAndUsage(t *testing.T) {
	t.Parallel()
	fake, dataDir, cwd := newFixture(t)
	a := startAgent(t, fake, dataDir, cwd, nil)
	id := a.newSession()
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Roll ", "back ", "with helm."}, Usage: &openai.Usage{PromptTokens: 300, CompletionTokens: 3,
		PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: 256}}})
	res, err := a.prompt(id, text("How do I undo the canary deploy?\nIt broke checkout."))
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != "end_turn" || res.Usage == nil || res.Usage.TotalTokens != 303 || res.Usage.CachedReadTokens != 256 {
		t.Errorf("prompt result: %+v", res)
	}
	if got := a.AgentText(id); got != "Roll back with helm." {
		t.Errorf("agent text %q", got)
	}
	var kinds []string
	for _, u := range a.Updates(id) {
		if u.Kind == "available_commands_update" {
			continue // sent after session/new whenever it is ready: its place among the turn's updates is not fixed
		}
		kinds = append(kinds, u.Kind)
	}
	all := strings.Join(kinds, ",")
	if !strings.Contains(all, "session_info_update,agent_message_chunk") || !strings.Contains(all, "usage_update") {
		t.Errorf("updates: %s", all)
	}
	first := a.WaitUpdate("instant title", func(u acptest.Update) bool { return u.Kind == "session_info_update" })
	if first.Title() != "How do I undo the canary deploy?" {
		t.Errorf("instant title %q", first.Title())
	}
	a.waitModelTitle(id)
	// The provider got the message; the session is the LSP door's too.
	reqs := fake.Requests()
	if last := reqs[0].Parsed.Messages[len(reqs[0].Parsed.Messages)-1]; !strings.Contains(last.Content, "canary deploy") {
		t.Errorf("the provider got %q", last.Content)
	}
	// A follow-up carries the first exchange.
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Yes."}})
	if _, err := a.prompt(id, text("Is that safe?")); err != nil {
		t.Fatal(err)
	}
	reqs = fake.Requests()
	if body := string(reqs[len(reqs)-1].Body); !strings.Contains(body, "Roll back with helm.") || !strings.Contains(body, "Is that safe?") {
		t.Errorf("the follow-up lacks the history: %s", body)
	}
}

func TestToolCallsAndWrites(t *testing.T) {
	t.Parallel()
	for _, viaClient := range []bool{false, true} {
		t.Run(fmt.Sprintf("fs.writeTextFile=%v", viaClient), func(t *testing.T) {
			fake, dataDir, cwd := newFixture(t)
			src := filepath.Join(cwd, "main.go")
			os.WriteFile(src, []byte("package main // on disk\n"), 0o600)
			a := startAgent(t, fake, dataDir, cwd, map[string]bool{"readTextFile": false, "writeTextFile": viaClient})
			id := a.newSession()
			args, _ := json.Marshal(map[string]string{"path": src})
			wargs, _ := json.Marshal(map[string]string{"path": "results/plan.md", "content": "# Plan\n"})
			fake.Enqueue(
				openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "read_file", Arguments: string(args)}}},
				openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c2", Name: "write_file", Arguments: string(wargs)}, {ID: "c3", Name: "read_file", Arguments: `{"path":"/etc/passwd"}`}}},
				openaitest.Reply{Chunks: []string{"Done."}},
			)
			res, err := a.prompt(id, text("Read main.go and write a plan"))
			if err != nil || res.StopReason != "end_turn" {
				t.Fatalf("prompt: %+v %v", res, err)
			}
			// The model's title renames the session folder: read the
			// store once it has (mid-rename, the folder the database still
			// names is gone from the disk).
			a.waitModelTitle(id)
			calls := map[string]acptest.Update{}
			done := map[string]acptest.Update{}
			names := byCall(a.Updates(id), "c1", "c2", "c3")
			for _, u := range a.Updates(id) {
				switch u.Kind {
				case "tool_call":
					calls[names[u.ToolCallID()]] = u
				case "tool_call_update":
					done[names[u.ToolCallID()]] = u
				}
			}
			var read struct {
				Kind      string `json:"kind"`
				Status    string `json:"status"`
				Locations []struct{ Path string }
			}
			json.Unmarshal(calls["c1"].Raw, &read)
			if read.Kind != "read" || read.Status != "in_progress" || len(read.Locations) != 1 || read.Locations[0].Path != src {
				t.Errorf("read_file tool_call: %s", calls["c1"].Raw)
			}
			if done["c1"].Status() != "completed" || !strings.Contains(string(done["c1"].Raw), "on disk") {
				t.Errorf("read_file update: %s", done["c1"].Raw)
			}
			if !strings.Contains(string(calls["c2"].Raw), `"kind":"edit"`) || strings.Contains(string(calls["c2"].Raw), "# Plan") {
				t.Errorf("write_file tool_call (kind edit, no content): %s", calls["c2"].Raw)
			}
			if done["c3"].Status() != "failed" {
				t.Errorf("a refused read must be failed: %s", done["c3"].Raw)
			}
			st := openStore(t, dataDir)
			sess, _ := st.Get(context.Background(), id)
			target := filepath.Join(sess.Folder, "results", "plan.md")
			writes := a.Writes()
			if viaClient {
				// Inside the session folder (whose name follows the title,
				// which the model may change after the write).
				sessions := filepath.Join(dataDir, "sessions") + string(filepath.Separator)
				if len(writes) != 1 || !strings.HasPrefix(writes[0].Path, sessions) || !strings.HasSuffix(writes[0].Path, id[:6]+"/results/plan.md") ||
					writes[0].Content != "# Plan\n" || writes[0].SessionID != id {
					t.Errorf("fs/write_text_file calls: %+v (want %s)", writes, target)
				}
				if _, err := os.Stat(target); err == nil {
					t.Errorf("ctxls wrote %s itself although the client did", target)
				}
			} else {
				if len(writes) != 0 {
					t.Errorf("the client was asked to write without the capability: %+v", writes)
				}
				if b, err := os.ReadFile(target); err != nil || string(b) != "# Plan\n" {
					t.Errorf("file on disk: %q %v", b, err)
				}
			}
		})
	}
}

func TestLoadReplaysAfterRestart(t *testing.T) { testLoadReplay(t) }

// TestLoadReplaysOnAnotherMachine: the same with the PostgreSQL store, the
// second agent on another machine (a data directory of its own): the
// session made on the first is listed, replayed and continued there.
func TestLoadReplaysOnAnotherMachine(t *testing.T) {
	t.Parallel()
	c := pgtest.Start(t)
	if _, err := backend.InitPostgres(context.Background(), c.DSN("", "postgres")); err != nil {
		t.Fatal(err)
	}
	testLoadReplay(t, "--store", c.DSN("", "postgres"))
}

func testLoadReplay(t *testing.T, flags ...string) {
	fake, dataDir, cwd := newFixture(t)
	a := startAgent(t, fake, dataDir, cwd, nil, flags...)
	id := a.newSession()
	fake.Enqueue(
		openaitest.Reply{Chunks: []string{"Let me look."}, ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "get_relevant_context", Arguments: `{}`}}},
		openaitest.Reply{Chunks: []string{"Nothing set yet."}},
	)
	if _, err := a.prompt(id, text("What is in context?")); err != nil {
		t.Fatal(err)
	}
	a.waitModelTitle(id)
	if err := a.Call("session/add_nothing", nil, nil); rpcCode(t, err) != -32601 {
		t.Errorf("unknown method")
	}
	a.Close()

	if len(flags) > 0 {
		dataDir = t.TempDir() // another machine
	}
	b := startAgent(t, fake, dataDir, cwd, nil, flags...)
	var list struct {
		Sessions []struct {
			SessionID, Cwd, Title, UpdatedAt string
		}
	}
	if err := b.Call("session/list", map[string]any{"cwd": cwd}, &list); err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].SessionID != id || list.Sessions[0].Title != "Canary rollback plan" ||
		list.Sessions[0].Cwd != cwd || list.Sessions[0].UpdatedAt == "" {
		t.Errorf("session/list after restart: %+v", list)
	}
	if err := b.Call("session/list", map[string]any{"cwd": "/somewhere/else"}, &list); err != nil || len(list.Sessions) != 0 {
		t.Errorf("session/list of another folder: %+v %v", list, err)
	}
	load := <-b.Async("session/load", map[string]any{"sessionId": id, "cwd": cwd, "mcpServers": []any{}})
	if load.Error != nil {
		t.Fatal(load.Error)
	}
	// Everything was replayed before the response.
	var seq []string
	for _, u := range b.Updates(id) {
		if u.Seq > load.Seq {
			break
		}
		s := u.Kind
		if t := u.Text(); t != "" {
			s += ":" + t
		}
		seq = append(seq, s)
	}
	got := strings.Join(seq, " | ")
	want := "user_message_chunk:What is in context? | agent_message_chunk:Let me look. | tool_call | tool_call_update | agent_message_chunk:Nothing set yet. | session_info_update"
	if !strings.HasPrefix(got, want) {
		t.Errorf("replay:\n got %s\nwant %s…", got, want)
	}
	// The next turn carries the resume reminder.
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Back."}})
	if _, err := b.prompt(id, text("Where were we?")); err != nil {
		t.Fatal(err)
	}
	reqs := fake.Requests()
	if sys := reqs[len(reqs)-1].ModelContext(); !strings.Contains(strings.ToLower(sys), "resum") {
		t.Errorf("no resume reminder after load:\n%s", sys)
	}
}

func TestResumeCloseDelete(t *testing.T) {
	t.Parallel()
	fake, dataDir, cwd := newFixture(t)
	a := startAgent(t, fake, dataDir, cwd, nil)
	id := a.newSession()
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Hi."}})
	if _, err := a.prompt(id, text("hello")); err != nil {
		t.Fatal(err)
	}
	a.waitModelTitle(id)
	if err := a.Call("session/close", map[string]any{"sessionId": id}, nil); err != nil {
		t.Fatal(err)
	}
	_, err := a.prompt(id, text("still there?"))
	if rpcCode(t, err) != -32602 || !strings.Contains(err.Error(), "not open") {
		t.Errorf("prompt on a closed session: %v", err)
	}
	n := len(a.Updates(id))
	if err := a.Call("session/resume", map[string]any{"sessionId": id, "cwd": cwd}, nil); err != nil {
		t.Fatal(err)
	}
	for _, u := range a.Updates(id)[n:] {
		if u.Kind == "user_message_chunk" || u.Kind == "agent_message_chunk" {
			t.Errorf("resume replayed: %+v", u)
		}
	}
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Again."}})
	if _, err := a.prompt(id, text("continue")); err != nil {
		t.Fatal(err)
	}
	reqs := fake.Requests()
	if sys := reqs[len(reqs)-1].ModelContext(); !strings.Contains(strings.ToLower(sys), "resum") {
		t.Errorf("no resume reminder after resume:\n%s", sys)
	}
	if err := a.Call("session/delete", map[string]any{"sessionId": id}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := openStore(t, dataDir).Get(context.Background(), id); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("deleted session still stored: %v", err)
	}
	if err := a.Call("session/resume", map[string]any{"sessionId": id, "cwd": cwd}, nil); rpcCode(t, err) != -32002 || !strings.Contains(err.Error(), "unknown session") {
		t.Errorf("resume of a deleted session: %v", err)
	}
}

// TestCancel: session/cancel stops the upstream stream within 100 ms, keeps
// the partial answer as interrupted, and the prompt answers "cancelled".
func TestCancel(t *testing.T) {
	t.Parallel()
	fake, dataDir, cwd := newFixture(t)
	a := startAgent(t, fake, dataDir, cwd, nil)
	id := a.newSession()
	chunks := make([]string, 200)
	for i := range chunks {
		chunks[i] = fmt.Sprintf("w%d ", i)
	}
	fake.Enqueue(openaitest.Reply{Chunks: chunks, Delay: 50 * time.Millisecond})
	reply := a.Async("session/prompt", map[string]any{"sessionId": id, "prompt": []any{text("write a lot")}})
	a.WaitUpdate("first chunk", func(u acptest.Update) bool { return u.SessionID == id && u.Kind == "agent_message_chunk" })
	sent := time.Now()
	a.Notify("session/cancel", map[string]any{"sessionId": id})
	r := fake.WaitCancelled(0, 5*time.Second)
	if d := r.CancelledAt.Sub(sent); d > 100*time.Millisecond {
		t.Errorf("the upstream request ended %v after session/cancel; want within 100 ms", d)
	}
	m := <-reply
	if m.Error != nil {
		t.Fatalf("cancel must not be an error: %+v", m.Error)
	}
	var res promptResult
	json.Unmarshal(m.Result, &res)
	if res.StopReason != "cancelled" {
		t.Errorf("stopReason %q, want cancelled", res.StopReason)
	}
	msgs, err := openStore(t, dataDir).Messages(context.Background(), id)
	if err != nil || len(msgs) != 2 || msgs[1].Status != session.StatusCancelled || !strings.HasPrefix(msgs[1].Content, "w0 ") {
		t.Errorf("stored: %+v %v", msgs, err)
	}
	// The session takes the next prompt at once.
	fake.Enqueue(openaitest.Reply{Chunks: []string{"ok"}})
	if res, err := a.prompt(id, text("short please")); err != nil || res.StopReason != "end_turn" {
		t.Errorf("prompt after cancel: %+v %v", res, err)
	}
}

func TestStopReasons(t *testing.T) {
	t.Parallel()
	fake, dataDir, cwd := newFixture(t)
	a := startAgent(t, fake, dataDir, cwd, nil)
	id := a.newSession()
	fake.Enqueue(openaitest.Reply{Chunks: []string{"cut"}, FinishReason: "length"})
	if res, err := a.prompt(id, text("long")); err != nil || res.StopReason != "max_tokens" {
		t.Errorf("length: %+v %v", res, err)
	}
	a.waitModelTitle(id)
	for i := range 8 {
		fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: fmt.Sprintf("t%d", i), Name: "get_relevant_context", Arguments: `{}`}}})
	}
	if res, err := a.prompt(id, text("loop")); err != nil || res.StopReason != "max_turn_requests" {
		t.Errorf("tool limit: %+v %v", res, err)
	}
	fake.Enqueue(openaitest.Reply{Status: 500, ErrorMessage: "upstream on fire"}, openaitest.Reply{Status: 500, ErrorMessage: "upstream on fire"},
		openaitest.Reply{Status: 500, ErrorMessage: "upstream on fire"}, openaitest.Reply{Status: 500, ErrorMessage: "upstream on fire"})
	_, err := a.prompt(id, text("fail"))
	if err == nil || !strings.Contains(err.Error(), "upstream on fire") {
		t.Errorf("provider failure: %v", err)
	}
}

func TestSlashCommands(t *testing.T) {
	t.Parallel()
	fake, dataDir, cwd := newFixture(t)
	for _, f := range []string{"a.go", "b.go"} {
		os.WriteFile(filepath.Join(cwd, f), []byte("package a\n"), 0o600)
	}
	a := startAgent(t, fake, dataDir, cwd, nil)
	id := a.newSession()
	run := func(cmd string) string {
		t.Helper()
		before := a.AgentText(id)
		res, err := a.prompt(id, text(cmd))
		if err != nil || res.StopReason != "end_turn" {
			t.Fatalf("%s: %+v %v", cmd, res, err)
		}
		return strings.TrimPrefix(a.AgentText(id), before)
	}
	if out := run("/add a.go b.go"); !strings.Contains(out, filepath.Join(cwd, "a.go")) || !strings.Contains(out, "Relevant files: 2") {
		t.Errorf("/add: %q", out)
	}
	if out := run("/drop a.go"); !strings.Contains(out, "Removed "+filepath.Join(cwd, "a.go")) {
		t.Errorf("/drop: %q", out)
	}
	if out := run("/context"); !strings.Contains(out, filepath.Join(cwd, "b.go")) || strings.Contains(out, filepath.Join(cwd, "a.go")) {
		t.Errorf("/context: %q", out)
	}
	if out := run("/files"); !strings.Contains(out, "no files") {
		t.Errorf("/files: %q", out)
	}
	if out := run("/title Checkout fix"); !strings.Contains(out, "Checkout fix") {
		t.Errorf("/title: %q", out)
	}
	a.WaitUpdate("renamed", func(u acptest.Update) bool { return u.Kind == "session_info_update" && u.Title() == "Checkout fix" })
	if out := run("/export markdown"); !strings.Contains(out, "Checkout fix") {
		t.Errorf("/export: %q", out)
	}
	if out := run("/export yaml"); !strings.Contains(out, "failed") {
		t.Errorf("/export yaml: %q", out)
	}
	if out := run("/help"); !strings.Contains(out, "/add PATH...: Add files") || !strings.Contains(out, "/usage: ") || !strings.Contains(out, "/help: ") {
		t.Errorf("/help: %q", out)
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("slash commands called the model %d times", n)
	}
	fake.Enqueue(openaitest.Reply{Chunks: []string{"A path."}})
	if out := run("/usr/bin is what?"); out != "A path." {
		t.Errorf("a slash that names no command goes to the model: %q", out)
	}
	if sys := fake.Requests()[0].ModelContext(); !strings.Contains(sys, filepath.Join(cwd, "b.go")) {
		t.Errorf("the added file is not in the prompt:\n%s", sys)
	}
}

// TestEditorText: the editor's text wins over the disk: embedded resources,
// then fs/read_text_file; resource links are read from the disk.
func TestEditorText(t *testing.T) {
	t.Parallel()
	fake, dataDir, cwd := newFixture(t)
	a1, b1, c1 := filepath.Join(cwd, "a.go"), filepath.Join(cwd, "b.go"), filepath.Join(cwd, "c.go")
	for _, p := range []string{a1, b1, c1} {
		os.WriteFile(p, []byte("// disk "+filepath.Base(p)+"\n"), 0o600)
	}
	a := startAgent(t, fake, dataDir, cwd, map[string]bool{"readTextFile": true})
	a.SetFile(c1, "// unsaved c.go from the editor\n")
	id := a.newSession()
	if _, err := a.prompt(id, text("/add c.go")); err != nil {
		t.Fatal(err)
	}
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Seen."}})
	_, err := a.prompt(id,
		text("Compare these"),
		map[string]any{"type": "resource", "resource": map[string]any{"uri": "file://" + a1, "text": "// unsaved a.go embedded\n"}},
		map[string]any{"type": "resource_link", "uri": "file://" + b1, "name": "b.go"},
	)
	if err != nil {
		t.Fatal(err)
	}
	sys := fake.Requests()[0].ModelContext()
	for _, want := range []string{"unsaved a.go embedded", "// disk b.go", "unsaved c.go from the editor"} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, sys)
		}
	}
	if strings.Contains(sys, "// disk a.go") || strings.Contains(sys, "// disk c.go") {
		t.Errorf("the disk won over the editor's text:\n%s", sys)
	}
	// An image that is not what it claims is refused; a real one is kept in
	// the session folder and goes to the model as an image part.
	_, err = a.prompt(id, text("look"), map[string]any{"type": "image", "data": "AAAA", "mimeType": "image/png"})
	if rpcCode(t, err) != -32602 {
		t.Errorf("a broken image: %v", err)
	}
	var pic bytes.Buffer
	png.Encode(&pic, image.NewGray(image.Rect(0, 0, 8, 8)))
	data := base64.StdEncoding.EncodeToString(pic.Bytes())
	if _, err := a.prompt(id, text("look at this"), map[string]any{"type": "image", "data": data, "mimeType": "image/png"}); err != nil {
		t.Fatalf("an image: %v", err)
	}
	reqs := fake.Requests()
	msgs := reqs[len(reqs)-1].Parsed.Messages
	last := msgs[len(msgs)-1]
	if imgs := openaitest.Images(last); len(imgs) != 1 || imgs[0] != "data:image/png;base64,"+data || !strings.Contains(openaitest.Text(last), "[image: sources/image-") {
		t.Errorf("the image's turn: %d image parts, text %q", len(imgs), openaitest.Text(last))
	}
	_, err = a.prompt(id, text("listen"), map[string]any{"type": "audio", "data": "AAAA", "mimeType": "audio/wav"})
	if rpcCode(t, err) != -32602 {
		t.Errorf("audio: %v", err)
	}
	// Loaded elsewhere, the question's image is replayed after its text.
	b := startAgent(t, fake, dataDir, cwd, nil)
	if err := b.Call("session/load", map[string]any{"sessionId": id, "cwd": cwd, "mcpServers": []any{}}, nil); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, u := range b.Updates(id) {
		if u.Kind != "user_message_chunk" {
			continue
		}
		var v struct {
			Content struct{ Type, Text, Data, MimeType string } `json:"content"`
		}
		json.Unmarshal(u.Raw, &v)
		kinds = append(kinds, v.Content.Type)
		if v.Content.Type == "image" && (v.Content.Data != data || v.Content.MimeType != "image/png") {
			t.Errorf("the replayed image: %s", u.Raw)
		}
	}
	if got := strings.Join(kinds, " "); got != "text text image" {
		t.Errorf("the replayed questions' blocks: %s", got)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	fake, dataDir, cwd := newFixture(t)
	a := startAgent(t, fake, dataDir, cwd, nil)
	id := a.newSession()
	for _, tc := range []struct {
		method string
		params any
		code   int
		msg    string
	}{
		{"session/prompt", map[string]any{"sessionId": "nope", "prompt": []any{text("x")}}, -32002, "unknown session"},
		{"session/load", map[string]any{"sessionId": "nope", "cwd": cwd, "mcpServers": []any{}}, -32002, "unknown session"},
		{"session/resume", map[string]any{"sessionId": "nope", "cwd": cwd}, -32002, "unknown session"},
		{"session/close", map[string]any{"sessionId": "nope"}, -32002, "unknown session"},
		{"session/delete", map[string]any{"sessionId": "nope"}, -32002, "unknown session"},
		{"session/new", map[string]any{"cwd": "relative/dir", "mcpServers": []any{}}, -32602, "absolute"},
		{"session/prompt", map[string]any{"sessionId": 5, "prompt": "x"}, -32602, ""},
		{"session/prompt", map[string]any{"sessionId": id, "prompt": []any{}}, -32602, "no text"},
		{"session/list", map[string]any{"cursor": "garbage"}, -32602, "cursor"},
		{"session/set_mode", map[string]any{"sessionId": id, "modeId": "x"}, -32602, `a review mode is "ask", "auto" or "off", got "x"`},
		{"session/set_mode", map[string]any{"sessionId": "nope", "modeId": "auto"}, -32002, "unknown session"},
		{"no/such/method", map[string]any{}, -32601, ""},
	} {
		err := a.Call(tc.method, tc.params, nil)
		if rpcCode(t, err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s %v: %v (want %d %q)", tc.method, tc.params, err, tc.code, tc.msg)
		}
	}
	a.WriteRaw([]byte("this is not json\n"))
	a.WaitFor("parse error", func(m *acptest.Message) bool { return m.Error != nil && m.Error.Code == -32700 })
	huge := fmt.Sprintf(`{"jsonrpc":"2.0","id":991,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"%s"}]}}`+"\n", id, strings.Repeat("x", 9<<20))
	a.WriteRaw([]byte(huge))
	m := a.WaitFor("oversized", func(m *acptest.Message) bool { return m.Error != nil && m.Error.Code == -32600 })
	if string(m.ID) != "991" {
		t.Errorf("the oversized message's error carries id %s", m.ID)
	}
	// Still serving, nothing lost.
	fake.Enqueue(openaitest.Reply{Chunks: []string{"still here"}})
	if res, err := a.prompt(id, text("are you alive?")); err != nil || res.StopReason != "end_turn" {
		t.Errorf("after bad input: %+v %v", res, err)
	}
	if errs := a.ProtocolErrors(); len(errs) > 0 {
		t.Errorf("protocol errors: %v", errs)
	}
}

// TestOneStoreBothDoors: a session made over ACP is seen by the LSP door and
// the CLI, and one made over LSP by the ACP door.
func TestOneStoreBothDoors(t *testing.T) {
	t.Parallel()
	fake, dataDir, cwd := newFixture(t)
	a := startAgent(t, fake, dataDir, cwd, nil)
	id := a.newSession()
	fake.Enqueue(openaitest.Reply{Chunks: []string{"From ACP."}})
	if _, err := a.prompt(id, text("made in zed")); err != nil {
		t.Fatal(err)
	}
	a.waitModelTitle(id)

	s := lsptest.Binary(t, []string{"OPENAI_API_KEY=sk-test-not-real"}, "serve", "--data-dir", dataDir)
	s.Initialize(lsptest.InitOptions{RootURI: "file://" + cwd, InitOptions: map[string]any{
		"provider": map[string]any{"baseURL": fake.URL, "model": "test-model"}}})
	var list api.SessionListResult
	s.MustCommand(api.SessionList, map[string]any{}, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].ID != id || list.Sessions[0].Title != "Canary rollback plan" {
		t.Errorf("the LSP door lists %+v", list.Sessions)
	}
	var show api.ShowResult
	s.MustCommand(api.SessionShow, map[string]any{"sessionId": id}, &show)
	if len(show.Messages) != 2 || show.Messages[1].Content != "From ACP." {
		t.Errorf("the LSP door shows %+v", show.Messages)
	}
	fake.Enqueue(openaitest.Reply{Chunks: []string{"From VS Code."}}, openaitest.Reply{Chunks: []string{"Editor title"}})
	var res api.ChatResult
	s.MustCommand(api.SessionNew, map[string]any{}, nil)
	s.MustCommand(api.Chat, map[string]any{"message": "made in vs code"}, &res)

	var acpList struct {
		Sessions []struct{ SessionID, Cwd string }
	}
	if err := a.Call("session/list", map[string]any{"cwd": cwd}, &acpList); err != nil {
		t.Fatal(err)
	}
	if len(acpList.Sessions) != 2 || acpList.Sessions[0].SessionID != res.SessionID {
		t.Errorf("the ACP door lists %+v, want the LSP session %s first", acpList.Sessions, res.SessionID)
	}
	if err := a.Call("session/load", map[string]any{"sessionId": res.SessionID, "cwd": cwd, "mcpServers": []any{}}, nil); err != nil {
		t.Fatal(err)
	}
	if got := a.AgentText(res.SessionID); got != "From VS Code." {
		t.Errorf("replayed %q", got)
	}
	out, err := exec.Command(lsptest.BuildBinary(t), "sessions", "list", "--data-dir", dataDir).CombinedOutput()
	if err != nil || !strings.Contains(string(out), id) {
		t.Errorf("ctxls sessions list: %s %v", out, err)
	}
}

// TestProviderFromMeta: initialize's _meta.ctxls.provider configures the
// provider, as the LSP door's initializationOptions.provider does.
func TestProviderFromMeta(t *testing.T) {
	t.Parallel()
	fake, dataDir, cwd := newFixture(t)
	bin := lsptest.BuildBinary(t)
	c := acptest.Start(t, bin, []string{"acp", "--data-dir", dataDir}, []string{"OPENAI_API_KEY=sk-test-not-real", "CTXLS_MODEL=", "OPENAI_BASE_URL="})
	bad := map[string]any{"protocolVersion": 1, "_meta": map[string]any{"ctxls": map[string]any{"provider": map[string]any{"modle": "typo"}}}}
	if err := c.Call("initialize", bad, nil); rpcCode(t, err) != -32602 || !strings.Contains(err.Error(), "modle") {
		t.Errorf("a provider with a typo: %v", err)
	}
	good := map[string]any{"protocolVersion": 1, "_meta": map[string]any{"ctxls": map[string]any{
		"provider": map[string]any{"baseURL": fake.URL, "model": "meta-model"}}}}
	if err := c.Call("initialize", good, nil); err != nil {
		t.Fatal(err)
	}
	a := &agent{Client: c, t: t, fake: fake, dataDir: dataDir, cwd: cwd}
	id := a.newSession()
	fake.Enqueue(openaitest.Reply{Chunks: []string{"ok"}})
	if _, err := a.prompt(id, text("which model?")); err != nil {
		t.Fatal(err)
	}
	if m := fake.Requests()[0].Parsed.Model; m != "meta-model" {
		t.Errorf("model %q, want meta-model", m)
	}
}

// TestDeleteWhileStreaming: session/delete while the session's prompt
// streams stops the turn and waits for its end before the session goes (as
// the LSP door's delete, through the same service operation): the prompt
// ends with the kind notFound, the session and its messages are gone, and
// no checkpoint of the answer follows.
func TestDeleteWhileStreaming(t *testing.T) {
	t.Parallel()
	fake, dataDir, cwd := newFixture(t)
	a := startAgent(t, fake, dataDir, cwd, nil)
	id := a.newSession()
	fake.Enqueue(openaitest.Reply{Chunks: []string{"partial ", "never"}, Fault: openaitest.FaultStall, FaultAfter: 1})
	done := a.Async("session/prompt", map[string]any{"sessionId": id, "prompt": []any{text("a long question")}})
	a.WaitUpdate("the first chunk", func(u acptest.Update) bool {
		return u.SessionID == id && u.Kind == "agent_message_chunk" && u.Text() == "partial "
	})
	time.Sleep(1200 * time.Millisecond) // a checkpoint and a heartbeat happen meanwhile
	if err := a.Call("session/delete", map[string]any{"sessionId": id}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-done:
		var data api.ErrorData
		if m.Error != nil {
			json.Unmarshal(m.Error.Data, &data)
		}
		if m.Error == nil || data.Kind != api.KindNotFound || !strings.Contains(m.Error.Message, "deleted while its turn ran") {
			t.Errorf("the prompt after the delete: %+v", m.Error)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the prompt did not end after the delete")
	}
	st := openStore(t, dataDir)
	if _, err := st.Get(context.Background(), id); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("the session is still stored: %v", err)
	}
	if _, err := st.Messages(context.Background(), id); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("its messages: %v", err)
	}
	time.Sleep(1200 * time.Millisecond) // no checkpoint of the deleted answer may follow
	if n := strings.Count(a.Stderr(), "checkpoint failed"); n != 0 {
		t.Errorf("%d checkpoint warnings after the delete:\n%s", n, a.Stderr())
	}
	if err := a.Call("session/resume", map[string]any{"sessionId": id, "cwd": cwd}, nil); rpcCode(t, err) != api.KindNotFound.Info().ACP {
		t.Errorf("resume after the delete: %v", err)
	}
}

// TestNoProviderSaysWhereForACP: with no provider anywhere a prompt fails
// with kind noProvider, and the message says once what to set, naming the
// variables, and where an ACP agent's user sets them (the environment the
// editor starts it with, Zed's agent_servers entry, its arguments), not the
// LSP door's initializationOptions or editor settings.
func TestNoProviderSaysWhereForACP(t *testing.T) {
	t.Parallel()
	fake, dataDir, cwd := newFixture(t)
	c := acptest.Start(t, lsptest.BuildBinary(t), []string{"acp", "--data-dir", dataDir},
		[]string{"OPENAI_API_KEY=", "CTXLS_MODEL=", "OPENAI_BASE_URL=", "ANTHROPIC_API_KEY="})
	if err := c.Call("initialize", map[string]any{"protocolVersion": 1}, nil); err != nil {
		t.Fatal(err)
	}
	a := &agent{Client: c, t: t, fake: fake, dataDir: dataDir, cwd: cwd}
	id := a.newSession()
	_, err := a.prompt(id, text("hi"))
	if err == nil || !strings.Contains(err.Error(), "agent_servers") {
		t.Fatalf("the prompt without a provider: %v", err)
	}
	msg := err.Error()
	if n := strings.Count(msg, "no model provider is configured"); n != 1 {
		t.Errorf("said %d times: %s", n, msg)
	}
	for _, want := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "CTXLS_MODEL"} {
		if strings.Count(msg, want) != 1 {
			t.Errorf("the message does not name %s once: %s", want, msg)
		}
	}
	for _, lsp := range []string{"initializationOptions", "ctxls.provider", "settings", "provider.baseURL", "provider.model", "_meta"} {
		if strings.Contains(msg, lsp) {
			t.Errorf("the message names %q, which an ACP user does not set: %s", lsp, msg)
		}
	}
	if len(msg) > 500 {
		t.Errorf("the message is %d bytes: %s", len(msg), msg)
	}
}
