package service

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/internal/testmcp"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/tool"
)

// mcpService is a service whose settings configure the test MCP server
// as "t" (and others given), with the fake provider.
func mcpService(t *testing.T, fake *openaitest.Server, servers map[string]map[string]any) (*Service, string) {
	t.Helper()
	dir := t.TempDir()
	if servers == nil {
		servers = map[string]map[string]any{}
	}
	if _, ok := servers["t"]; !ok {
		servers["t"] = testmcp.Server(t, "t", dir)
	}
	s := open(t, nil, api.Provider{BaseURL: fake.URL, Model: "test-model"})
	raw, _ := json.Marshal(servers)
	if err := s.SetMCPServers(raw); err != nil {
		t.Fatal(err)
	}
	return s, dir
}

// asked records the permission requests and answers each with the next
// decision (tool.AllowOnce when none are left).
type asked struct {
	mu        sync.Mutex
	requests  []tool.PermissionRequest
	decisions []tool.Decision
}

func (a *asked) ask(_ context.Context, r tool.PermissionRequest) (tool.Decision, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.requests = append(a.requests, r)
	if len(a.decisions) == 0 {
		return tool.AllowOnce, nil
	}
	d := a.decisions[0]
	a.decisions = a.decisions[1:]
	return d, nil
}

// runTurn runs a turn to its end and returns its events.
func runTurn(t *testing.T, s *Service, sessionID, message string) []Event {
	t.Helper()
	tr, err := s.StartTurn(context.Background(), &api.ChatArgs{SessionID: sessionID, Message: message}, TurnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var evs []Event
	for ev := range tr.Events() {
		evs = append(evs, ev)
	}
	if f, ok := evs[len(evs)-1].(Failed); ok {
		t.Fatalf("turn failed: %v", f.Err)
	}
	return evs
}

func TestMCPToolsWithPermission(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	s, _ := mcpService(t, fake, nil)
	a := &asked{decisions: []tool.Decision{tool.AllowOnce, tool.RejectOnce, tool.AllowAlways}}
	s.Tools().SetAsker(a.ask)
	sess, err := s.SessionNew(context.Background(), &api.SessionNewArgs{})
	if err != nil {
		t.Fatal(err)
	}
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "c1", Name: "mcp__t__echo", Arguments: `{"text":"hi"}`},
			{ID: "c2", Name: "mcp__t__add", Arguments: `{"a":2,"b":3}`},
			{ID: "c3", Name: "mcp__t__picture", Arguments: `{}`},
		}},
		openaitest.Reply{Chunks: []string{"Done."}},
	)
	evs := runTurn(t, s, sess.Session.ID, "use the tools")
	reqs := fake.WaitRequests(2, 10*time.Second)
	names := map[string]string{}
	for _, tool := range reqs[0].Parsed.Tools {
		names[tool.Function.Name] = tool.Function.Description
	}
	for _, want := range []string{"read_file", "mcp__t__echo", "mcp__t__slow", "mcp__t__picture"} {
		if _, ok := names[want]; !ok {
			t.Errorf("tool %s not offered: %v", want, names)
		}
	}
	if !strings.Contains(names["mcp__t__echo"], "Echoes its text") {
		t.Errorf("echo's description: %q", names["mcp__t__echo"])
	}
	res := reqs[1].ToolResults()
	if res["c1"] != "echo: hi" {
		t.Errorf("echo, allowed once: %q", res["c1"])
	}
	if !strings.Contains(res["c2"], "declined") || strings.Contains(res["c2"], "sum") {
		t.Errorf("add, rejected: %q", res["c2"])
	}
	if !strings.Contains(res["c3"], "here it is") || !strings.Contains(res["c3"], "image (image/png") || !strings.Contains(res["c3"], "[pic.png](file:///tmp/pic.png)") {
		t.Errorf("picture: %q", res["c3"])
	}
	if len(a.requests) != 3 || a.requests[0].Call.Server != "t" || a.requests[0].Call.Tool != "echo" || !a.requests[0].Call.ReadOnly || a.requests[1].Call.ReadOnly {
		t.Errorf("requests: %+v", a.requests)
	}
	// The events: pending, allowed, finished; declined for c2.
	var kinds []string
	for _, ev := range evs {
		switch ev := ev.(type) {
		case ToolStarted:
			kinds = append(kinds, "start:"+ev.Call.ProviderID+map[bool]string{true: ":pending"}[ev.Pending])
		case ToolAllowed:
			kinds = append(kinds, "allowed:"+ev.Call.ProviderID)
		case ToolFinished:
			kinds = append(kinds, "end:"+ev.Call.ProviderID+map[bool]string{true: ":declined"}[ev.Declined])
		}
	}
	want := "start:c1:pending allowed:c1 end:c1 start:c2:pending end:c2:declined start:c3:pending allowed:c3 end:c3"
	if strings.Join(kinds, " ") != want {
		t.Errorf("events:\n got %s\nwant %s", strings.Join(kinds, " "), want)
	}

	fake.WaitRequests(3, 10*time.Second) // the title's, made after the turn
	// "Always" is kept with the session: the next call of picture is not
	// asked, add (rejected once) is asked again.
	stored, _ := s.store.Get(context.Background(), sess.Session.ID)
	// It is kept under the name and the server's and tool's identity
	// (mcp__t__picture@…), not the name alone.
	var standing []string
	for k, v := range stored.Meta.Tools {
		if strings.HasPrefix(k, "mcp__t__picture@") && v == session.ToolAllow {
			standing = append(standing, k)
		}
	}
	if len(standing) != 1 || len(stored.Meta.Tools) != 1 {
		t.Errorf("the standing decision: %+v", stored.Meta.Tools)
	}
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "d1", Name: "mcp__t__picture", Arguments: `{}`},
			{ID: "d2", Name: "mcp__t__add", Arguments: `{"a":2,"b":3}`},
		}},
		openaitest.Reply{Chunks: []string{"Again."}},
	)
	runTurn(t, s, sess.Session.ID, "again")
	res = fake.LastStreamed().ToolResults()
	if !strings.Contains(res["d1"], "here it is") || res["d2"] != `{"sum":5}` {
		t.Errorf("second turn: %q", res)
	}
	if len(a.requests) != 4 || a.requests[3].Call.Tool != "add" {
		t.Errorf("asked again for: %+v", a.requests[3:])
	}
}

