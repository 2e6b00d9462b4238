package e2e_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/internal/pgtest"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/session/backend"
)

// liveLatency is how soon a change made on one daemon reaches the editors
// of another on the same database (docs/protocol.md, Live updates).
const liveLatency = time.Second

// liveCluster starts PostgreSQL with the ctxls schema and the role alice.
func liveCluster(t *testing.T) *pgtest.Cluster {
	t.Helper()
	c := pgtest.Start(t)
	if _, err := backend.InitPostgres(context.Background(), c.DSN("", "postgres")); err != nil {
		t.Fatal(err)
	}
	if out, err := c.Psql(t, "", "postgres", "CREATE ROLE alice LOGIN IN ROLE ctxls_user; GRANT CONNECT ON DATABASE postgres TO alice"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	return c
}

// startLive starts a daemon over the built binary on its own data
// directory (a machine of its own) with alice's store and the fake
// provider.
func startLive(t *testing.T, c *pgtest.Cluster, fake *openaitest.Server) *lsptest.Server {
	t.Helper()
	s, _, _ := startChatBinary(t, fake, nil, []string{backend.StoreEnv + "="}, "--store", c.DSN("alice", "postgres"))
	s.SetTimeout(30 * time.Second)
	return s
}

// waitListening waits until n connections listen for changes: each
// daemon's Watch, so a change made from now on reaches it.
func waitListening(t *testing.T, c *pgtest.Cluster, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := c.Psql(t, "", "postgres", "SELECT count(*) FROM pg_stat_activity WHERE query = 'LISTEN ctxls_changes'")
		if got, _ := strconv.Atoi(out); err == nil && got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d daemons do not listen for changes: %q %v", n, out, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitLive waits on s for a notification method about session id that
// pred accepts, and checks it arrived within liveLatency of since.
func waitLive(t *testing.T, s *lsptest.Server, what string, since time.Time, method, id string, pred func(json.RawMessage) bool) json.RawMessage {
	t.Helper()
	m := s.WaitFor(what, func(m *lsptest.Message) bool {
		if !m.IsNotification() || m.Method != method || m.At.Before(since) {
			return false
		}
		var p struct {
			SessionID string `json:"sessionId"`
		}
		json.Unmarshal(m.Params, &p)
		return p.SessionID == id && (pred == nil || pred(m.Params))
	})
	if d := m.At.Sub(since); d > liveLatency {
		t.Errorf("%s arrived %v after the change, want within %v", what, d, liveLatency)
	}
	return m.Params
}

// The live tests run alone, not beside the waiting tests: under their load
// TestLiveTwoMachines sometimes missed B's notice of the model's file
// (twice in about ten runs with issue 23's parallel tests). The PostgreSQL
// store's watch reports a file only when its mirror lacks it (syncFiles),
// so a read of the session that mirrors the file first may swallow the
// notice.

// TestLiveTwoMachines: two daemons with their own data directories on one
// database, as two machines of one person. A session made, given context
// and a file, and continued with a model's write_file on A reaches B's
// editor as ctxls/sessionUpdated, ctxls/contextChanged and
// ctxls/sessionFilesChanged within a second each; B resumes it, sees its
// history and context and continues it with A's messages and the file in
// the provider's input; B's rename reaches A; and a turn on B while A's
// streams is refused -32803.
func TestLiveTwoMachines(t *testing.T) {
	c := liveCluster(t)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"default"}}))
	b := startLive(t, c, fake)
	a := startLive(t, c, fake)
	waitListening(t, c, 2)

	// B shows the session (its current one): only that session's changes
	// are announced to it. A session B does not show is not.
	var other api.SessionResult
	a.MustCommand(api.SessionNew, map[string]any{"title": "Not shown on B"}, &other)
	var created api.SessionResult
	a.MustCommand(api.SessionNew, map[string]any{"title": "Shared plan"}, &created)
	id := created.Session.ID
	b.MustCommand(api.SessionResume, map[string]any{"sessionId": id}, nil)
	since := time.Now()
	a.MustCommand(api.SessionRename, map[string]any{"sessionId": id, "title": "Shared plan, v2"}, nil)
	a.MustCommand(api.SessionRename, map[string]any{"sessionId": other.Session.ID, "title": "Still not shown"}, nil)
	waitLive(t, b, "B: sessionUpdated for the renamed session", since, api.SessionUpdated, id, func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"Shared plan, v2"`)
	})

	since = time.Now()
	var set api.ContextSetResult
	a.MustCommand(api.ContextSet, map[string]any{"sessionId": id, "setName": "files", "items": []string{"main.go"}}, &set)
	p := waitLive(t, b, "B: contextChanged", since, api.ContextChanged, id, nil)
	var cc api.ContextChangedParams
	json.Unmarshal(p, &cc)
	if cc.Reason != "changed" || len(cc.Context["files"]) != 1 || cc.Context["files"][0] != set.Items[0] || cc.Added == nil || cc.Removed == nil {
		t.Errorf("B's contextChanged: %s", p)
	}

	since = time.Now()
	notes := "Budget: 40k; deadline: March.\n"
	a.MustCommand(api.FilesAdd, map[string]any{"sessionId": id, "name": "notes.txt", "contentBase64": base64.StdEncoding.EncodeToString([]byte(notes))}, nil)
	p = waitLive(t, b, "B: sessionFilesChanged for sources/notes.txt", since, api.SessionFilesChanged, id, func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"notes.txt"`)
	})
	var fc api.SessionFilesChangedParams
	json.Unmarshal(p, &fc)
	if fc.Subdir != "sources" || fc.Size != int64(len(notes)) || fc.By != api.ByRemote || fc.Removed {
		t.Errorf("B's sessionFilesChanged: %s", p)
	}

	// A turn on A whose model writes a file.
	fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{writeCall("w1", "results/summary.md", "# Summary\n")}},
		openaitest.Reply{Chunks: []string{"Wrote the summary."}})
	var res api.ChatResult
	sent := time.Now()
	a.MustCommand(api.Chat, map[string]any{"sessionId": id, "message": "Summarise the notes"}, &res)
	if res.Text != "Wrote the summary." || res.FinishReason != "stop" {
		t.Fatalf("A's turn: %+v", res)
	}
	wrote := a.WaitFor("A: sessionFilesChanged by the model", func(m *lsptest.Message) bool {
		return m.Method == api.SessionFilesChanged && strings.Contains(string(m.Params), `"summary.md"`)
	})
	// B's notice is looked for from the turn's start and timed from A's:
	// each editor's messages are read apart, so under load B's may be read
	// first.
	onB := b.WaitFor("B: sessionFilesChanged for results/summary.md", func(m *lsptest.Message) bool {
		var fc api.SessionFilesChangedParams
		return m.IsNotification() && m.Method == api.SessionFilesChanged && !m.At.Before(sent) &&
			json.Unmarshal(m.Params, &fc) == nil && fc.SessionID == id && strings.Contains(string(m.Params), `"summary.md"`)
	})
	if d := onB.At.Sub(wrote.At); d > liveLatency {
		t.Errorf("B: sessionFilesChanged for results/summary.md arrived %v after A's, want within %v", d, liveLatency)
	}
	p = onB.Params
	json.Unmarshal(p, &fc)
	if fc.Subdir != "results" || fc.Size != int64(len("# Summary\n")) || fc.By != api.ByRemote {
		t.Errorf("B's sessionFilesChanged for the model's file: %s", p)
	}
	turnEnded := time.Now()
	waitLive(t, b, "B: sessionUpdated after A's turn", turnEnded.Add(-liveLatency), api.SessionUpdated, id, nil)

	// B resumes and sees it all.
	var resumed api.ResumeResult
	b.MustCommand(api.SessionResume, map[string]any{"sessionId": id}, &resumed)
	if resumed.Session.Title != "Shared plan, v2" || len(resumed.Context["files"]) != 1 || resumed.Context["files"][0] != set.Items[0] {
		t.Errorf("B's resume: %+v", resumed)
	}
	var show api.ShowResult
	b.MustCommand(api.SessionShow, map[string]any{"sessionId": id}, &show)
	var contents []string
	for _, m := range show.Messages {
		contents = append(contents, m.Content)
	}
	if len(show.Messages) != 4 || show.Messages[0].Content != "Summarise the notes" || show.Messages[3].Content != "Wrote the summary." {
		t.Errorf("B's history: %q", contents)
	}
	var files api.FilesListResult
	b.MustCommand(api.FilesList, map[string]any{"subdir": "results"}, &files)
	if len(files.Files) != 1 || files.Files[0] != "summary.md" {
		t.Errorf("B's results/: %v", files.Files)
	}

	// B continues: its provider request carries A's messages and the file.
	n := len(fake.Requests())
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Continued on B."}})
	since = time.Now()
	b.MustCommand(api.Chat, map[string]any{"message": "Go on"}, &res)
	if res.SessionID != id || res.Text != "Continued on B." {
		t.Fatalf("B's turn: %+v", res)
	}
	req := fake.WaitRequests(n+1, 10*time.Second)[n]
	body := string(req.Body)
	for _, want := range []string{"Summarise the notes", "Wrote the summary.", "notes.txt", "Go on"} {
		if !strings.Contains(body, want) {
			t.Errorf("B's provider request lacks %q", want)
		}
	}
	if !strings.Contains(req.ModelContext(), "notes.txt") {
		t.Errorf("B's system prompt does not list the session file notes.txt")
	}
	waitLive(t, a, "A: sessionUpdated after B's turn", since, api.SessionUpdated, id, nil)

	// B's rename reaches A.
	since = time.Now()
	b.MustCommand(api.SessionRename, map[string]any{"title": "Renamed on B"}, nil)
	waitLive(t, a, "A: sessionUpdated with B's title", since, api.SessionUpdated, id, func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"Renamed on B"`) && strings.Contains(string(p), `"user"`)
	})

	// A turn on B while A's streams: busy, -32803, saying where.
	fake.Enqueue(openaitest.Reply{Chunks: []string{"streaming on A ", "never"}, Fault: openaitest.FaultStall, FaultAfter: 1})
	wait := a.Send(9001, api.ChatRequest, map[string]any{"sessionId": id, "message": "A long one", "workDoneToken": "tok-a"})
	a.WaitFor("A's first delta", func(m *lsptest.Message) bool {
		return m.Method == "$/progress" && strings.Contains(string(m.Params), `"delta":"streaming on A "`)
	})
	err := b.Call(api.ChatRequest, map[string]any{"sessionId": id, "message": "me too"}, nil)
	checkRPCError(t, "B's turn while A's streams", err, -32803, "already running", "another machine")
	a.Notify("$/cancelRequest", map[string]any{"id": 9001})
	if m := wait(); m.Error == nil || m.Error.Code != -32800 {
		t.Errorf("A's cancelled turn: %+v", m)
	}
	// Once A's turn is over, B may run one.
	fake.Enqueue(openaitest.Reply{Chunks: []string{"B's turn now."}})
	b.MustCommand(api.Chat, map[string]any{"message": "my turn"}, &res)
	if res.Text != "B's turn now." {
		t.Errorf("B's turn after A's: %+v", res)
	}

	// The session B does not show was never announced to it.
	for _, m := range b.Received() {
		if m.IsNotification() && strings.Contains(string(m.Params), other.Session.ID) {
			t.Errorf("B was told of a session it does not show: %s %s", m.Method, m.Params)
		}
	}

	for _, s := range []*lsptest.Server{a, b} {
		start := time.Now()
		s.Shutdown()
		if code := s.Exit(); code != 0 {
			t.Errorf("exit %d", code)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("shutdown and exit took %v", d)
		}
	}
}

// TestLivePostgresRestartMidTurn: PostgreSQL stops while a turn streams.
// The turn ends at once with finishReason "error" and a message naming the
// database (not the driver's "broken pipe"); the user message and the
// checkpointed text stay; documents are served while the database is
// down and store commands say it is unreachable (-32803); once it is back
// the daemon reconnects by itself (its editor is told with
// ctxls/sessionUpdated) and the next turn works, saving the failed answer
// first.
func TestLivePostgresRestartMidTurn(t *testing.T) {
	c := liveCluster(t)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"default"}}))
	a := startLive(t, c, fake)
	waitListening(t, c, 1)
	var created api.SessionResult
	a.MustCommand(api.SessionNew, map[string]any{"title": "Restart"}, &created)
	id := created.Session.ID

	fake.Enqueue(openaitest.Reply{Chunks: []string{"partial ", "never"}, Fault: openaitest.FaultStall, FaultAfter: 1})
	wait := a.Send(7001, api.ChatRequest, map[string]any{"message": "long question", "workDoneToken": "tok-pg"})
	a.WaitFor("first delta", func(m *lsptest.Message) bool {
		return m.Method == "$/progress" && strings.Contains(string(m.Params), `"delta":"partial "`)
	})
	// The checkpoint has saved the text.
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, _ := c.Psql(t, "", "postgres", "SELECT content FROM messages WHERE role = 'assistant'")
		if out == "partial" { // psql -A -t trims the trailing space
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no checkpoint of the answer: %q", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	updates := len(a.Notifications(api.SessionUpdated))

	c.Stop(t)
	stopped := time.Now()
	m := wait()
	if m.Error != nil {
		t.Fatalf("the turn answered an error: %+v", m.Error)
	}
	var res api.ChatResult
	json.Unmarshal(m.Result, &res)
	if res.FinishReason != "error" || res.Text != "partial " || res.SessionID != id {
		t.Errorf("result: %+v", res)
	}
	if d := time.Since(stopped); d > 5*time.Second {
		t.Errorf("the turn ended %v after PostgreSQL stopped", d)
	}
	_, _, end := progressFor(a, `"tok-pg"`)
	if !strings.Contains(end, "session database (PostgreSQL) cannot be reached") || strings.Contains(end, "broken pipe") {
		t.Errorf("progress end %q", end)
	}
	a.WaitFor("showMessage naming the database", func(m *lsptest.Message) bool {
		return m.Method == "window/showMessage" && strings.Contains(string(m.Params), "cannot be reached")
	})

	// Documents are served while the database is down.
	uri := "file:///down/notes.txt"
	a.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "text", "version": 1, "text": "a"}})
	a.Notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": 2},
		"contentChanges": []any{map[string]any{"text": "ab"}}})
	var doc api.DocumentGetResult
	a.MustCommand(api.DocumentGet, map[string]any{"uri": uri}, &doc)
	if doc.Text != "ab" {
		t.Errorf("document while the database is down: %q", doc.Text)
	}
	err := a.Command(api.SessionList, map[string]any{}, nil)
	checkRPCError(t, "list while the database is down", err, -32803, "cannot be reached")
	if err != nil && strings.Contains(err.Error(), "dial") {
		t.Errorf("the driver's error shows: %v", err)
	}

	c.Start(t)
	a.WaitNotification(api.SessionUpdated, updates+1) // reconnected: the current session again
	fake.Enqueue(openaitest.Reply{Chunks: []string{"back again"}})
	a.MustCommand(api.Chat, map[string]any{"message": "still there?"}, &res)
	if res.Text != "back again" || res.FinishReason != "stop" {
		t.Errorf("the turn after the restart: %+v", res)
	}
	var show api.ShowResult
	a.MustCommand(api.SessionShow, map[string]any{"sessionId": id}, &show)
	if len(show.Messages) != 4 {
		t.Fatalf("stored: %+v", show.Messages)
	}
	if m := show.Messages[0]; m.Content != "long question" || m.Role != api.RoleUser {
		t.Errorf("the user message: %+v", m)
	}
	if m := show.Messages[1]; !strings.HasPrefix(m.Content, "partial ") || m.Status != api.StatusError || !strings.Contains(m.Content, "cannot be reached") {
		t.Errorf("the failed answer: %+v", m)
	}
	if m := show.Messages[3]; m.Content != "back again" || m.Status != api.StatusComplete {
		t.Errorf("the answer after the restart: %+v", m)
	}
	a.Shutdown()
	if code := a.Exit(); code != 0 {
		t.Errorf("exit %d", code)
	}
}
