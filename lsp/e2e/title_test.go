package e2e_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/session"
)

// startChatBinary is startChat with the built binary over real stdio.
// titleRequests are the requests that asked for a title (the only ones
// that do not stream).
func titleRequests(reqs []openaitest.Request) []openaitest.Request {
	var out []openaitest.Request
	for _, r := range reqs {
		if !r.Parsed.Stream {
			out = append(out, r)
		}
	}
	return out
}

// requestText is every message of a request, one after the other.
func requestText(r openaitest.Request) string {
	var b strings.Builder
	for _, m := range r.Parsed.Messages {
		b.WriteString(m.Content + "\n")
	}
	return b.String()
}

// waitTitle waits for a ctxls/sessionUpdated carrying title.
func waitTitle(t *testing.T, s *lsptest.Server, title, source string) {
	t.Helper()
	s.WaitFor("sessionUpdated "+title, func(m *lsptest.Message) bool {
		return m.Method == api.SessionUpdated && strings.Contains(string(m.Params), `"title":"`+title+`"`) &&
			strings.Contains(string(m.Params), `"titleSource":"`+source+`"`)
	})
}

func chatTurn(t *testing.T, s *lsptest.Server, arg map[string]any) api.ChatResult {
	t.Helper()
	var res api.ChatResult
	s.MustCommand(api.Chat, arg, &res)
	return res
}

// TestModelTitleAskedOnce: the title request carries the first user message
// and the first complete answer, and is made once per session: not again
// after later turns, not even when it failed and the title stayed "auto".
func TestModelTitleAskedOnce(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t)
	s := startBinaryChat(t, fake)
	first := "How do I undo the canary deploy?\nIt broke checkout."
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Roll the canary ", "back first."}}, openaitest.Reply{Chunks: []string{"Canary rollback plan"}})
	res := chatTurn(t, s, map[string]any{"message": first})
	waitTitle(t, s, "Canary rollback plan", "model")
	tr := titleRequests(fake.WaitRequests(2, 5*time.Second))
	if len(tr) != 1 {
		t.Fatalf("%d title requests, want 1", len(tr))
	}
	text := requestText(tr[0])
	if !strings.Contains(text, first) || !strings.Contains(text, "Roll the canary back first.") || tr[0].Parsed.Model != "test-model" {
		t.Errorf("title request (model %q) lacks the first message or answer:\n%s", tr[0].Parsed.Model, text)
	}
	fake.Enqueue(openaitest.Reply{Chunks: []string{"second"}})
	chatTurn(t, s, map[string]any{"sessionId": res.SessionID, "message": "and the database?"})

	// A title request that fails is not repeated by later turns.
	var other api.SessionResult
	s.MustCommand(api.SessionNew, map[string]any{}, &other)
	fake.Enqueue(openaitest.Reply{Chunks: []string{"answer one"}}, openaitest.Reply{Status: 400, ErrorMessage: "no titles today"})
	chatTurn(t, s, map[string]any{"message": "Tune the GC settings"})
	fake.WaitRequests(5, 5*time.Second)
	// The fifth request was the title's: the session was marked as asked
	// before it went out (meta.titleRequested is the store's, not on the
	// wire); the requests counted below show it is not asked again.
	var show api.ShowResult
	s.MustCommand(api.SessionShow, map[string]any{}, &show)
	if show.Session.Title != "Tune the GC settings" || show.Session.TitleSource != api.TitleAuto {
		t.Fatalf("after a failed title request: %+v", show.Session)
	}
	fake.Enqueue(openaitest.Reply{Chunks: []string{"answer two"}}, openaitest.Reply{Chunks: []string{"answer three"}})
	chatTurn(t, s, map[string]any{"message": "more"})
	chatTurn(t, s, map[string]any{"message": "and more"})
	time.Sleep(500 * time.Millisecond) // a title request would have been sent by now
	reqs := fake.Requests()
	if n := len(titleRequests(reqs)); n != 2 || len(reqs) != 7 {
		t.Errorf("%d requests, %d for titles; want 7 and 2 (one per session)", len(reqs), n)
	}
	s.MustCommand(api.SessionShow, map[string]any{"sessionId": res.SessionID}, &show)
	if show.Session.Title != "Canary rollback plan" {
		t.Errorf("the first session's title: %q", show.Session.Title)
	}
}

