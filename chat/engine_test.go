package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/sqlite"
)

type recorder struct {
	mu        sync.Mutex
	deltas    strings.Builder
	titles    []string
	activity  []string
	compacted []Compaction
}

func (r *recorder) Emit(ev Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch ev := ev.(type) {
	case TextDelta:
		r.deltas.WriteString(ev.Text)
	case Activity:
		r.activity = append(r.activity, ev.Message)
	case Compacted:
		r.compacted = append(r.compacted, ev.Compaction)
	case TitleChanged:
		r.titles = append(r.titles, ev.Session.Title)
	}
}

type buffers map[string]string

func (b buffers) TextByPath(p string) (string, bool) { t, ok := b[p]; return t, ok }

func newEngine(t *testing.T, bufs buffers) (*Engine, session.Store, *bytes.Buffer) {
	st, err := sqlite.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	e := &Engine{Store: st, Buffers: bufs, Log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		// A busy provider's retries follow each other in milliseconds, not
		// the 1, 2 and 4 s a daemon waits (the lsp tests keep those).
		RetryWait: 10 * time.Millisecond}
	t.Cleanup(func() { e.Close(); st.Close() })
	return e, st, &logs
}

func provider(t *testing.T, fake *openaitest.Server, window int) Resolved {
	r, err := Resolve(Provider{BaseURL: fake.URL, Model: "test-model", ContextWindow: window, MaxOutputTokens: 100}, func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-secret-do-not-log"
		}
		return ""
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestResolve(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	r, err := Resolve(Provider{}, env(map[string]string{"OPENAI_API_KEY": "k"}), nil)
	if err != nil || r.BaseURL != OpenAIBaseURL || r.Model != DefaultOpenAIModel || r.APIKey() != "k" || r.ContextWindow != DefaultContextWindow {
		t.Errorf("OpenAI default: %+v %v", r, err)
	}
	r, err = Resolve(Provider{}, env(nil), func() bool { return true })
	if err == nil || !strings.Contains(err.Error(), "no model is configured") {
		t.Errorf("Ollama without a model: %v", err)
	}
	r, err = Resolve(Provider{Model: "llama3.1"}, env(nil), func() bool { return true })
	if err != nil || r.BaseURL != OllamaBaseURL || r.APIKey() != "" {
		t.Errorf("Ollama: %+v %v", r, err)
	}
	if _, err := Resolve(Provider{}, env(nil), func() bool { return false }); err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("nothing configured: %v", err)
	}
	if _, err := Resolve(Provider{BaseURL: OpenAIBaseURL, APIKeyEnv: "MY_KEY"}, env(nil), nil); err == nil || !strings.Contains(err.Error(), "MY_KEY") {
		t.Errorf("missing key names the variable: %v", err)
	}
	r, _ = Resolve(Provider{BaseURL: "http://h/v1/", Model: "m"}, env(map[string]string{"OPENAI_API_KEY": "sk-x"}), nil)
	var b bytes.Buffer
	slog.New(slog.NewTextHandler(&b, nil)).Info("p", "provider", r)
	if strings.Contains(b.String(), "sk-x") || !strings.Contains(b.String(), "hasKey=true") || r.BaseURL != "http://h/v1" {
		t.Errorf("LogValue: %s", b.String())
	}
	if _, err := api.ParseProvider([]byte(`{"modle":"x"}`)); err == nil {
		t.Error("typo accepted")
	}
}

