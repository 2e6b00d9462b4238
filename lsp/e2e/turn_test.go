package e2e_test

import (
	"encoding/json"
	"fmt"
	"net"
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

// binaryChat starts the built binary on dataDir with the fake provider
// configured through initializationOptions (window and output reserve as
// given) and a workspace folder root.
func binaryChat(t *testing.T, fake *openaitest.Server, dataDir, rootURI string, window, output int) *lsptest.Server {
	t.Helper()
	s := lsptest.Binary(t, []string{"OPENAI_API_KEY=sk-test-not-real"}, "serve", "--data-dir", dataDir)
	s.Initialize(lsptest.InitOptions{RootURI: rootURI, WorkDoneProgress: true, InitOptions: map[string]any{
		"provider": map[string]any{"baseURL": fake.URL, "model": "test-model", "contextWindow": window, "maxOutputTokens": output},
	}})
	return s
}

func showMessages(s *lsptest.Server) string {
	var out []string
	for _, m := range s.Notifications("window/showMessage") {
		out = append(out, string(m.Params))
	}
	return strings.Join(out, "\n")
}

// TestDeleteWhileStreaming: deleting a session while its turn streams ends
// the turn with finishReason "error" and a message saying the session was
// deleted, stops its checkpoints at once, leaves the connection with no
// current session, and the next turn says it starts a new one. A second
// turn in a busy session is answered -32803 (request failed).
func TestDeleteWhileStreaming(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t)
	fake.Enqueue(openaitest.Reply{Chunks: []string{"partial ", "never"}, Fault: openaitest.FaultStall, FaultAfter: 1})
	_, rootURI := workspace(t)
	s := binaryChat(t, fake, t.TempDir(), rootURI, 16000, 1000)
	var created api.SessionResult
	s.MustCommand(api.SessionNew, map[string]any{"title": "doomed"}, &created)
	wait := s.Send(500, "ctxls/chat", map[string]any{"message": "long question", "workDoneToken": "tok-d"})
	s.WaitFor("first delta", func(m *lsptest.Message) bool {
		return m.Method == "$/progress" && strings.Contains(string(m.Params), `"delta":"partial "`)
	})

	err := s.Call("ctxls/chat", map[string]any{"message": "again"}, nil)
	var rpcErr *lsptest.RPCError
	if !asRPC(err, &rpcErr) || rpcErr.Code != -32803 || !strings.Contains(rpcErr.Message, "already running") {
		t.Errorf("second turn in a busy session: %v", err)
	}

	time.Sleep(1200 * time.Millisecond) // a checkpoint and a heartbeat happen meanwhile
	s.MustCommand(api.SessionDelete, map[string]any{"sessionId": created.Session.ID}, nil)
	m := wait()
	if m.Error != nil {
		t.Fatalf("the turn must end with a result, got error %+v", m.Error)
	}
	var res api.ChatResult
	json.Unmarshal(m.Result, &res)
	if res.FinishReason != "error" || res.Text != "partial " {
		t.Errorf("result after delete: %+v", res)
	}
	if msgs := showMessages(s); !strings.Contains(msgs, "the session was deleted while its turn ran") {
		t.Errorf("the user is not told the session was deleted: %s", msgs)
	}
	_, _, end := progressFor(s, `"tok-d"`)
	if !strings.Contains(end, "deleted") {
		t.Errorf("progress end %q", end)
	}
	var ctxRes api.ContextGetResult
	s.MustCommand(api.ContextGet, map[string]any{}, &ctxRes)
	var list api.SessionListResult
	s.MustCommand(api.SessionList, map[string]any{}, &list)
	if len(list.Sessions) != 0 {
		t.Errorf("sessions after delete: %+v", list.Sessions)
	}

	fake.Enqueue(openaitest.Reply{Chunks: []string{"fresh"}})
	var next api.ChatResult
	s.MustCommand(api.Chat, map[string]any{"message": "start over"}, &next)
	if next.SessionID == created.Session.ID || next.Text != "fresh" {
		t.Errorf("next turn: %+v", next)
	}
	if msgs := showMessages(s); !strings.Contains(msgs, "this starts a new session") {
		t.Errorf("the next turn does not say it starts a new session: %s", msgs)
	}
	time.Sleep(1200 * time.Millisecond) // no checkpoint of the deleted answer may follow
	if n := strings.Count(s.Stderr(), "checkpoint failed"); n != 0 {
		t.Errorf("%d checkpoint warnings after the delete:\n%s", n, s.Stderr())
	}
}

