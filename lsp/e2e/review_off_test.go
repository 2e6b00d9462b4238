package e2e_test

import (
	"slices"
	"testing"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
)

// TestReviewOffOffersOnlyReading: in the review mode off ("chat only") the
// model is offered only tools that read: ctxls's read tools and the MCP
// tools their server marks readOnlyHint (echo), and update_plan, which
// changes only the session's plan, not those that may change
// things (add, write_file, set_relevant_context, the edit tools).
func TestReviewOffOffersOnlyReading(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	_, rootURI := workspace(t)
	s := mcpDaemon(t, fake, t.TempDir(), rootURI, t.TempDir(), &permissionAnswers{})
	offered := func() []string {
		var names []string
		for _, tl := range fake.LastStreamed().Parsed.Tools {
			names = append(names, tl.Function.Name)
		}
		return names
	}
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Ask."}})
	var res api.ChatResult
	s.MustCommand(api.Chat, map[string]any{"message": "ask"}, &res)
	if got := offered(); !slices.Contains(got, "mcp__t__add") || !slices.Contains(got, "write_file") {
		t.Fatalf("the ask mode offers %v", got)
	}
	s.MustCommand(api.SetReviewMode, map[string]any{"sessionId": res.SessionID, "mode": "off"}, nil)
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Off."}})
	s.MustCommand(api.Chat, map[string]any{"sessionId": res.SessionID, "message": "off"}, nil)
	got := offered()
	for _, want := range []string{"get_relevant_context", "read_file", "grep", "mcp__t__echo", "update_plan"} {
		if !slices.Contains(got, want) {
			t.Errorf("off: %s not offered (%v)", want, got)
		}
	}
	for _, not := range []string{"mcp__t__add", "mcp__t__picture", "write_file", "set_relevant_context", "edit_file", "create_file", "run_command"} {
		if slices.Contains(got, not) {
			t.Errorf("off: %s offered (%v)", not, got)
		}
	}
}
