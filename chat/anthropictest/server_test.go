package anthropictest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// post sends body to /v1/messages with the usual headers (and key, if
// not "") and returns the status, a header and the body.
func post(t *testing.T, s *Server, key, body string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", s.URL+"/v1/messages", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("anthropic-version", "2023-06-01")
	if key != "" {
		req.Header.Set("x-api-key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestStreamWireFormat pins the bytes of a streamed answer with text and a
// tool call: Anthropic's events, in its order, with its fields.
func TestStreamWireFormat(t *testing.T) {
	s := New(t)
	s.Enqueue(Reply{Chunks: []string{"Hel", "lo"}, ToolCalls: []ToolCall{{ID: "toolu_1", Name: "read_file", Arguments: `{"path":"a.go"}`}},
		Usage: &Usage{InputTokens: 7, CacheCreationInputTokens: 5, CacheReadInputTokens: 3, OutputTokens: 9}})
	status, h, body := post(t, s, "", `{"model":"m","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	want := `event: message_start
data: {"message":{"content":[],"id":"msg_test","model":"m","role":"assistant","stop_reason":null,"stop_sequence":null,"type":"message","usage":{"input_tokens":7,"cache_creation_input_tokens":5,"cache_read_input_tokens":3,"output_tokens":1}},"type":"message_start"}

event: content_block_start
data: {"content_block":{"text":"","type":"text"},"index":0,"type":"content_block_start"}

event: ping
data: {"type":"ping"}

event: content_block_delta
data: {"delta":{"text":"Hel","type":"text_delta"},"index":0,"type":"content_block_delta"}

event: content_block_delta
data: {"delta":{"text":"lo","type":"text_delta"},"index":0,"type":"content_block_delta"}

event: content_block_stop
data: {"index":0,"type":"content_block_stop"}

event: content_block_start
data: {"content_block":{"id":"toolu_1","input":{},"name":"read_file","type":"tool_use"},"index":1,"type":"content_block_start"}

event: content_block_delta
data: {"delta":{"partial_json":"{\"path\"","type":"input_json_delta"},"index":1,"type":"content_block_delta"}

event: content_block_delta
data: {"delta":{"partial_json":":\"a.go\"}","type":"input_json_delta"},"index":1,"type":"content_block_delta"}

event: content_block_stop
data: {"index":1,"type":"content_block_stop"}

event: message_delta
data: {"delta":{"stop_reason":"tool_use","stop_sequence":null},"type":"message_delta","usage":{"output_tokens":9}}

event: message_stop
data: {"type":"message_stop"}

`
	if status != 200 || h.Get("Content-Type") != "text/event-stream" || body != want {
		t.Errorf("status %d, %s:\n%s", status, h.Get("Content-Type"), body)
	}
	if r := s.Requests()[0]; r.FinishedAt.IsZero() || r.Question() != "hi" {
		t.Errorf("recorded %+v", r)
	}
}

// TestErrorsAndChecks: error bodies as Anthropic's, Retry-After, the
// headers and the request checked as the API checks them.
func TestErrorsAndChecks(t *testing.T) {
	s := New(t, WithAPIKey("sk-ant-k"))
	s.Enqueue(Reply{Status: 529, RetryAfter: "3", ErrorMessage: "Overloaded"})
	ok := `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	status, h, body := post(t, s, "sk-ant-k", ok)
	if status != 529 || h.Get("Retry-After") != "3" || body != `{"error":{"message":"Overloaded","type":"overloaded_error"},"type":"error"}` {
		t.Errorf("529: %d %q %s", status, h.Get("Retry-After"), body)
	}
	if status, _, body := post(t, s, "sk-ant-wrong", ok); status != 401 || !strings.Contains(body, `"authentication_error"`) {
		t.Errorf("a wrong key: %d %s", status, body)
	}
	req, _ := http.NewRequest("POST", s.URL+"/v1/messages", strings.NewReader(ok))
	req.Header.Set("x-api-key", "sk-ant-k")
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 400 {
		t.Errorf("no anthropic-version: %v %v", resp, err)
	}
	five := `{"type":"text","text":"x","cache_control":{"type":"ephemeral"}}`
	for _, tc := range []struct{ name, body, want string }{
		{"unknown field", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"temprature":1}`, `unknown field \"temprature\"`},
		{"no max_tokens", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, "max_tokens"},
		{"assistant first", `{"model":"m","max_tokens":1,"messages":[{"role":"assistant","content":"hi"}]}`, `first message must use the \"user\" role`},
		{"two users", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}`, "roles must alternate"},
		{"empty text", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"text","text":" \n"}]}]}`, "text content blocks must contain non-whitespace text"},
		{"tool_use unanswered", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},{"role":"user","content":"b"}]}`, "`tool_use` ids were found without `tool_result` blocks immediately after: t1"},
		{"result after text", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},{"role":"user","content":[{"type":"text","text":"b"},{"type":"tool_result","tool_use_id":"t1"}]}]}`, "must come before any other content"},
		{"stray result", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t9"}]}]}`, "unexpected `tool_use_id`"},
		{"five breakpoints", `{"model":"m","max_tokens":1,"system":[` + five + `,` + five + `],"messages":[{"role":"user","content":[` + five + `,` + five + `,` + five + `]}]}`, "A maximum of 4 blocks with cache_control may be provided. Found 5."},
		{"bad schema", `{"model":"m","max_tokens":1,"tools":[{"name":"f","input_schema":{"type":"string"}}],"messages":[{"role":"user","content":"a"}]}`, "input_schema.type"},
	} {
		status, _, body := post(t, s, "sk-ant-k", tc.body)
		if status != 400 || !strings.Contains(body, `"invalid_request_error"`) || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %s", tc.name, status, body)
		}
	}
}