// TestTitleFromFirstMessageAfterFailedTurn (defect 5): when the first turn
// fails, the title request after the next successful turn still uses the
// first message, with the first complete answer.
func TestTitleFromFirstMessageAfterFailedTurn(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t)
	s := startBinaryChat(t, fake)
	fake.Enqueue(openaitest.Reply{Status: 400, ErrorMessage: "context too long"})
	res := chatTurn(t, s, map[string]any{"message": "Plan the database migration"})
	if res.FinishReason != "error" {
		t.Fatalf("first turn: %+v", res)
	}
	time.Sleep(300 * time.Millisecond)
	if n := len(fake.Requests()); n != 1 {
		t.Fatalf("%d requests after a failed turn; a title request must wait for a complete answer", n)
	}
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Here is the ", "second answer."}}, openaitest.Reply{Chunks: []string{"Database migration plan"}})
	chatTurn(t, s, map[string]any{"message": "What about the indexes?"})
	waitTitle(t, s, "Database migration plan", "model")
	tr := titleRequests(fake.WaitRequests(3, 5*time.Second))
	if len(tr) != 1 {
		t.Fatalf("%d title requests", len(tr))
	}
	text := requestText(tr[0])
	if !strings.Contains(text, "Plan the database migration") || !strings.Contains(text, "Here is the second answer.") || strings.Contains(text, "What about the indexes?") {
		t.Errorf("title request:\n%s", text)
	}
}

// TestClearTitle: clearTitle makes the title automatic again (renaming the
// folder and sending sessionUpdated), and the next complete answer asks the
// model again, which replaces it.
func TestClearTitle(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t)
	s := startBinaryChat(t, fake)
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Because of the middleware."}}, openaitest.Reply{Chunks: []string{"Login redirect loop"}})
	chatTurn(t, s, map[string]any{"message": "Why does login redirect twice?"})
	waitTitle(t, s, "Login redirect loop", "model")
	var before api.ShowResult
	s.MustCommand(api.SessionShow, map[string]any{}, &before)

	var cleared api.SessionResult
	s.MustCommand(api.ClearTitle, map[string]any{}, &cleared)
	if cleared.Session.Title != "Why does login redirect twice?" || cleared.Session.TitleSource != api.TitleAuto {
		t.Errorf("cleared: %+v", cleared.Session)
	}
	if !strings.Contains(filepath.Base(cleared.Session.Folder), "--why-does-login-redirect-twice--") {
		t.Errorf("folder not renamed: %s", cleared.Session.Folder)
	}
	if _, err := os.Stat(before.Session.Folder); !os.IsNotExist(err) {
		t.Errorf("the old folder %s is still there: %v", before.Session.Folder, err)
	}
	waitTitle(t, s, "Why does login redirect twice?", "auto")

	fake.Enqueue(openaitest.Reply{Chunks: []string{"Check the cookie path."}}, openaitest.Reply{Chunks: []string{"Double login redirect"}})
	chatTurn(t, s, map[string]any{"message": "And the cookie?"})
	waitTitle(t, s, "Double login redirect", "model")
	tr := titleRequests(fake.WaitRequests(4, 5*time.Second))
	if len(tr) != 2 || !strings.Contains(requestText(tr[1]), "Why does login redirect twice?") || !strings.Contains(requestText(tr[1]), "Because of the middleware.") {
		t.Errorf("the second title request: %d requests\n%s", len(tr), requestText(tr[len(tr)-1]))
	}

	// A user's title is cleared too; with no message the title is the default.
	var named api.SessionResult
	s.MustCommand(api.SessionNew, map[string]any{"title": "Named by me"}, &named)
	s.MustCommand(api.ClearTitle, map[string]any{"sessionId": named.Session.ID}, &cleared)
	if cleared.Session.Title != session.DefaultTitle || cleared.Session.TitleSource != api.TitleAuto {
		t.Errorf("cleared without messages: %+v", cleared.Session)
	}
}

