package e2e_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/internal/testmcp"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// questionDaemon is a daemon whose client set initializationOptions.questions
// (or not), with the test MCP server t and a 1 s permission timeout.
// callID is the shape of ctxls's own tool call ids (ANSWER:INDEX).
var callID = regexp.MustCompile(`^[0-9]+:[0-9]+$`)

func questionDaemon(t *testing.T, fake *openaitest.Server, questions bool, answers *permissionAnswers) *lsptest.Server {
	t.Helper()
	_, rootURI := workspace(t)
	s := lsptest.Binary(t, []string{"OPENAI_API_KEY=sk-test-not-real"}, "serve", "--data-dir", t.TempDir())
	s.OnServerRequest(answers.handle)
	opts := map[string]any{
		"provider":                     map[string]any{"baseURL": fake.URL, "model": "test-model"},
		"mcpServers":                   map[string]any{"t": testmcp.Server(t, "t", t.TempDir())},
		"toolPermissionTimeoutSeconds": 1,
	}
	if questions {
		opts["questions"] = true
	}
	s.Initialize(lsptest.InitOptions{RootURI: rootURI, WorkDoneProgress: true, InitOptions: opts})
	return s
}

// question waits for the n-th ctxls/question.
func question(t *testing.T, s *lsptest.Server, n int) api.QuestionParams {
	t.Helper()
	var q api.QuestionParams
	if err := json.Unmarshal(s.WaitNotification(api.Question, n).Params, &q); err != nil {
		t.Fatal(err)
	}
	return q
}

// closed waits for the n-th ctxls/questionClosed.
func closed(t *testing.T, s *lsptest.Server, n int) api.QuestionClosedParams {
	t.Helper()
	var c api.QuestionClosedParams
	if err := json.Unmarshal(s.WaitNotification(api.QuestionClosed, n).Params, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// answerErr answers question id with action and returns the error's kind
// and code ("" and 0 when it was taken).
func answerErr(s *lsptest.Server, id, action string) (string, int) {
	err := s.Command(api.QuestionAnswer, map[string]any{"id": id, "action": action}, nil)
	if err == nil {
		return "", 0
	}
	rpc, ok := err.(*lsptest.RPCError)
	if !ok {
		return err.Error(), -1
	}
	var data struct {
		Kind string `json:"kind"`
	}
	json.Unmarshal(rpc.Data, &data)
	return data.Kind, rpc.Code
}

// TestQuestionsInTheChat: a client that set initializationOptions.questions
// is asked with ctxls/question (never window/showMessageRequest) and
// answers with ctxls.question.answer; each question ends with one
// ctxls/questionClosed: the action chosen, "timeout" when no answer came
// within toolPermissionTimeoutSeconds, "cancelled" when its turn was
// cancelled. An answer to a closed or unknown question, or with an action
// the question does not offer, is refused with its kind.
func TestQuestionsInTheChat(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	answers := &permissionAnswers{}
	s := questionDaemon(t, fake, true, answers)
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "c1", Name: "mcp__t__echo", Arguments: `{"text":"hi"}`},
			{ID: "c2", Name: "mcp__t__add", Arguments: `{"a":1,"b":2}`},
		}},
		openaitest.Reply{Chunks: []string{"Done."}},
	)
	done := s.Async("workspace/executeCommand", map[string]any{"command": api.Chat, "arguments": []any{map[string]any{"message": "use the tools"}}})

	// 1. Asked in the chat; a wrong action leaves it open; allow runs it.
	q1 := question(t, s, 1)
	// toolCallId is ctxls's id of the call (its ctxls/toolCall id), not the provider's c1.
	if q1.Kind != api.QuestionPermission || !callID.MatchString(q1.ToolCallID) || q1.SessionID == "" || q1.ID == "" ||
		!strings.Contains(q1.Message, `t · echo (read-only) with {"text":"hi"}. Allow it?`) {
		t.Errorf("the first question: %+v", q1)
	}
	var ids []string
	for _, a := range q1.Actions {
		ids = append(ids, a.ID+map[bool]string{true: "!", false: ""}[a.Deliberate])
	}
	if strings.Join(ids, " ") != "allow deny always!" {
		t.Errorf("the actions (! deliberate): %q", ids)
	}
	if kind, code := answerErr(s, q1.ID, "sure"); kind != string(api.KindInvalidArgument) || code != -32602 {
		t.Errorf("an action the question lacks: kind %q code %d", kind, code)
	}
	var res api.QuestionAnswerResult
	s.MustCommand(api.QuestionAnswer, map[string]any{"id": q1.ID, "action": "allow"}, &res)
	if res.V != 1 || res.ID != q1.ID || res.Action != "allow" {
		t.Errorf("the answer's result: %+v", res)
	}
	if c := closed(t, s, 1); c.ID != q1.ID || c.Outcome != "allow" {
		t.Errorf("closed after the answer: %+v", c)
	}
	if kind, code := answerErr(s, q1.ID, "deny"); kind != string(api.KindNotFound) || code != -32602 {
		t.Errorf("a second answer: kind %q code %d", kind, code)
	}

	// 2. No answer: closed "timeout"; the model is told it was not answered.
	q2 := question(t, s, 2)
	if q2.ID == q1.ID || !callID.MatchString(q2.ToolCallID) || q2.ToolCallID == q1.ToolCallID {
		t.Errorf("the second question: %+v", q2)
	}
	if c := closed(t, s, 2); c.ID != q2.ID || c.Outcome != api.OutcomeTimeout {
		t.Errorf("closed unanswered: %+v", c)
	}
	if kind, _ := answerErr(s, q2.ID, "allow"); kind != string(api.KindNotFound) {
		t.Errorf("an answer after the timeout: kind %q", kind)
	}
	if m := <-done; m == nil || m.Error != nil {
		t.Fatalf("the turn: %+v", m)
	}
	results := fake.LastStreamed().ToolResults()
	if results["c1"] != "echo: hi" || !strings.HasPrefix(results["c2"], "The user did not answer the permission question in time") {
		t.Errorf("results: %q", results)
	}

	// 3. The turn cancelled while its question waits: closed "cancelled".
	// (Once the model titled the session: the title's request would take
	// the next reply.)
	s.WaitFor("the model's title", func(m *lsptest.Message) bool {
		return m.Method == api.SessionUpdated && strings.Contains(string(m.Params), `"titleSource":"model"`)
	})
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c3", Name: "mcp__t__add", Arguments: `{"a":3,"b":4}`}}},
		openaitest.Reply{Chunks: []string{"Never."}},
	)
	s.SetTimeout(20 * 1e9)
	wait := s.Send(77, "workspace/executeCommand", map[string]any{"command": api.Chat, "arguments": []any{map[string]any{"message": "add"}}})
	q3 := question(t, s, 3)
	s.Notify("$/cancelRequest", map[string]any{"id": 77})
	if c := closed(t, s, 3); c.ID != q3.ID || c.Outcome != api.OutcomeCancelled {
		t.Errorf("closed by the cancel: %+v", c)
	}
	if m := wait(); m.Error == nil || m.Error.Code != -32800 {
		t.Errorf("the cancelled turn: %+v", m)
	}

	// 4. An id never asked.
	if kind, code := answerErr(s, "q999", "allow"); kind != string(api.KindNotFound) || code != -32602 {
		t.Errorf("an unknown question: kind %q code %d", kind, code)
	}
	if q := answers.asked(); len(q) != 0 {
		t.Errorf("asked with window/showMessageRequest too: %q", q)
	}
	if n := len(s.Notifications(api.QuestionClosed)); n != 3 {
		t.Errorf("%d ctxls/questionClosed, want one per question (3)", n)
	}
}

