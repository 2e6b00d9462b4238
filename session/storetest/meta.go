package storetest

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/session"
)

func testResolveID(t *testing.T, e *Env) {
	s := e.S
	ctx := context.Background()
	a, _ := s.Create(ctx, "Alpha")
	b, _ := s.Create(ctx, "Beta")
	// Give the two sessions ids that share their first six characters.
	for id, to := range map[string]string{a.ID: "abcdefaaaaaaaaaaaaaaaaaaaa", b.ID: "abcdefbbbbbbbbbbbbbbbbbbbb"} {
		e.SetSessionID(t, id, to)
	}
	for _, tc := range []struct{ in, want string }{
		{"abcdefa", "abcdefaaaaaaaaaaaaaaaaaaaa"},
		{"ABCDEFB", "abcdefbbbbbbbbbbbbbbbbbbbb"},
		{" abcdefbbbbbbbbbbbbbbbbbbbb ", "abcdefbbbbbbbbbbbbbbbbbbbb"},
	} {
		if got, err := s.ResolveID(ctx, tc.in); err != nil || got != tc.want {
			t.Errorf("ResolveID(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	_, err := s.ResolveID(ctx, "abcd")
	var amb *session.AmbiguousError
	if !errors.As(err, &amb) || !errors.Is(err, session.ErrInvalid) || len(amb.Candidates) != 2 || amb.More ||
		!strings.Contains(err.Error(), "abcdefaaaaaaaaaaaaaaaaaaaa  Alpha") || !strings.Contains(err.Error(), "abcdefbbbbbbbbbbbbbbbbbbbb  Beta") {
		t.Errorf("ambiguous: %v", err)
	}
	for _, in := range []string{"zzzz", "abcd%", "abc_ef", `abcd\`} {
		if _, err := s.ResolveID(ctx, in); !errors.Is(err, session.ErrNotFound) || !strings.Contains(err.Error(), "no session id starts with it") {
			t.Errorf("ResolveID(%q): %v", in, err)
		}
	}
	if _, err := s.ResolveID(ctx, "abc"); !errors.Is(err, session.ErrInvalid) || !strings.Contains(err.Error(), "at least its first 4 characters") {
		t.Errorf("short prefix: %v", err)
	}
	// Many matches: a few are listed, and the error says there are more.
	for i := range 7 {
		c, _ := s.Create(ctx, "")
		e.SetSessionID(t, c.ID, "qqqq"+strings.Repeat(string(rune('a'+i)), 22))
	}
	if _, err := s.ResolveID(ctx, "qqqq"); !errors.As(err, &amb) || len(amb.Candidates) != 5 || !amb.More || !strings.Contains(err.Error(), "…and more") {
		t.Errorf("many: %v", err)
	}
}

func testMetaFieldsAreWrittenOneByOne(t *testing.T, s Store) {
	ctx := context.Background()
	ss, _ := s.Create(ctx, "")
	if _, err := s.SetEnvHint(ctx, ss.ID, "vim 9; workspace /w"); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.MarkTitleRequested(ctx, ss.ID); !ok || err != nil {
		t.Fatalf("first mark: %v %v", ok, err)
	}
	if ok, err := s.MarkTitleRequested(ctx, ss.ID); ok || err != nil {
		t.Fatalf("second mark must report it was done: %v %v", ok, err)
	}
	got, err := s.SetModel(ctx, ss.ID, " gpt-4o ")
	if err != nil || !reflect.DeepEqual(got.Meta, session.Meta{EnvHint: "vim 9; workspace /w", TitleRequested: true, Model: "gpt-4o"}) {
		t.Fatalf("after SetModel: %+v %v", got.Meta, err)
	}
	if err := s.ClearTitleRequested(ctx, ss.ID); err != nil {
		t.Fatal(err)
	}
	got, _ = s.SetModel(ctx, ss.ID, "")
	if !reflect.DeepEqual(got.Meta, session.Meta{EnvHint: "vim 9; workspace /w"}) {
		t.Errorf("after clearing both: %+v", got.Meta)
	}
	// Standing tool decisions: set, changed, forgotten; the other meta
	// fields stay.
	for _, step := range []struct{ tool, decision string }{
		{"mcp__fs__read", session.ToolAllow}, {"mcp__fs__write", session.ToolDeny},
		{"mcp__fs__write", session.ToolAllow}, {"mcp__fs__read", ""},
	} {
		if err := s.SetToolPermission(ctx, ss.ID, step.tool, step.decision); err != nil {
			t.Fatalf("SetToolPermission(%s, %q): %v", step.tool, step.decision, err)
		}
	}
	got, _ = s.Get(ctx, ss.ID)
	if !reflect.DeepEqual(got.Meta, session.Meta{EnvHint: "vim 9; workspace /w", Tools: map[string]string{"mcp__fs__write": session.ToolAllow}}) {
		t.Errorf("after tool decisions: %+v", got.Meta)
	}
	if got, err := s.SetReviewMode(ctx, ss.ID, session.ReviewAuto); err != nil || got.Meta.ReviewMode != session.ReviewAuto || got.Meta.EnvHint == "" {
		t.Errorf("SetReviewMode: %+v %v", got, err)
	}
	if _, err := s.SetReviewMode(ctx, ss.ID, "sometimes"); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("a bad review mode: %v", err)
	}
	if _, err := s.SetReviewMode(ctx, "nope", session.ReviewOff); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("review mode, unknown session: %v", err)
	}
	s.SetReviewMode(ctx, ss.ID, session.ReviewAsk)
	if err := s.SetToolPermission(ctx, ss.ID, "x", "maybe"); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("a bad decision: %v", err)
	}
	if err := s.SetToolPermission(ctx, "nope", "x", session.ToolAllow); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("tool decision, unknown session: %v", err)
	}
	for _, bad := range []string{"a b", "x\x01", strings.Repeat("m", session.MaxModel+1), "\xff"} {
		if _, err := s.SetModel(ctx, ss.ID, bad); !errors.Is(err, session.ErrInvalid) {
			t.Errorf("SetModel(%q): %v", bad, err)
		}
	}
	if _, err := s.SetModel(ctx, "nope", "m"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
	if _, err := s.MarkTitleRequested(ctx, "nope"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("mark, unknown session: %v", err)
	}
	if err := s.ClearTitleRequested(ctx, "nope"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("clear, unknown session: %v", err)
	}
}

func testFirstExchangeAndMessageModel(t *testing.T, s Store) {
	ctx := context.Background()
	ss, _ := s.Create(ctx, "")
	if first, answer, err := s.FirstExchange(ctx, ss.ID); first != "" || answer != "" || err != nil {
		t.Errorf("empty session: %q %q %v", first, answer, err)
	}
	for _, m := range []*session.Message{
		{Role: session.RoleUser, Content: "first question"},
		{Role: session.RoleAssistant, Content: "provider down", Status: session.StatusError, Model: "m1"},
		{Role: session.RoleUser, Content: "second question"},
		{Role: session.RoleAssistant, Content: "let me look", ToolCalls: []byte(`[{"id":"1"}]`), Model: "m1"},
		{Role: session.RoleTool, Content: "file text", ToolCallID: "1"},
		{Role: session.RoleAssistant, Content: "the answer", Model: "m2"},
	} {
		m.SessionID = ss.ID
		if err := s.AppendMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	first, answer, err := s.FirstExchange(ctx, ss.ID)
	if first != "first question" || answer != "the answer" || err != nil {
		t.Errorf("FirstExchange: %q %q %v", first, answer, err)
	}
	msgs, _ := s.Messages(ctx, ss.ID)
	if msgs[0].Model != "" || msgs[5].Model != "m2" {
		t.Errorf("models: %q %q", msgs[0].Model, msgs[5].Model)
	}
	if _, _, err := s.FirstExchange(ctx, "nope"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
}

func testWorkspaceFilter(t *testing.T, s Store) {
	ctx := context.Background()
	a, _ := s.Create(ctx, "In alpha")
	b, _ := s.Create(ctx, "In beta")
	c, _ := s.Create(ctx, "Nowhere")
	if err := s.SetWorkspace(ctx, a.ID, "/work/alpha/"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetWorkspace(ctx, b.ID, "/work/beta"); err != nil {
		t.Fatal(err)
	}
	before, _ := s.Get(ctx, a.ID)
	if err := s.SetWorkspace(ctx, a.ID, "/work/alpha"); err != nil { // unchanged once cleaned
		t.Fatal(err)
	}
	if after, _ := s.Get(ctx, a.ID); !after.UpdatedAt.Equal(before.UpdatedAt) || after.Meta.Workspace != "/work/alpha" {
		t.Errorf("workspace %q, updated %v then %v", after.Meta.Workspace, before.UpdatedAt, after.UpdatedAt)
	}
	list, _, err := s.List(ctx, session.ListOptions{Workspace: "/work/alpha"})
	if err != nil || len(list) != 1 || list[0].ID != a.ID {
		t.Errorf("alpha: %v %v", list, err)
	}
	all, _, _ := s.List(ctx, session.ListOptions{})
	if len(all) != 3 {
		t.Errorf("unfiltered list has %d sessions", len(all))
	}
	for _, bad := range []string{"relative/dir", "/a\x00b"} {
		if err := s.SetWorkspace(ctx, c.ID, bad); !errors.Is(err, session.ErrInvalid) {
			t.Errorf("SetWorkspace(%q): %v", bad, err)
		}
	}
	if err := s.SetWorkspace(ctx, "nosuchsession", "/x"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
	if err := s.SetWorkspace(ctx, c.ID, ""); err != nil {
		t.Errorf("empty: %v", err)
	}
}

func testRemoveMode(t *testing.T, s Store) {
	ctx := context.Background()
	a, _ := s.Create(ctx, "Ctx")
	if _, err := s.UpdateContext(ctx, a.ID, session.SetFiles, []string{"x.go", "file:///w/y.go", "/w/z.go"}, session.ModeReplace, session.AddedByUser, []string{"/w"}); err != nil {
		t.Fatal(err)
	}
	ch, err := s.UpdateContext(ctx, a.ID, session.SetFiles, []string{"y.go", "/w/none.go"}, session.ModeRemove, session.AddedByUser, []string{"/w"})
	if err != nil || strings.Join(ch.Items, ",") != "/w/x.go,/w/z.go" || strings.Join(ch.Removed, ",") != "/w/y.go" {
		t.Errorf("remove: %+v %v", ch, err)
	}
	if _, err := s.UpdateContext(ctx, a.ID, session.SetFiles, []string{"rel.go"}, session.ModeMerge, session.AddedByUser, nil); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("relative with no roots: %v", err)
	}
}
