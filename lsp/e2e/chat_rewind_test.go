package e2e_test

import (
	"strings"
	"testing"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
)

// TestChatRewind: ctxls/chat with rewind asks a question again — the same
// text (retry a failed answer, regenerate) or another (edit and resend) —
// in place of the old one and what followed it, in the store and in what
// the model is sent; a rewind to an answer is refused and changes nothing.
func TestChatRewind(t *testing.T) {
	parallel(t, waitTests)
	fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Rewound"}}))
	s, _ := startChat(t, fake)
	fake.Enqueue(
		openaitest.Reply{Chunks: []string{"first answer"}},
		openaitest.Reply{Status: 400, ErrorMessage: "bad request"}, // the second question's answer fails
	)
	var res api.ChatResult
	if err := s.Call("ctxls/chat", map[string]any{"message": "first question"}, &res); err != nil || res.Text != "first answer" {
		t.Fatalf("first turn: %+v %v", res, err)
	}
	id := res.SessionID
	if err := s.Call("ctxls/chat", map[string]any{"sessionId": id, "message": "second question"}, &res); err != nil || res.FinishReason != "error" {
		t.Fatalf("second turn: %+v %v", res, err)
	}
	show := func() (out []string, ids map[string]int64) {
		t.Helper()
		var r api.ShowResult
		s.MustCommand(api.SessionShow, map[string]any{"sessionId": id}, &r)
		ids = map[string]int64{}
		for _, m := range r.Messages {
			out = append(out, string(m.Role)+":"+m.Content+":"+string(m.Status))
			ids[m.Content] = m.ID
		}
		return out, ids
	}
	before, ids := show()
	if len(before) != 4 {
		t.Fatalf("before: %q", before)
	}

	// Refused: an answer is not a question; nothing changes.
	err := s.Call("ctxls/chat", map[string]any{"sessionId": id, "rewind": ids["first answer"]}, &res)
	if err == nil || !strings.Contains(err.Error(), "not a question") {
		t.Fatalf("rewind to an answer: %v", err)
	}
	if err := s.Call("ctxls/chat", map[string]any{"sessionId": id, "rewind": 1 << 40}, &res); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("rewind to no message: %v", err)
	}
	if after, _ := show(); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Fatalf("a refused rewind changed the session:\n%q", after)
	}

	// Retry: the failed answer's question, asked again as it was.
	fake.Enqueue(openaitest.Reply{Chunks: []string{"second answer"}})
	if err := s.Call("ctxls/chat", map[string]any{"sessionId": id, "rewind": ids["second question"]}, &res); err != nil || res.Text != "second answer" {
		t.Fatalf("retry: %+v %v", res, err)
	}
	got, ids := show()
	want := []string{"user:first question:complete", "assistant:first answer:complete", "user:second question:complete", "assistant:second answer:complete"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after the retry:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	last := fake.Streamed()[len(fake.Streamed())-1].Parsed.Messages
	var users []string
	for _, m := range last {
		if m.Role == "user" {
			users = append(users, m.Content)
		}
	}
	if n := strings.Count(strings.Join(users, "\n"), "second question"); n != 1 {
		t.Fatalf("the retried question went to the model %d times: %q", n, users)
	}

	// Edit and resend: another text in the question's place.
	fake.Enqueue(openaitest.Reply{Chunks: []string{"edited answer"}})
	if err := s.Call("ctxls/chat", map[string]any{"sessionId": id, "rewind": ids["second question"], "message": "second question, put better"}, &res); err != nil || res.Text != "edited answer" {
		t.Fatalf("edit and resend: %+v %v", res, err)
	}
	got, _ = show()
	want = []string{"user:first question:complete", "assistant:first answer:complete", "user:second question, put better:complete", "assistant:edited answer:complete"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("after the edit:\n%s", strings.Join(got, "\n"))
	}
	sent := fake.Streamed()[len(fake.Streamed())-1]
	body := string(sent.Body)
	if strings.Contains(body, "second answer") || strings.Contains(body, `"second question"`) {
		t.Fatalf("the model was sent the removed turn: %s", body)
	}
	if !strings.Contains(body, "first answer") {
		t.Fatalf("the model was not sent the turn before: %s", body)
	}
}
