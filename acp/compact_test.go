package acp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/acp/acptest"
	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/lsp/lsptest"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/session/backend"
)

// TestCompactOverACP (the built binary): a long session resumed over ACP is
// compacted by its next prompt (usage_update with the context's size and
// what the input takes now), and /compact summarises again on demand,
// folding the first summary in; the originals stay.
func TestCompactOverACP(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{"## Goal\nShip the importer."}}))
	dataDir, cwd := t.TempDir(), t.TempDir()
	st, err := backend.Open(context.Background(), dataDir, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sess, _ := st.Create(ctx, "Importer design")
	ms := make([]*session.Message, 2000)
	for i := range ms {
		m := &session.Message{SessionID: sess.ID, Role: session.RoleUser, Content: fmt.Sprintf("question %d: how should batch %d resume?", i/2, i/2)}
		if i%2 == 1 {
			m.Role, m.Content = session.RoleAssistant, fmt.Sprintf("answer %d: checkpoint batch %d and retry it", i/2, i/2)
		}
		ms[i] = m
	}
	if err := session.AppendAll(ctx, st, ms); err != nil {
		t.Fatal(err)
	}
	st.Close()

	c := acptest.Start(t, lsptest.BuildBinary(t), []string{"acp", "--data-dir", dataDir, "--base-url", fake.URL, "--model", "test-model"},
		[]string{"OPENAI_API_KEY=sk-test-not-real", "CTXLS_MODEL=", "OPENAI_BASE_URL="})
	if err := c.Call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{},
		"_meta": map[string]any{"ctxls": map[string]any{"provider": map[string]any{"contextWindow": 8000, "maxOutputTokens": 500}, "compactAt": "70%"}}}, nil); err != nil {
		t.Fatal(err)
	}
	a := &agent{Client: c, t: t, fake: fake, dataDir: dataDir, cwd: cwd}
	if err := a.Call("session/resume", map[string]any{"sessionId": sess.ID, "cwd": cwd}, nil); err != nil {
		t.Fatal(err)
	}
	if res, err := a.prompt(sess.ID, text("What is next?")); err != nil || res.StopReason != "end_turn" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	usage := func(from int) (size, used int) {
		t.Helper()
		u := a.WaitUpdateFrom(from, "usage_update", func(u acptest.Update) bool { return u.SessionID == sess.ID && u.Kind == "usage_update" })
		var v struct{ Size, Used int }
		json.Unmarshal(u.Raw, &v)
		return v.Size, v.Used
	}
	if size, used := usage(0); size != 8000 || used <= 0 || used > 7500 {
		t.Errorf("usage_update after the compaction: size %d, used %d", size, used)
	}
	reqs := fake.Requests()
	turnReq := reqs[len(reqs)-1].Parsed.Messages
	if len(reqs) < 2 || !strings.HasPrefix(turnReq[1].Content, "[earlier turns summarised: the first ") {
		t.Fatalf("the turn's input after %d requests: %.200s", len(reqs), turnReq[1].Content)
	}

	n := len(a.Updates(sess.ID))
	before := len(fake.Requests())
	fake.Enqueue(openaitest.Reply{Chunks: []string{"## Goal\nFolded."}})
	if res, err := a.prompt(sess.ID, text("/compact")); err != nil || res.StopReason != "end_turn" {
		t.Fatalf("/compact: %+v %v", res, err)
	}
	out := a.AgentText(sess.ID)
	if !strings.Contains(out, "[earlier turns summarised: the first ") || !strings.Contains(out, "## Goal\nFolded.") {
		t.Errorf("/compact answered %q", out[max(0, len(out)-300):])
	}
	reqs = fake.Requests()
	if len(reqs) != before+1 || !strings.Contains(reqs[before].Parsed.Messages[1].Content, "<previous-summary>\n## Goal\nShip the importer.") {
		t.Errorf("/compact does not fold the first summary in: %d requests", len(reqs)-before)
	}
	if size, used := usage(n); size != 8000 || used <= 0 {
		t.Errorf("usage_update after /compact: %d %d", size, used)
	}

	st, err = backend.Open(context.Background(), dataDir, "")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	msgs, _ := st.Messages(ctx, sess.ID)
	summaries := 0
	for _, m := range msgs {
		if m.IsSummary() {
			summaries++
		}
	}
	if len(msgs) != 2000+3+1 || summaries != 2 {
		t.Errorf("%d messages, %d summaries", len(msgs), summaries)
	}
}