// TestCacheAccounting: a request reads the longest prefix an earlier one
// marked, found at its own breakpoints or up to 20 blocks before one;
// writes are what it adds up to its last breakpoint; per model.
func TestCacheAccounting(t *testing.T) {
	s := New(t)
	cc := `,"cache_control":{"type":"ephemeral"}`
	text := func(s string, mark bool) string {
		if mark {
			return `{"type":"text","text":"` + s + `"` + cc + `}`
		}
		return `{"type":"text","text":"` + s + `"}`
	}
	sys := `"system":[` + text(strings.Repeat("system prompt ", 100), true) + `]`
	// history: n user/assistant exchanges, the first question marked when
	// markFirst.
	history := func(n int, markFirst bool) string {
		var msgs []string
		for i := range n {
			msgs = append(msgs, `{"role":"user","content":[`+text(fmt.Sprintf("question %d", i), i == 0 && markFirst)+`]}`,
				`{"role":"assistant","content":[`+text(fmt.Sprintf("answer %d", i), false)+`]}`)
		}
		return strings.Join(msgs, ",")
	}
	req := func(model, messages string) Usage {
		t.Helper()
		status, _, body := post(t, s, "", `{"model":"`+model+`","max_tokens":10,`+sys+`,"messages":[`+messages+`]}`)
		if status != 200 {
			t.Fatalf("%d %s", status, body)
		}
		r := s.Requests()
		return r[len(r)-1].Usage
	}
	first := `{"role":"user","content":[` + text("question 0", true) + `]}`
	u1 := req("m", first)
	if u1.CacheReadInputTokens != 0 || u1.CacheCreationInputTokens == 0 || u1.InputTokens != 0 {
		t.Errorf("first request: %+v", u1)
	}
	// The same system prompt and first question, more after it, marked at
	// the end: the first request's whole prefix is read (20 blocks back).
	short := history(3, false) + `,{"role":"user","content":[` + text("next", true) + `]}`
	u2 := req("m", short)
	if u2.CacheReadInputTokens != u1.CacheCreationInputTokens || u2.CacheCreationInputTokens == 0 {
		t.Errorf("a short continuation: %+v after %+v", u2, u1)
	}
	// 15 exchanges later (30 blocks), the end's breakpoint alone finds only
	// the system prompt; the first question's own breakpoint finds it all.
	long := history(15, false) + `,{"role":"user","content":[` + text("later", true) + `]}`
	u3 := req("m", long)
	sysOnly := u3.CacheReadInputTokens
	if sysOnly == 0 || sysOnly >= u1.CacheCreationInputTokens {
		t.Errorf("beyond the lookback: %+v (the system prompt only)", u3)
	}
	long = history(15, true) + `,{"role":"user","content":[` + text("later still", true) + `]}`
	if u4 := req("m", long); u4.CacheReadInputTokens != u1.CacheCreationInputTokens {
		t.Errorf("with the first question marked: %+v, want %d read", u4, u1.CacheCreationInputTokens)
	}
	// Another model has a cache of its own.
	if u5 := req("other", first); u5.CacheReadInputTokens != 0 {
		t.Errorf("another model read %+v", u5)
	}
}

// TestCompleteAndModels: a request that does not stream gets a message;
// GET /v1/models lists the models.
func TestCompleteAndModels(t *testing.T) {
	s := New(t, WithModels("claude-x", "claude-y"))
	s.Enqueue(Reply{Chunks: []string{"A ", "title"}, Delay: 10 * time.Millisecond})
	status, _, body := post(t, s, "", `{"model":"m","max_tokens":10,"system":"be brief","messages":[{"role":"user","content":"hi"}]}`)
	var msg struct {
		Type, Role, Model, StopReason string
		Content                       []Block
		Usage                         Usage
	}
	json.Unmarshal([]byte(body), &msg)
	if status != 200 || msg.Content[0].Text != "A title" || !strings.Contains(body, `"stop_reason":"end_turn"`) || msg.Usage.InputTokens == 0 || s.Requests()[0].SystemPrompt() != "be brief" {
		t.Errorf("%d %s", status, body)
	}
	req, _ := http.NewRequest("GET", s.URL+"/v1/models", nil)
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `"id":"claude-y"`) || !strings.Contains(string(b), `"has_more":false`) {
		t.Errorf("models: %s", b)
	}
}