func TestMCPToolFaults(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	dir := t.TempDir()
	s, _ := mcpService(t, fake, map[string]map[string]any{
		"many":  testmcp.Server(t, "many", dir, "-many"),
		"bad":   testmcp.Server(t, "bad", dir, "-badschema"),
		"gone":  {"command": "/nonexistent/mcp-server"},
		"quick": func() map[string]any { m := testmcp.Server(t, "quick", dir); m["timeoutSeconds"] = 1; return m }(),
	})
	s.box.Manager().Backoff = 50 * time.Millisecond
	s.Tools().SetAllowReadOnly(true)
	s.Tools().SetAsker((&asked{}).ask)
	var notices []string
	var mu sync.Mutex
	s.Subscribe(func(ev Update) {
		if n, ok := ev.(Notice); ok {
			mu.Lock()
			notices = append(notices, n.Message)
			mu.Unlock()
		}
	})
	sess, _ := s.SessionNew(context.Background(), &api.SessionNewArgs{})
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "f1", Name: "mcp__t__big", Arguments: `{"bytes":10485760}`},
			{ID: "f2", Name: "mcp__quick__hang", Arguments: `{}`},
			{ID: "f3", Name: "mcp__t__fail", Arguments: `{}`},
			{ID: "f4", Name: "mcp__t__crash", Arguments: `{}`},
			{ID: "f5", Name: "mcp__t__echo", Arguments: `{"text":"after the crash"}`},
			{ID: "f6", Name: "mcp__many__t042", Arguments: `{}`},
			{ID: "f7", Name: "mcp__t__echo", Arguments: `not json`},
		}},
		openaitest.Reply{Chunks: []string{"Survived."}},
	)
	evs := runTurn(t, s, sess.Session.ID, "break things")
	if d, ok := evs[len(evs)-1].(Done); !ok || d.Result.Text != "Survived." {
		t.Fatalf("the turn's end: %#v", evs[len(evs)-1])
	}
	reqs := fake.WaitRequests(2, 10*time.Second)
	offered := map[string]bool{}
	for _, tool := range reqs[0].Parsed.Tools {
		offered[tool.Function.Name] = true
	}
	// 10 of ctxls's (update_plan and run_command among them), many's 109, bad's 9 and a broken
	// one, quick's 9, t's 9: many's last eighteen are cut, the broken one left out.
	if len(offered) != tool.MaxTools || !offered["mcp__many__t042"] || offered["mcp__many__t099"] || !offered["mcp__quick__hang"] || !offered["mcp__t__big"] || !offered["mcp__bad__echo"] || offered["mcp__bad__broken"] {
		t.Errorf("offered %d tools; many's t042 %v and t099 %v, t's hang %v, bad's echo %v and broken %v", len(offered),
			offered["mcp__many__t042"], offered["mcp__many__t099"], offered["mcp__quick__hang"], offered["mcp__bad__echo"], offered["mcp__bad__broken"])
	}
	res := reqs[1].ToolResults()
	if len(res["f1"]) > 300<<10 || !strings.Contains(res["f1"], "[truncated: the result is 10485760 bytes") {
		t.Errorf("10 MB result: %d bytes, ends %q", len(res["f1"]), res["f1"][max(0, len(res["f1"])-120):])
	}
	if !strings.Contains(res["f2"], `server "quick": hang did not answer within 1s`) {
		t.Errorf("hang: %q", res["f2"])
	}
	if res["f3"] != "error: the widget is broken" {
		t.Errorf("isError: %q", res["f3"])
	}
	if !strings.Contains(res["f4"], `server "t" stopped during the call`) {
		t.Errorf("crash: %q", res["f4"])
	}
	if !strings.Contains(res["f5"], `server "t" failed`) && res["f5"] != "echo: after the crash" {
		t.Errorf("after the crash: %q", res["f5"])
	}
	if res["f6"] != "t042 ran" || !strings.Contains(res["f7"], "not a JSON object") {
		t.Errorf("many: %q; bad arguments: %q", res["f6"], res["f7"])
	}
	if _, err := os.Stat(filepath.Join(dir, "quick.cancelled")); err != nil {
		t.Errorf("the timed-out call was not cancelled at the server: %v", err)
	}
	mu.Lock()
	all := strings.Join(notices, "\n")
	mu.Unlock()
	for _, want := range []string{`MCP server "gone" cannot be used`, `"/nonexistent/mcp-server" not found`, `tool "broken" is left out`, "18 MCP tools are left out"} {
		if !strings.Contains(all, want) {
			t.Errorf("notices lack %q:\n%s", want, all)
		}
	}
	// The crashed server starts again (after its back-off) for the next turn.
	fake.WaitRequests(3, 10*time.Second) // the title's, made after the turn
	time.Sleep(100 * time.Millisecond)
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "g1", Name: "mcp__t__echo", Arguments: `{"text":"back"}`}}},
		openaitest.Reply{Chunks: []string{"Back."}},
	)
	runTurn(t, s, sess.Session.ID, "again")
	if got := fake.LastStreamed().ToolResults()["g1"]; got != "echo: back" {
		t.Errorf("after the restart: %q", got)
	}
}

