package cli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/chat/openaitest"
)

// TestChatAgain: "ctxls chat --again" asks the session's last question again
// in place of its answer (a failed one here), and with a message asks that
// in its place; without a session to continue it is refused.
func TestChatAgain(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Again"}}))
	dir := t.TempDir()
	env := []string{"CTXLS_DATA_DIR=" + dir, "OPENAI_BASE_URL=" + fake.URL, "CTXLS_MODEL=test-model", "OPENAI_API_KEY="}
	fake.Enqueue(openaitest.Reply{Chunks: []string{"first answer"}}, openaitest.Reply{Status: 400, ErrorMessage: "bad request"})
	if out, errOut, code := run(t, env, "chat", "first question"); code != 0 || out != "first answer\n" {
		t.Fatalf("first turn: %d %q %q", code, out, errOut)
	}
	if _, _, code := run(t, env, "chat", "--continue", "second question"); code == 0 {
		t.Fatal("the failing turn succeeded")
	}
	if _, errOut, code := run(t, env, "chat", "--again"); code == 0 || !strings.Contains(errOut, "--session or --continue") {
		t.Fatalf("--again without a session: %d %q", code, errOut)
	}
	out, _, _ := run(t, []string{"CTXLS_DATA_DIR=" + dir}, "sessions", "list", "--json")
	var list api.SessionListResult
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Sessions) != 1 {
		t.Fatalf("sessions list --json: %v %s", err, out)
	}
	show := func() string {
		t.Helper()
		out, _, _ := run(t, []string{"CTXLS_DATA_DIR=" + dir}, "sessions", "show", list.Sessions[0].ID)
		return out
	}
	if s := show(); !strings.Contains(s, "Error: ") {
		t.Fatalf("the failed answer is not stored:\n%s", s)
	}

	fake.Enqueue(openaitest.Reply{Chunks: []string{"second answer"}})
	if out, errOut, code := run(t, env, "chat", "--continue", "--again"); code != 0 || out != "second answer\n" {
		t.Fatalf("--again: %d %q %q", code, out, errOut)
	}
	s := show()
	if strings.Count(s, "second question") != 1 || strings.Contains(s, "Error: ") || !strings.Contains(s, "second answer") {
		t.Fatalf("after --again:\n%s", s)
	}

	fake.Enqueue(openaitest.Reply{Chunks: []string{"edited answer"}})
	if out, errOut, code := run(t, env, "chat", "--continue", "--again", "second question, edited"); code != 0 || out != "edited answer\n" {
		t.Fatalf("--again MESSAGE: %d %q %q", code, out, errOut)
	}
	s = show()
	if strings.Contains(s, "second answer") || !strings.Contains(s, "second question, edited") || !strings.Contains(s, "first answer") {
		t.Fatalf("after --again MESSAGE:\n%s", s)
	}
	sent := fake.Streamed()[len(fake.Streamed())-1].Body
	if strings.Contains(string(sent), "second answer") {
		t.Fatalf("the replaced answer went to the model: %s", sent)
	}
}
