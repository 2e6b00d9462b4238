package service

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/internal/benchutil"
	"github.com/ctxls/ctxls/internal/testmcp"
	"github.com/ctxls/ctxls/session/sqlite"
	"github.com/ctxls/ctxls/tool"
)

// discard takes a call's events.
type discard struct{}

func (discard) Emit(chat.Event) {}

// BenchmarkMCPToolCallOverhead measures a tool call through ctxls (the
// toolbox: the session's standing permission read from the store, the
// manager's call with its timeout and progress token, the result made
// text) against the same call made directly with the Go SDK's client on
// its own process of the same server, alternately. Metrics: ctxls-ms,
// direct-ms (medians) and overhead-ms (the difference; the target is 2 ms).
func BenchmarkMCPToolCallOverhead(b *testing.B) {
	dir := b.TempDir()
	st, err := sqlite.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	s := New(st, Config{Getenv: func(string) string { return "" }, Probe: func() bool { return false }})
	defer s.Close()
	raw, _ := json.Marshal(map[string]any{"t": testmcp.Server(b, "t", dir)})
	if err := s.SetMCPServers(raw); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	sess, err := s.SessionNew(ctx, &api.SessionNewArgs{})
	if err != nil {
		b.Fatal(err)
	}
	// The user answers "always in this session" once: the first call
	// stores it (under the server's identity), the others find it.
	s.Tools().SetAsker(func(context.Context, tool.PermissionRequest) (tool.Decision, error) { return tool.AllowAlways, nil })
	box := s.box.Turn(sess.Session.ID, true)
	tt := &chat.ToolTurn{SessionID: sess.Session.ID, Events: discard{}}
	if len(box.Tools(ctx, tt)) == 0 {
		b.Fatal("no tools")
	}
	direct, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx,
		&sdk.CommandTransport{Command: exec.Command(testmcp.Binary(b), "-name", "direct")}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer direct.Close()
	call := chat.ToolCall{ID: "c", Name: "mcp__t__echo", Arguments: `{"text":"hello"}`, Server: "t", Tool: "echo"}
	var viaCtxls, viaSDK []time.Duration
	for b.Loop() {
		begun := time.Now()
		got := box.Call(ctx, tt, call)
		viaCtxls = append(viaCtxls, time.Since(begun))
		if got.Failed || got.Declined || got.Output != "echo: hello" {
			b.Fatalf("through ctxls: %+v", got)
		}
		begun = time.Now()
		res, err := direct.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}})
		viaSDK = append(viaSDK, time.Since(begun))
		if err != nil || res.IsError {
			b.Fatalf("direct: %v", err)
		}
	}
	c, d := benchutil.Percentile(viaCtxls, 50), benchutil.Percentile(viaSDK, 50)
	b.ReportMetric(benchutil.MS(c), "ctxls-ms")
	b.ReportMetric(benchutil.MS(d), "direct-ms")
	b.ReportMetric(benchutil.MS(c-d), "overhead-ms")
	b.ReportMetric(0, "ns/op")
}