// TestMCPProgressAndCancel: a server's progress reaches the turn's events;
// cancelling the turn cancels the call at the server.
func TestMCPProgressAndCancel(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	s, dir := mcpService(t, fake, nil)
	s.Tools().SetAsker((&asked{}).ask)
	sess, _ := s.SessionNew(context.Background(), &api.SessionNewArgs{})
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "p1", Name: "mcp__t__slow", Arguments: `{"steps":3,"ms":100}`}}}, // 100 ms: the last progress well before the result, which an SDK may handle first
		openaitest.Reply{Chunks: []string{"Slow done."}},
	)
	var progress []string
	for _, ev := range runTurn(t, s, sess.Session.ID, "slowly") {
		if p, ok := ev.(ToolProgress); ok {
			progress = append(progress, p.Message)
		}
	}
	if strings.Join(progress, "|") != "step 1 (1/3)|step 2 (2/3)|step 3 (3/3)" {
		t.Errorf("progress: %q", progress)
	}
	fake.WaitRequests(3, 10*time.Second) // the title's, made after the turn

	fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "p2", Name: "mcp__t__slow", Arguments: `{"steps":100,"ms":200}`}}})
	tr, err := s.StartTurn(context.Background(), &api.ChatArgs{SessionID: sess.Session.ID, Message: "very slowly"}, TurnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var last Event
	for ev := range tr.Events() {
		if _, ok := ev.(ToolProgress); ok {
			tr.Cancel()
		}
		last = ev
	}
	if _, ok := last.(Cancelled); !ok {
		t.Errorf("the turn's end: %#v", last)
		if f, ok := last.(Failed); ok {
			t.Error(f.Err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(dir, "t.cancelled"))
		if err == nil && string(b) == "slow" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not see the call cancelled: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestMCPToolListChanged: a server that adds a tool says so
// (notifications/tools/list_changed); the next turn offers it.
func TestMCPToolListChanged(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	s, _ := mcpService(t, fake, nil)
	s.Tools().SetAsker((&asked{}).ask)
	sess, _ := s.SessionNew(context.Background(), &api.SessionNewArgs{})
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "g1", Name: "mcp__t__grow", Arguments: `{}`}}},
		openaitest.Reply{Chunks: []string{"Grown."}},
	)
	runTurn(t, s, sess.Session.ID, "grow")
	fake.WaitRequests(3, 10*time.Second) // the title's
	offers := func(r openaitest.Request, name string) bool {
		for _, tool := range r.Parsed.Tools {
			if tool.Function.Name == name {
				return true
			}
		}
		return false
	}
	if offers(fake.Requests()[0], "mcp__t__extra") {
		t.Fatal("extra offered before grow ran")
	}
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Next."}})
	deadline := time.Now().Add(5 * time.Second)
	for {
		runTurn(t, s, sess.Session.ID, "next")
		if offers(fake.LastStreamed(), "mcp__t__extra") {
			break
		}
		// The notification may reach the client a moment after the call's
		// answer; the turn after it offers the tool.
		if time.Now().After(deadline) {
			t.Fatal("the added tool is not offered")
		}
		fake.Enqueue(openaitest.Reply{Chunks: []string{"Next."}})
	}
}