func asRPC(err error, target **lsptest.RPCError) bool {
	e, ok := err.(*lsptest.RPCError)
	if ok {
		*target = e
	}
	return ok
}

// TestKilledAnswerInterruptedAtOpen: an answer a SIGKILLed daemon left
// "streaming" is marked "interrupted" as soon as another daemon opens the
// store, with no turn in that session; an answer a live daemon is
// streaming is left alone by a second daemon on the same data directory.
func TestKilledAnswerInterruptedAtOpen(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t)
	fake.Enqueue(openaitest.Reply{Chunks: []string{"live "}, Fault: openaitest.FaultStall, FaultAfter: 1},
		openaitest.Reply{Chunks: []string{"killed "}, Fault: openaitest.FaultStall, FaultAfter: 1})
	_, rootURI := workspace(t)
	dataDir := t.TempDir()
	status := func(s *lsptest.Server, id string) api.Status {
		var show api.ShowResult
		s.MustCommand(api.SessionShow, map[string]any{"sessionId": id}, &show)
		if len(show.Messages) != 2 {
			t.Fatalf("messages: %+v", show.Messages)
		}
		return show.Messages[1].Status
	}

	live := binaryChat(t, fake, dataDir, rootURI, 16000, 1000)
	var liveSess api.SessionResult
	live.MustCommand(api.SessionNew, map[string]any{"title": "live"}, &liveSess)
	waitLive := live.Send(600, "ctxls/chat", map[string]any{"message": "q1", "workDoneToken": "tl"})
	live.WaitFor("live delta", func(m *lsptest.Message) bool {
		return m.Method == "$/progress" && strings.Contains(string(m.Params), `"delta":"live "`)
	})

	doomed := binaryChat(t, fake, dataDir, rootURI, 16000, 1000)
	var doomedSess api.SessionResult
	doomed.MustCommand(api.SessionNew, map[string]any{"title": "killed"}, &doomedSess)
	doomed.Send(601, "ctxls/chat", map[string]any{"message": "q2", "workDoneToken": "tk"})
	doomed.WaitFor("killed delta", func(m *lsptest.Message) bool {
		return m.Method == "$/progress" && strings.Contains(string(m.Params), `"delta":"killed "`)
	})
	doomed.Kill()
	doomed.Exit()

	// Past the stale age, so only the owner's liveness protects the live one.
	time.Sleep(session.StaleAfter + time.Second)
	third := binaryChat(t, fake, dataDir, rootURI, 16000, 1000)
	if got := status(third, doomedSess.Session.ID); got != api.StatusInterrupted {
		t.Errorf("the killed daemon's answer is %q after another daemon opened the store", got)
	}
	if got := status(third, liveSess.Session.ID); got != api.StatusStreaming {
		t.Errorf("the live daemon's answer is %q; it is still streaming", got)
	}
	live.Notify("$/cancelRequest", map[string]any{"id": 600})
	waitLive()
	if got := status(third, liveSess.Session.ID); got != api.StatusCancelled {
		t.Errorf("the cancelled answer is %q", got)
	}
}