// TestSetModel: the session's model is used by its turns and recorded on
// each answer; show, export and history.md name it; "" goes back to the
// provider's model.
func TestSetModel(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t)
	s := startBinaryChat(t, fake)
	var set api.SessionResult
	s.MustCommand(api.SetModel, map[string]any{"model": "other-model"}, &set)
	if set.Session.Meta.Model != "other-model" {
		t.Fatalf("setModel: %+v", set.Session)
	}
	id := set.Session.ID
	fake.Enqueue(openaitest.Reply{Chunks: []string{"from the other model"}}, openaitest.Reply{Chunks: []string{"Greeting the other model"}})
	chatTurn(t, s, map[string]any{"message": "hello there"})
	waitTitle(t, s, "Greeting the other model", "model")
	reqs := fake.WaitRequests(2, 5*time.Second)
	if reqs[0].Parsed.Model != "other-model" || reqs[1].Parsed.Model != "test-model" {
		t.Errorf("turn model %q (want other-model), title model %q (want the provider's test-model)", reqs[0].Parsed.Model, reqs[1].Parsed.Model)
	}
	var show api.ShowResult
	s.MustCommand(api.SessionShow, map[string]any{"sessionId": id}, &show)
	if len(show.Messages) != 2 || show.Messages[1].Model != "other-model" || show.Messages[0].Model != "" {
		t.Fatalf("stored: %+v", show.Messages)
	}
	var exp api.ExportResult
	s.MustCommand(api.SessionExport, map[string]any{"format": "markdown"}, &exp)
	if !strings.Contains(exp.Content, "\n## assistant · other-model · ") || !strings.Contains(exp.Content, "- Model: other-model\n") {
		t.Errorf("markdown export:\n%s", exp.Content)
	}
	s.MustCommand(api.SessionExport, map[string]any{"format": "json"}, &exp)
	if !strings.Contains(exp.Content, `"model": "other-model"`) {
		t.Errorf("json export:\n%s", exp.Content)
	}
	history := filepath.Join(show.Session.Folder, "history.md")
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, _ := os.ReadFile(history)
		if strings.Contains(string(b), "\n## assistant · other-model · ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("history.md does not name the model:\n%s", b)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// Back to the provider's model.
	var reset api.SessionResult
	s.MustCommand(api.SetModel, map[string]any{"model": ""}, &reset)
	if reset.Session.Meta.Model != "" || reset.Session.ID != id {
		t.Errorf("model after reset: %q", reset.Session.Meta.Model)
	}
	fake.Enqueue(openaitest.Reply{Chunks: []string{"from the default"}})
	chatTurn(t, s, map[string]any{"message": "again"})
	if r := fake.WaitRequests(3, 5*time.Second)[2]; r.Parsed.Model != "test-model" {
		t.Errorf("after reset the turn used %q", r.Parsed.Model)
	}
	s.MustCommand(api.SessionShow, map[string]any{"sessionId": id}, &show)
	if m := show.Messages[len(show.Messages)-1]; m.Model != "test-model" || m.Content != "from the default" {
		t.Errorf("last answer: %+v", m)
	}
}

// startBinaryChat is startChatBinary with the defaults and only the server.
func startBinaryChat(t *testing.T, fake *openaitest.Server) *lsptest.Server {
	t.Helper()
	s, _, _ := startChatBinary(t, fake, nil, nil)
	return s
}