// TestQuestionsWithoutTheOption: a client that did not set questions is
// asked with window/showMessageRequest as before, and gets no
// ctxls/question.
func TestQuestionsWithoutTheOption(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	answers := &permissionAnswers{answers: []string{"Allow once"}}
	s := questionDaemon(t, fake, false, answers)
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "mcp__t__echo", Arguments: `{"text":"hi"}`}}},
		openaitest.Reply{Chunks: []string{"Done."}},
	)
	s.MustCommand(api.Chat, map[string]any{"message": "echo"}, nil)
	if q := answers.asked(); len(q) != 1 || !strings.Contains(q[0], "t · echo (read-only)") {
		t.Errorf("window/showMessageRequest questions: %q", q)
	}
	if r := fake.LastStreamed().ToolResults(); r["c1"] != "echo: hi" {
		t.Errorf("results: %q", r)
	}
	if n := len(s.Notifications(api.Question)) + len(s.Notifications(api.QuestionClosed)); n != 0 {
		t.Errorf("%d question notifications to a client that did not ask for them", n)
	}
}

// TestReviewQuestionInTheChat: a client that set questions but not
// reviewEdits is asked about an edit with ctxls/question kind "review"
// (accept, reject, acceptAll deliberate) instead of
// window/showMessageRequest; the edit is applied once accepted.
func TestReviewQuestionInTheChat(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"Title"}}))
	_, rootURI := workspace(t)
	s := lsptest.Binary(t, []string{"OPENAI_API_KEY=sk-test-not-real"}, "serve", "--data-dir", t.TempDir())
	ed := &bufferEditor{t: t, s: s, doc: map[string]*fakeDoc{}}
	s.OnServerRequest(ed.handle)
	s.Initialize(lsptest.InitOptions{RootURI: rootURI, InitOptions: map[string]any{
		"provider":  map[string]any{"baseURL": fake.URL, "model": "test-model"},
		"questions": true,
	}, Workspace: map[string]any{"applyEdit": true, "workspaceEdit": map[string]any{"documentChanges": true, "resourceOperations": []string{"create"}}}})
	uri := rootURI + "/main.go"
	ed.open(uri, "package main\n\nvar x = 1\n")
	fake.Enqueue(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "e1", Name: "edit_file", Arguments: `{"path":"main.go","old_string":"var x = 1","new_string":"var x = 2"}`}}},
		openaitest.Reply{Chunks: []string{"Done."}},
	)
	done := s.Async("workspace/executeCommand", map[string]any{"command": api.Chat, "arguments": []any{map[string]any{"message": "edit"}}})
	q := question(t, s, 1)
	var ids []string
	for _, a := range q.Actions {
		ids = append(ids, a.ID+map[bool]string{true: "!", false: ""}[a.Deliberate])
	}
	if q.Kind != api.QuestionReview || !callID.MatchString(q.ToolCallID) || !strings.Contains(q.Message, "edit ") || strings.Join(ids, " ") != "accept reject acceptAll!" {
		t.Errorf("the review question: %+v (actions %q)", q, ids)
	}
	s.MustCommand(api.QuestionAnswer, map[string]any{"id": q.ID, "action": "accept"}, nil)
	if c := closed(t, s, 1); c.ID != q.ID || c.Outcome != "accept" {
		t.Errorf("closed: %+v", c)
	}
	if m := <-done; m == nil || m.Error != nil {
		t.Fatalf("the turn: %+v", m)
	}
	if text, _ := ed.text(uri); text != "package main\n\nvar x = 2\n" {
		t.Errorf("the buffer after the accepted edit: %q", text)
	}
	if len(ed.asked) != 0 {
		t.Errorf("asked with window/showMessageRequest too: %q", ed.asked)
	}
}