// TestHistoryKeepsWholeTurns: when the history does not fit (and
// compaction is off, or failed: see compact_test.go), whole turns are
// dropped oldest first: the input never starts with an answer, never
// carries a tool call without its result, and says how many messages it
// left out.
func TestHistoryKeepsWholeTurns(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t)
	_, rootURI := workspace(t)
	s := lsptest.Binary(t, []string{"OPENAI_API_KEY=sk-test-not-real"}, "serve", "--data-dir", t.TempDir())
	s.Initialize(lsptest.InitOptions{RootURI: rootURI, WorkDoneProgress: true, InitOptions: map[string]any{
		"provider":  map[string]any{"baseURL": fake.URL, "model": "test-model", "contextWindow": 4000, "maxOutputTokens": 1000},
		"compactAt": "off",
	}})
	s.MustCommand(api.SessionNew, map[string]any{"title": "named"}, nil) // no title requests
	long := strings.Repeat("lorem ipsum dolor ", 120)                    // ~360 tokens: not all five turns fit
	for i := range 5 {
		if i == 1 {
			fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call-1", Name: "get_relevant_context", Arguments: `{}`}}})
		}
		fake.Enqueue(openaitest.Reply{Chunks: []string{long}})
		s.MustCommand(api.Chat, map[string]any{"message": "question " + string(rune('A'+i)) + " " + long}, nil)
	}
	fake.Enqueue(openaitest.Reply{Chunks: []string{"ok"}})
	var res api.ChatResult
	s.MustCommand(api.Chat, map[string]any{"message": "last question"}, &res)
	reqs := fake.Requests()
	last := reqs[len(reqs)-1].Parsed.Messages
	sys := last[0].Content
	if last[0].Role != "system" || len(last) < 3 {
		t.Fatalf("input of %d messages", len(last))
	}
	// 12 messages were stored before this turn: 5 questions, 5 answers, and
	// one tool round (the call and its result).
	if want := fmt.Sprintf("[%d earlier messages not shown]", 12-(len(last)-2)); !strings.Contains(sys, want) {
		t.Errorf("the input holds %d messages but does not say %q", len(last), want)
	}
	if last[1].Role != "user" {
		t.Errorf("the kept history starts with a %s message, not a question", last[1].Role)
	}
	if !strings.Contains(sys, " earlier messages not shown]") {
		t.Errorf("the cut is not marked:\n%s", sys[max(0, len(sys)-300):])
	}
	calls := map[string]bool{}
	for i, m := range last[1:] {
		for _, c := range m.ToolCalls {
			calls[c.ID] = true
		}
		if m.Role == "tool" && !calls[m.ToolCallID] {
			t.Errorf("message %d: a tool result without its call", i+1)
		}
	}
	for id := range calls {
		found := false
		for _, m := range last {
			found = found || m.Role == "tool" && m.ToolCallID == id
		}
		if !found {
			t.Errorf("tool call %s sent without its result", id)
		}
	}
	if last[len(last)-1].Role != "user" || !strings.HasSuffix(last[len(last)-1].Content, "last question") {
		t.Errorf("the new message must be last")
	}
}

// TestProviderUnreachableStoredWithError: with no server at the provider's
// address the user is told the provider could not be reached (not that a
// stream broke), and the failed answer is stored with that message, which
// show and export carry.
func TestProviderUnreachableStoredWithError(t *testing.T) {
	parallel(t, waitTests)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens here now
	_, rootURI := workspace(t)
	s := lsptest.Binary(t, []string{"OPENAI_API_KEY=sk-test-not-real"}, "serve", "--data-dir", t.TempDir())
	s.Initialize(lsptest.InitOptions{RootURI: rootURI, InitOptions: map[string]any{
		"provider": map[string]any{"baseURL": "http://" + addr + "/v1", "model": "m"},
	}})
	var res api.ChatResult
	s.MustCommand(api.Chat, map[string]any{"message": "anyone there?"}, &res)
	if res.FinishReason != "error" {
		t.Fatalf("result %+v", res)
	}
	msgs := showMessages(s)
	if !strings.Contains(msgs, "could not reach the provider at http://"+addr+"/v1") || strings.Contains(msgs, "broke") {
		t.Errorf("message: %s", msgs)
	}
	var show api.ShowResult
	s.MustCommand(api.SessionShow, map[string]any{"sessionId": res.SessionID}, &show)
	answer := show.Messages[1]
	if answer.Status != api.StatusError || !strings.HasPrefix(answer.Content, "Error: could not reach the provider") {
		t.Errorf("stored answer %+v", answer)
	}
	var export api.ExportResult
	s.MustCommand(api.SessionExport, map[string]any{"sessionId": res.SessionID}, &export)
	if !strings.Contains(export.Content, "## assistant (error)") || !strings.Contains(export.Content, "could not reach the provider") {
		t.Errorf("export:\n%s", export.Content)
	}
}

