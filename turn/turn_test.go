package turn_test

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/sqlite"
	"github.com/ctxls/ctxls/turn"
)

type noBuffers struct{}

func (noBuffers) TextByPath(string) (string, bool) { return "", false }

func newService(t *testing.T) (*turn.Runner, session.Store) {
	t.Helper()
	st, err := sqlite.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &chat.Engine{Store: st, Buffers: noBuffers{}, Log: slog.New(slog.DiscardHandler)}
	t.Cleanup(func() { e.Close(); st.Close() })
	return &turn.Runner{Engine: e, Log: e.Log}, st
}

// resolved is a provider of the fake server, resolved as the service
// resolves it.
func resolved(t *testing.T, url string) chat.Resolved {
	t.Helper()
	r, err := chat.Resolve(chat.Provider{BaseURL: url, Model: "test-model"}, func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func collect(t *testing.T, tr *turn.Turn) []turn.Event {
	t.Helper()
	var out []turn.Event
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-tr.Events():
			if !ok {
				return out
			}
			out = append(out, ev)
		case <-timeout:
			t.Fatal("the stream did not end")
		}
	}
}

func finals(evs []turn.Event) int {
	n := 0
	for _, ev := range evs {
		switch ev.(type) {
		case turn.Done, turn.Cancelled, turn.Failed:
			n++
		}
	}
	return n
}

func TestStreamEndsWithOneFinalEvent(t *testing.T) {
	svc, st := newService(t)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Fix the deploy"}}))
	prov := resolved(t, fake.URL)
	// The model's title comes after the stream ended: to Observe alone.
	late := make(chan *session.Session, 4)
	observe := func(_ string, ev turn.Event) (turn.Event, bool) {
		if tc, ok := ev.(turn.TitleChanged); ok && tc.Session.TitleSource == session.TitleModel {
			late <- tc.Session
		}
		return ev, true
	}
	fake.Enqueue(openaitest.Reply{
		Chunks:    []string{"Looking."},
		ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "get_relevant_context", Arguments: `{}`}},
	}, openaitest.Reply{Chunks: []string{"All ", "clear."}})
	tr, err := svc.Start(context.Background(), turn.Request{TurnSpec: chat.TurnSpec{Message: "why did the deploy fail", Provider: prov, Roots: []string{"/w"}, Env: "acptest"}, Observe: observe})
	if err != nil {
		t.Fatal(err)
	}
	if !tr.Created || tr.SessionID == "" {
		t.Fatalf("a new session: %+v", tr)
	}
	evs := collect(t, tr)
	var kinds []string
	var text strings.Builder
	for _, ev := range evs {
		switch ev := ev.(type) {
		case turn.TextDelta:
			text.WriteString(ev.Text)
			kinds = append(kinds, "delta")
		case turn.TitleChanged:
			kinds = append(kinds, "title")
		case turn.ToolStarted:
			kinds = append(kinds, "tool:"+ev.Call.Name)
		case turn.ToolFinished:
			kinds = append(kinds, "done:"+ev.Call.ID)
		case turn.TokenUsage:
			kinds = append(kinds, "usage")
		case turn.Done:
			kinds = append(kinds, "Done")
		default:
			kinds = append(kinds, "other")
		}
	}
	got := strings.Join(kinds, " ")
	// The call's id is ctxls's own (ANSWER:INDEX), not the provider's c1.
	if !regexp.MustCompile(`^title delta tool:get_relevant_context done:[0-9]+:0 delta delta usage Done$`).MatchString(got) || finals(evs) != 1 {
		t.Errorf("events: %s", got)
	}
	if text.String() != "Looking.All clear." {
		t.Errorf("text %q", text.String())
	}
	select {
	case s := <-late:
		if s.Title != "Fix the deploy" || s.TitleSource != session.TitleModel {
			t.Errorf("late title %+v", s)
		}
	case <-time.After(10 * time.Second):
		t.Error("the model's title never reached the subscriber")
	}
	s, _ := st.Get(context.Background(), tr.SessionID)
	if s.Meta.Workspace != "/w" || s.Meta.EnvHint != "acptest" {
		t.Errorf("recorded %+v", s.Meta)
	}
}

func TestCancelAndBusy(t *testing.T) {
	svc, st := newService(t)
	fake := openaitest.New(t)
	prov := resolved(t, fake.URL)
	sess, _ := st.Create(context.Background(), "busy")
	fake.Enqueue(openaitest.Reply{Chunks: []string{"a", "b", "c", "d", "e"}, Delay: 300 * time.Millisecond})
	first, err := svc.Start(context.Background(), turn.Request{TurnSpec: chat.TurnSpec{SessionID: sess.ID, Message: "one", Provider: prov}})
	if err != nil {
		t.Fatal(err)
	}
	<-first.Events() // the instant title: the turn is running
	second, err := svc.Start(context.Background(), turn.Request{TurnSpec: chat.TurnSpec{SessionID: sess.ID, Message: "two", Provider: prov}})
	if err != nil {
		t.Fatal(err)
	}
	evs := collect(t, second)
	if f, ok := evs[len(evs)-1].(turn.Failed); !ok || !errors.Is(f.Err, chat.ErrBusy) || f.Result != nil || finals(evs) != 1 {
		t.Errorf("second turn: %#v", evs)
	}
	first.Cancel()
	evs = collect(t, first)
	if c, ok := evs[len(evs)-1].(turn.Cancelled); !ok || c.Result == nil || finals(evs) != 1 {
		t.Errorf("cancelled turn: %#v", evs)
	}
}

func TestErrorsBeforeTheTurn(t *testing.T) {
	svc, st := newService(t)
	ctx := context.Background()
	if _, err := svc.Start(ctx, turn.Request{TurnSpec: chat.TurnSpec{Message: "  "}}); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("empty message: %v", err)
	}
	if _, err := svc.Start(ctx, turn.Request{TurnSpec: chat.TurnSpec{Message: "x", SessionID: "nope"}}); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
	if list, _, _ := st.List(ctx, session.ListOptions{}); len(list) != 0 {
		t.Errorf("a failed start stored sessions: %+v", list)
	}
}