// TestMCPMalformedTools (issue 37): a server whose tools/list answer lists
// entries no SDK reads as tools (a name that is not a string, null) still
// has its other tools offered and called; the user is told once how many
// were left out and why, and ctxls.mcp.list counts them.
func TestMCPMalformedTools(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	s, dir := mcpService(t, fake, nil)
	raw, _ := json.Marshal(map[string]map[string]any{"m": testmcp.Server(t, "m", dir, "-malformed")})
	if err := s.SetMCPServers(raw); err != nil {
		t.Fatal(err)
	}
	s.Tools().SetAllowReadOnly(true)
	s.Tools().SetAsker((&asked{}).ask)
	var notices []string
	var mu sync.Mutex
	s.Subscribe(func(ev Update) {
		if n, ok := ev.(Notice); ok {
			mu.Lock()
			notices = append(notices, n.Message)
			mu.Unlock()
		}
	})
	sess, _ := s.SessionNew(context.Background(), &api.SessionNewArgs{})
	for i := range 2 {
		fake.Enqueue(
			openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "m1", Name: "mcp__m__echo", Arguments: `{"text":"hi"}`}}},
			openaitest.Reply{Chunks: []string{"Done."}},
		)
		runTurn(t, s, sess.Session.ID, "use m")
		if got := fake.LastStreamed().ToolResults()["m1"]; got != "echo: hi" {
			t.Errorf("turn %d: the call of a tool kept: %q", i+1, got)
		}
	}
	mu.Lock()
	all := strings.Join(notices, "\n")
	mu.Unlock()
	want := `MCP server "m": 2 of the tools it lists are left out, malformed: entry `
	if strings.Count(all, want) != 1 || !strings.Contains(all, `("name": 42): its name is not a string; …`) {
		t.Errorf("notices (want %q once):\n%s", want, all)
	}
	res, err := s.McpList(context.Background(), &api.MCPListArgs{Tools: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, sv := range res.Servers {
		if sv.Name == "m" && (sv.Error != "" || len(sv.Tools) < 5 || sv.ToolsLeftOut != 2 || len(sv.LeftOutReasons) != 2 || !strings.HasSuffix(sv.LeftOutReasons[1], "it is null, not a tool")) {
			t.Errorf("ctxls.mcp.list: %+v", sv)
		}
	}
}