// TestWithheldAndMissingFilesSayWhy: a file the model put in the context
// from outside the workspace is withheld as such (not as a secret); a
// directory is refused as a files item; resume and the next turn's prompt
// agree on which files are missing.
func TestWithheldAndMissingFilesSayWhy(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t)
	root, rootURI := workspace(t)
	outside := filepath.Join(t.TempDir(), "notes.txt")
	os.WriteFile(outside, []byte("plain notes\n"), 0o644)
	gone := filepath.Join(root, "gone.go")
	os.WriteFile(gone, []byte("package gone\n"), 0o644)
	s := binaryChat(t, fake, t.TempDir(), rootURI, 16000, 1000)

	err := s.Command(api.ContextSet, map[string]any{"setName": "files", "items": []string{"docs"}}, nil)
	if err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory as a files item: %v", err)
	}
	s.MustCommand(api.ContextSet, map[string]any{"setName": "files", "items": []string{"main.go", "gone.go"}}, nil)
	fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "set_relevant_context",
		Arguments: `{"setName":"files","items":["` + outside + `"],"mode":"merge"}`}}},
		openaitest.Reply{Chunks: []string{"noted"}})
	var res api.ChatResult
	s.MustCommand(api.Chat, map[string]any{"message": "remember my notes"}, &res)
	os.Remove(gone)

	var resume api.ResumeResult
	s.MustCommand(api.SessionResume, map[string]any{"sessionId": res.SessionID}, &resume)
	if len(resume.MissingFiles) != 1 || resume.MissingFiles[0] != gone || !strings.Contains(resume.Reminder, "(1 file not found)") {
		t.Errorf("resume: missing %v, reminder %q", resume.MissingFiles, resume.Reminder)
	}
	fake.Enqueue(openaitest.Reply{Chunks: []string{"ok"}})
	s.MustCommand(api.Chat, map[string]any{"message": "go on"}, nil)
	reqs := fake.Requests()
	for len(reqs) > 1 && reqs[len(reqs)-1].Question() != "go on" {
		reqs = reqs[:len(reqs)-1] // the session's title, asked in the background
	}
	sys := reqs[len(reqs)-1].ModelContext()
	if !strings.Contains(sys, outside+": withheld because it is outside the workspace folders and the session folder") {
		t.Errorf("the outside file's reason:\n%s", sys)
	}
	if strings.Contains(sys, "looks like it holds secrets") || strings.Contains(sys, "plain notes") {
		t.Errorf("the outside file is called a secret or sent:\n%s", sys)
	}
	// The missing file's text went with the first turn, when it existed;
	// this turn says it is gone.
	if turn := reqs[len(reqs)-1].TurnContext(); !strings.Contains(turn, "(1 file not found)") || !strings.Contains(turn, "- "+gone+" (not found)") || strings.Contains(turn, "package gone") {
		t.Errorf("the prompt disagrees with resume on the missing file:\n%s", turn)
	}
}