func TestFirstLineTitle(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Fix the login\nsecond": "Fix the login",
		"\n\n  spaced   out  ":  "spaced out",
		"This is a very long first line that goes on and on well past the sixty character limit": "This is a very long first line that goes on and on well…",
	} {
		if got := FirstLineTitle(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

func TestStallEndsTheTurn(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	fake.Enqueue(openaitest.Reply{Chunks: []string{"some ", "more"}, Fault: openaitest.FaultStall, FaultAfter: 1})
	e, st, _ := newEngine(t, nil)
	e.Stall = 300 * time.Millisecond
	s, _ := st.Create(context.Background(), "")
	rec := &recorder{}
	res, err := e.Run(context.Background(), TurnSpec{SessionID: s.ID, Message: "q", Provider: provider(t, fake, 8000)}, rec)
	if err == nil || !strings.Contains(err.Error(), "sent nothing for 300ms") || res.Text != "some " || res.FinishReason != FinishError {
		t.Fatalf("stall: %+v %v", res, err)
	}
	msgs, _ := st.Messages(context.Background(), s.ID)
	// The failed answer keeps what arrived and says why it ended.
	if msgs[1].Content != "some \n\nError: "+err.Error() || msgs[1].Status != session.StatusError {
		t.Errorf("stored %+v", msgs[1])
	}
}

func TestHugeAnswerAndDeltasEqualText(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	fake.Enqueue(openaitest.HugeReply(2 << 20))
	e, st, _ := newEngine(t, nil)
	s, _ := st.Create(context.Background(), "")
	rec := &recorder{}
	res, err := e.Run(context.Background(), TurnSpec{SessionID: s.ID, Message: "q", Provider: provider(t, fake, 8000)}, rec)
	if err != nil || len(res.Text) != 2<<20 || rec.deltas.String() != res.Text {
		t.Fatalf("huge: %d bytes, deltas %d, %v", len(res.Text), rec.deltas.Len(), err)
	}
}

func TestHistoryDropsOldestAndMarksChanges(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	root := t.TempDir()
	file := filepath.Join(root, "a.go")
	os.WriteFile(file, []byte("package a\n"), 0o644)
	bufs := buffers{}
	e, st, logs := newEngine(t, bufs)
	ctx := context.Background()
	s, _ := st.Create(ctx, "named")
	st.UpdateContext(ctx, s.ID, "files", []string{file}, "", session.AddedByUser, nil)
	// A tiny window: 900 tokens after the output reserve, the system
	// prompt (about 570) and room for one earlier turn. (It was 500, under
	// the system prompt alone: such an input is now refused, see
	// TestOverWindowInput.)
	p := provider(t, fake, 1000)
	long := strings.Repeat("word ", 200)
	for i := range 4 {
		fake.Enqueue(openaitest.Reply{Chunks: []string{long}})
		if i == 2 {
			bufs[file] = "package a\n// edited\n"
		}
		if _, err := e.Run(ctx, TurnSpec{SessionID: s.ID, Message: "question " + string(rune('A'+i)), Roots: []string{root}, Provider: p}, &recorder{}); err != nil {
			t.Fatal(err)
		}
	}
	reqs := fake.Requests()
	last := reqs[len(reqs)-1].Parsed.Messages
	if reqs[len(reqs)-1].Question() != "question D" {
		t.Errorf("the new message must always be sent")
	}
	if len(last) >= 8 {
		t.Errorf("history was not trimmed: %d messages", len(last))
	}
	if len(last) > 2 && last[1].Content == "question A" {
		t.Errorf("the oldest message should have been dropped first")
	}
	if !strings.Contains(reqs[2].TurnContext(), "// edited") {
		t.Errorf("turn 3 should send the changed file's text:\n%s", reqs[2].TurnContext())
	}
	// Turn 4: nothing changed. The file's text is repeated only when the
	// turn that showed it (turn 3) was left out for the budget.
	turn3Kept := false
	for _, m := range last[:len(last)-1] {
		if strings.HasSuffix(m.Content, "question C") {
			turn3Kept = true
		}
	}
	if repeated := strings.Contains(reqs[3].TurnContext(), "// edited"); repeated == turn3Kept || !strings.Contains(reqs[3].ModelContext(), "// edited") {
		t.Errorf("turn 4 (turn 3 kept: %v): the file's text repeated: %v\n%s", turn3Kept, repeated, reqs[3].TurnContext())
	}
	if strings.Contains(logs.String(), "sk-secret-do-not-log") {
		t.Error("the API key reached the log")
	}
	files, _ := filepath.Glob(filepath.Join(st.DataDir(), "*"))
	more, _ := filepath.Glob(filepath.Join(st.DataDir(), "sessions", "*", "*"))
	for _, f := range append(files, more...) {
		if data, err := os.ReadFile(f); err == nil && bytes.Contains(data, []byte("sk-secret-do-not-log")) {
			t.Errorf("the API key was stored in %s", f)
		}
	}
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer sk-secret-do-not-log" {
		t.Errorf("the key goes to the provider: %q", got)
	}
}

// TestCheckpointDuringAPause: text streamed just before the provider pauses
// is saved within a checkpoint interval although no chunk follows, so a
// daemon killed during the pause keeps it (the crash test's guarantee).
// Saving only when a chunk arrived left it unsaved until the pause ended.
func TestCheckpointDuringAPause(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	chunks := []string{"one ", "two ", "three ", "four ", "five "}
	// Five quick chunks, then nothing until the client goes away.
	fake.Enqueue(openaitest.Reply{Chunks: chunks, Delay: 5 * time.Millisecond, Fault: openaitest.FaultStall, FaultAfter: len(chunks)})
	e, st, _ := newEngine(t, nil)
	e.Checkpoint = 200 * time.Millisecond
	s, _ := st.Create(context.Background(), "")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	rec := &recorder{}
	go func() {
		_, err := e.Run(ctx, TurnSpec{SessionID: s.ID, Message: "q", Provider: provider(t, fake, 8000)}, rec)
		done <- err
	}()
	want := strings.Join(chunks, "")
	waitDeltas(t, rec, want)
	// Within the interval plus generous slack for a loaded machine, the
	// pause notwithstanding, the whole text is stored, still "streaming".
	stored := waitStored(t, st, s.ID, want, e.Checkpoint+2*time.Second)
	if stored.Content != want || stored.Status != session.StatusStreaming {
		t.Errorf("during the pause the answer is stored as %q (%s), want %q (streaming)", stored.Content, stored.Status, want)
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("the cancelled turn returned no error")
	}
	msgs, _ := st.Messages(context.Background(), s.ID)
	if msgs[1].Content != want || msgs[1].Status != session.StatusCancelled {
		t.Errorf("after the cancel: %+v", msgs[1])
	}
}

// waitDeltas waits up to 5 s until rec has received exactly want.
func waitDeltas(t *testing.T, rec *recorder, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		rec.mu.Lock()
		got := rec.deltas.String()
		rec.mu.Unlock()
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("deltas %q", got)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitStored polls the session's answer (its second message) for up to
// within, until it holds want, and returns the last one seen.
func waitStored(t *testing.T, st session.Store, id, want string, within time.Duration) session.Message {
	t.Helper()
	var stored session.Message
	for start := time.Now(); time.Since(start) < within; time.Sleep(10 * time.Millisecond) {
		msgs, err := st.Messages(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 2 {
			stored = msgs[1]
			if stored.Content == want {
				break
			}
		}
	}
	return stored
}

// stuckEditor's Delta blocks after the first n deltas until released, like
// an editor that stops reading its pipe.
type stuckEditor struct {
	recorder
	n       int
	release chan struct{}
}

func (s *stuckEditor) Emit(ev Event) {
	s.recorder.Emit(ev)
	if _, ok := ev.(TextDelta); !ok {
		return
	}
	s.mu.Lock()
	s.n--
	stuck := s.n < 0
	s.mu.Unlock()
	if stuck {
		<-s.release
	}
}

// TestCheckpointWhileTheEditorIsStuck: the answer is saved on time even
// when sending deltas to the editor blocks (a full pipe), so a crash then
// does not lose text the editor already showed.
func TestCheckpointWhileTheEditorIsStuck(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	chunks := []string{"one ", "two ", "three ", "four ", "five "}
	fake.Enqueue(openaitest.Reply{Chunks: chunks, Delay: 5 * time.Millisecond})
	e, st, _ := newEngine(t, nil)
	e.Checkpoint = 200 * time.Millisecond
	s, _ := st.Create(context.Background(), "")
	ed := &stuckEditor{n: 3, release: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		_, err := e.Run(context.Background(), TurnSpec{SessionID: s.ID, Message: "q", Provider: provider(t, fake, 8000)}, ed)
		done <- err
	}()
	// The fourth delta is stuck; the text up to it is the engine's.
	want := "one two three four "
	waitDeltas(t, &ed.recorder, want)
	stored := waitStored(t, st, s.ID, want, e.Checkpoint+2*time.Second)
	if stored.Content != want || stored.Status != session.StatusStreaming {
		t.Errorf("while the editor is stuck the answer is stored as %q (%s), want %q (streaming)", stored.Content, stored.Status, want)
	}
	close(ed.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	msgs, _ := st.Messages(context.Background(), s.ID)
	if msgs[1].Content != strings.Join(chunks, "") || msgs[1].Status != session.StatusComplete {
		t.Errorf("at the end: %+v", msgs[1])
	}
}

// TestModelViewForgetAndIdle: a session's model view is dropped when its
// session is deleted (Abort) or idle for an hour.
func TestModelViewForgetAndIdle(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	e := &Engine{now: func() time.Time { return now }}
	tk := prompts.TokenizerFor("gpt-4o")
	all := func(int64) bool { return true }
	show := func(id string, text string) {
		in := prompts.Input{Relevant: []prompts.File{{Path: "/w/x.go", Content: text}}}
		e.viewFor(id).record(1, prompts.WithContext("block", "q"), in, false, all, tk)
	}
	shown := func(id string, text string) bool {
		in := prompts.Input{Relevant: []prompts.File{{Path: "/w/x.go", Content: text}}}
		e.viewFor(id).state().plan(&in, all, tk)
		return len(in.Shown) == 1
	}
	show("a", "v1")
	if !shown("a", "v1") || shown("a", "v2") {
		t.Error("same text shown, changed text not")
	}
	e.Abort("a") // deleted: forgotten
	if shown("a", "v1") {
		t.Error("a deleted session's files are new again")
	}
	show("b", "v1")
	now = now.Add(viewIdle + time.Minute)
	if e.viewFor("c"); len(e.views) != 1 {
		t.Errorf("idle views kept: %d", len(e.views))
	}
	if shown("b", "v1") {
		t.Error("an idle session's view survived")
	}
	var preview *modelView
	if preview.state().blocks != nil {
		t.Error("no view, nothing shown")
	}
}

// toolDefs are tools as a toolbox offers them (the real ones are package
// tool's, which imports this package): a schema with required fields and
// one without.
var toolDefs = []openai.Tool{
	{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name:        "set_relevant_context",
		Description: "Set one named set of the session's relevant context.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"setName":{"type":"string"},"items":{"type":"array","items":{"type":"string"}}},"required":["setName","items"]}`),
	}},
	{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name:        "get_relevant_context",
		Description: "Read the session's relevant context.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"setName":{"type":"string"}}}`),
	}},
}

// contextTools is a toolbox offering toolDefs; get_relevant_context reads
// the session's context from the store.
type contextTools struct{ st session.Store }

func (c contextTools) Tools(context.Context, *ToolTurn) []openai.Tool { return toolDefs }
func (c contextTools) Describe(name string) (string, string, ToolInfo, bool) {
	return "", name, ToolInfo{ReadOnly: true}, name == "get_relevant_context" || name == "set_relevant_context"
}
func (c contextTools) Call(ctx context.Context, tt *ToolTurn, call ToolCall) ToolResult {
	sets, err := c.st.Context(ctx, tt.SessionID)
	if err != nil {
		return ToolResult{Output: "error: " + err.Error(), Failed: true}
	}
	if len(sets) == 0 {
		return ToolResult{Output: "No context stored for this session"}
	}
	b, _ := json.Marshal(sets)
	return ToolResult{Output: string(b)}
}
func (contextTools) Stored(_, args string) string { return args }
func (contextTools) Edited() []string             { return nil }