// TestChatPreviewStoresNothing: ctxls.chat.preview returns the exact input
// the turn then sends, with token counts, stores nothing, calls no
// provider, and creates no session.
func TestChatPreviewStoresNothing(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t)
	_, rootURI := workspace(t)
	s := binaryChat(t, fake, t.TempDir(), rootURI, 16000, 1000)
	var pv api.ChatPreviewResult
	s.MustCommand(api.ChatPreview, map[string]any{"message": "what is in main?", "files": []string{"main.go"}}, &pv)
	if pv.SessionID != "" || pv.Model != "test-model" || pv.Budget != 15000 || len(pv.Messages) != 2 {
		t.Fatalf("preview of a first turn: %+v", pv)
	}
	// It names the file that goes with the question, absolute.
	if len(pv.Files) != 1 || !filepath.IsAbs(pv.Files[0]) || filepath.Base(pv.Files[0]) != "main.go" {
		t.Errorf("the preview's files: %q", pv.Files)
	}
	// The file's text is in the turn's context, before the question (the
	// system prompt stays the same from turn to turn).
	if strings.Contains(pv.Messages[0].Content, "package main") || !strings.Contains(pv.Messages[1].Content, "package main") ||
		!strings.HasSuffix(pv.Messages[1].Content, "</ctxls-context>\n\nwhat is in main?") {
		t.Errorf("preview messages: %+v", pv.Messages)
	}
	if pv.Tokens.Total != pv.Tokens.System+pv.Tokens.History+pv.Tokens.Tools || pv.Tokens.Tools < 200 || pv.Tokens.Files <= 0 || pv.Tokens.Files >= pv.Tokens.System {
		t.Errorf("tokens %+v", pv.Tokens)
	}
	names := []string{}
	for _, tool := range pv.Tools {
		names = append(names, tool.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "read_file") {
		t.Errorf("tools %v", names)
	}
	var list api.SessionListResult
	s.MustCommand(api.SessionList, map[string]any{}, &list)
	if len(list.Sessions) != 0 || len(fake.Requests()) != 0 {
		t.Errorf("the preview stored a session or called the provider: %+v", list.Sessions)
	}

	// The turn then sends exactly what was previewed.
	fake.Enqueue(openaitest.Reply{Chunks: []string{"it prints"}})
	var res api.ChatResult
	s.MustCommand(api.Chat, map[string]any{"message": "what is in main?", "files": []string{"main.go"}}, &res)
	sent := fake.Requests()[0].Parsed.Messages
	if len(sent) != 2 || sent[0].Content != pv.Messages[0].Content || sent[1].Content != pv.Messages[1].Content {
		t.Errorf("the turn sent something else than the preview showed")
	}
	// A preview of the next turn carries the history and stores nothing.
	var show, after api.ShowResult
	s.MustCommand(api.SessionShow, map[string]any{"sessionId": res.SessionID}, &show)
	s.MustCommand(api.ChatPreview, map[string]any{"message": "and then?"}, &pv)
	s.MustCommand(api.SessionShow, map[string]any{"sessionId": res.SessionID}, &after)
	if pv.SessionID != res.SessionID || len(pv.Messages) != 4 || pv.Messages[2].Content != "it prints" || len(after.Messages) != len(show.Messages) {
		t.Errorf("preview of the second turn: %+v (stored %d → %d)", pv.Messages, len(show.Messages), len(after.Messages))
	}
	// The last page of a listing has no nextCursor (docs/protocol.md).
	var raw json.RawMessage
	s.MustCommand(api.SessionList, map[string]any{}, &raw)
	if strings.Contains(string(raw), "nextCursor") {
		t.Errorf("last page carries nextCursor: %s", raw)
	}
}

// TestSessionModelWithoutProviderModel: a provider configured without a
// model (a local server) is usable by a session that has a model of its
// own; without one the turn says a model is needed.
func TestSessionModelWithoutProviderModel(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t)
	s := lsptest.Binary(t, []string{"OPENAI_API_KEY=", "CTXLS_MODEL=", "OPENAI_BASE_URL=" + fake.URL}, "serve", "--data-dir", t.TempDir())
	s.Initialize(lsptest.InitOptions{})
	err := s.Command(api.Chat, map[string]any{"message": "hi"}, nil)
	if err == nil || !strings.Contains(err.Error(), "no model is configured") {
		t.Fatalf("a turn with no model anywhere: %v", err)
	}
	s.MustCommand(api.SetModel, map[string]any{"model": "llama3.1"}, nil)
	fake.Enqueue(openaitest.Reply{Chunks: []string{"hello"}}, openaitest.Reply{Chunks: []string{"Greeting"}})
	var res api.ChatResult
	s.MustCommand(api.Chat, map[string]any{"message": "hi"}, &res)
	if res.Text != "hello" || fake.WaitRequests(1, 5*time.Second)[0].Parsed.Model != "llama3.1" {
		t.Errorf("turn with the session's model: %+v", res)
	}
}

// TestTurnFileLines: a turn's file may name the lines the user selected
// (main.go:1-2, main.go:1): the model is told them beside the whole file; a
// range that ends before it starts is an invalid argument.
func TestTurnFileLines(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t)
	_, rootURI := workspace(t)
	s := binaryChat(t, fake, t.TempDir(), rootURI, 16000, 1000)
	var pv api.ChatPreviewResult
	s.MustCommand(api.ChatPreview, map[string]any{"message": "what do these do?", "files": []string{"main.go:1-2", "README.md:1"}}, &pv)
	last := pv.Messages[len(pv.Messages)-1].Content
	if !strings.Contains(last, "main.go (the user selected lines 1–2)\n```\npackage main") || !strings.Contains(last, "README.md (the user selected line 1)") {
		t.Errorf("the turn's context:\n%s", last)
	}
	err := s.Command(api.ChatPreview, map[string]any{"message": "x", "files": []string{"main.go:5-2"}}, nil)
	if err == nil || !strings.Contains(err.Error(), "the lines end before they start") {
		t.Errorf("a backwards range: %v", err)
	}
}

// TestOwnFilesAreNotCandidates: a file ctxls wrote itself (in a session's
// folder under the data directory), open in the editor, is not listed to
// the model as one of the user's open files; a workspace file is.
func TestOwnFilesAreNotCandidates(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t)
	root, rootURI := workspace(t)
	dataDir := t.TempDir()
	s := binaryChat(t, fake, dataDir, rootURI, 16000, 1000)
	own := filepath.Join(dataDir, "sessions", "some-session", "results", "report.md")
	mine := filepath.Join(root, "notes.md")
	for _, p := range []string{own, mine} {
		s.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": "file://" + p, "languageId": "markdown", "version": 1, "text": "# text\n"}})
	}
	var pv api.ChatPreviewResult
	s.MustCommand(api.ChatPreview, map[string]any{"message": "hello"}, &pv)
	last := pv.Messages[len(pv.Messages)-1].Content
	if !strings.Contains(last, "- "+mine+"\n") || strings.Contains(last, "report.md") {
		t.Errorf("the open files listed to the model:\n%s", last)
	}
}

// TestProviderFailureIsLogged: a provider's failure is written to the log
// (here stderr), not only shown, and never with the key.
func TestProviderFailureIsLogged(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t)
	_, rootURI := workspace(t)
	s := binaryChat(t, fake, t.TempDir(), rootURI, 16000, 1000)
	fake.Enqueue(openaitest.Reply{Status: 401, ErrorMessage: "Incorrect API key provided: sk-test-not-real", ErrorType: "invalid_request_error", ErrorCode: "invalid_api_key"})
	var res api.ChatResult
	s.Call("ctxls/chat", map[string]any{"message": "q"}, &res)
	// The log line is written as the turn ends; stderr reaches the test
	// through a pipe, a moment later.
	deadline := time.Now().Add(10 * time.Second)
	logs := s.Stderr()
	for !strings.Contains(logs, "chat turn failed") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		logs = s.Stderr()
	}
	if !strings.Contains(logs, "chat turn failed") || !strings.Contains(logs, "refused the API key") {
		t.Errorf("the failure is not in the log:\n%s", logs)
	}
	if strings.Contains(logs, "sk-test-not-real") {
		t.Error("the key reached the log")
	}
}
