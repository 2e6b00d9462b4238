package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/session"
)

const fakeSummary = "## Goal\nShip the resumable importer.\n\n## Next steps\n1. Write the checkpoints migration."

// fillSession stores n messages in whole turns (a question, an answer, and
// in every fifth turn a tool call with its result) straight through the
// store, and returns them as stored.
func fillSession(t *testing.T, st session.Store, id string, n, from int) []session.Message {
	t.Helper()
	var out []session.Message
	add := func(m session.Message) {
		m.SessionID = id
		out = append(out, m)
	}
	for i := from; len(out) < n; i++ {
		add(session.Message{Role: session.RoleUser, Content: fmt.Sprintf("question %d: how should batch %d of the importer resume after a crash?", i, i)})
		if len(out) == n {
			break
		}
		if i%5 == 0 && n-len(out) >= 3 {
			calls, _ := json.Marshal([]openai.ToolCall{{ID: fmt.Sprintf("call-%d", i), Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: "read_file", Arguments: fmt.Sprintf(`{"path":"/src/batch%d.go"}`, i)}}})
			add(session.Message{Role: session.RoleAssistant, ToolCalls: calls})
			add(session.Message{Role: session.RoleTool, ToolCallID: fmt.Sprintf("call-%d", i), Content: fmt.Sprintf("package importer // batch %d", i)})
			if len(out) == n {
				break
			}
		}
		add(session.Message{Role: session.RoleAssistant, Content: fmt.Sprintf("answer %d: keep a checkpoint row for batch %d and retry it three times", i, i)})
	}
	ptrs := make([]*session.Message, len(out))
	for i := range out {
		ptrs[i] = &out[i]
	}
	if err := session.AppendAll(context.Background(), st, ptrs); err != nil {
		t.Fatal(err)
	}
	return out
}

// inputTokens counts a request's messages as the engine does.
func inputTokens(msgs []openai.ChatCompletionMessage) int {
	counter := prompts.TokenizerFor("test-model")
	n := 0
	for _, m := range msgs {
		n += messageCost(m, counter)
	}
	return n
}

// checkWholeTurns fails when the history part of a turn's input (after the
// system prompt and the summary) does not start with a question, or has a
// tool result without its call.
func checkWholeTurns(t *testing.T, msgs []openai.ChatCompletionMessage) {
	t.Helper()
	called := map[string]bool{}
	first := true
	for _, m := range msgs {
		if m.Role == openai.ChatMessageRoleSystem {
			continue
		}
		if first && m.Role != openai.ChatMessageRoleUser {
			t.Errorf("the history starts with a %s message, not a question", m.Role)
		}
		first = false
		for _, c := range m.ToolCalls {
			called[c.ID] = true
		}
		if m.Role == openai.ChatMessageRoleTool && !called[m.ToolCallID] {
			t.Errorf("tool result %s without its call", m.ToolCallID)
		}
	}
}

// TestCompaction2000Messages: a 2,000-message session far over its window
// is compacted by the next turn: the model summarises the older turns (in
// several requests, each folding the one before), the summary is stored
// covering them, and the turn's input is the system prompt, the summary and
// the recent whole turns within the budget. Every original stays. A second
// compaction folds the first summary in.
func TestCompaction2000Messages(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{fakeSummary}}))
	e, st, _ := newEngine(t, nil)
	ctx := context.Background()
	s, _ := st.Create(ctx, "")
	orig := fillSession(t, st, s.ID, 2000, 0)
	p := provider(t, fake, 16000)
	budget := p.ContextWindow - p.MaxOutputTokens

	rec := &recorder{}
	fake.Enqueue() // every request gets the default reply
	res, err := e.Run(ctx, TurnSpec{SessionID: s.ID, Message: "What is the next step?", Provider: p}, rec)
	if err != nil || res.FinishReason != FinishStop {
		t.Fatalf("turn: %+v %v", res, err)
	}
	// The summary requests, then the turn's; the session's title, asked in
	// the background once the turn ended, may come after it.
	reqs := slices.DeleteFunc(fake.Requests(), func(r openaitest.Request) bool { return r.SystemPrompt() == prompts.TitleSystem() })
	if len(reqs) < 3 {
		t.Fatalf("%d requests: want several summary requests and the turn's", len(reqs))
	}
	sys := prompts.SummarySystem(summaryCap(budget) * 3 / 4)
	for i, r := range reqs[:len(reqs)-1] {
		if r.Parsed.Stream || r.SystemPrompt() != sys {
			t.Fatalf("request %d is not a summary request: %.200s", i, r.SystemPrompt())
		}
		in := r.Parsed.Messages[1].Content
		if (i > 0) != strings.Contains(in, "<previous-summary>\n"+fakeSummary) {
			t.Errorf("summary request %d folds the one before: %v", i, i > 0)
		}
		if n := inputTokens(r.Parsed.Messages); n > budget {
			t.Errorf("summary request %d takes %d tokens, over the budget %d", i, n, budget)
		}
	}
	if !strings.Contains(reqs[0].Parsed.Messages[1].Content, "[#"+fmt.Sprint(orig[0].ID)+" user]\nquestion 0:") {
		t.Errorf("the first summary request does not start at the first message: %.300s", reqs[0].Parsed.Messages[1].Content)
	}

	// The summary is stored after the turn's question, covering whole turns.
	msgs, _ := st.Messages(ctx, s.ID)
	if len(msgs) != 2003 {
		t.Fatalf("%d messages, want 2,000 + question + summary + answer", len(msgs))
	}
	for i, m := range orig {
		if msgs[i].ID != m.ID || msgs[i].Content != m.Content || msgs[i].Role != m.Role || msgs[i].IsSummary() {
			t.Fatalf("original %d changed: %+v", i, msgs[i])
		}
	}
	question, sum, answer := msgs[2000], msgs[2001], msgs[2002]
	if question.Role != session.RoleUser || !sum.IsSummary() || sum.Content != fakeSummary || answer.Role != session.RoleAssistant {
		t.Fatalf("after the originals: %+v / %+v / %+v", question, sum, answer)
	}
	if sum.SummaryOf.First != orig[0].ID || sum.SummaryOf.Last >= question.ID {
		t.Errorf("summary covers %+v", sum.SummaryOf)
	}
	var next session.Message
	for _, m := range orig {
		if m.ID > sum.SummaryOf.Last {
			next = m
			break
		}
	}
	if next.Role != session.RoleUser {
		t.Errorf("the turns kept start with a %s message (%d): the summary split a turn", next.Role, next.ID)
	}
	if len(rec.compacted) != 1 || rec.compacted[0].Summary.ID != sum.ID || rec.compacted[0].Tokens > budget || rec.compacted[0].Covered != int(sum.SummaryOf.Last-sum.SummaryOf.First+1) {
		t.Errorf("compacted events: %+v", rec.compacted)
	}
	// Told in questions: the summary's, counted by the store.
	if want := "summarising " + session.FirstQuestions(sum.SummaryOf.Questions) + " to fit the context window"; sum.SummaryOf.Questions < 2 || len(rec.activity) == 0 || rec.activity[0] != want {
		t.Errorf("activity: %q, want %q first", rec.activity, want)
	}

	// The turn's input: system prompt, summary, recent whole turns, question.
	turnReq := reqs[len(reqs)-1].Parsed.Messages
	if sum.SummaryOf.Covered != rec.compacted[0].Covered {
		t.Errorf("the summary covers %d messages, the event says %d", sum.SummaryOf.Covered, rec.compacted[0].Covered)
	}
	marker := session.SummaryMarker(*sum.SummaryOf)
	if turnReq[1].Role != openai.ChatMessageRoleSystem || !strings.HasPrefix(turnReq[1].Content, marker) || !strings.Contains(turnReq[1].Content, fakeSummary) {
		t.Fatalf("the second message is not the summary: %.300s", turnReq[1].Content)
	}
	if turnReq[2].Content != next.Content || turnReq[len(turnReq)-1].Content != "What is the next step?" {
		t.Errorf("the recent turns start with %q and end with %q", turnReq[2].Content, turnReq[len(turnReq)-1].Content)
	}
	if strings.Contains(turnReq[0].Content, "earlier messages not shown") {
		t.Error("the compacted input still drops turns")
	}
	checkWholeTurns(t, turnReq)
	if n := inputTokens(turnReq); n > budget {
		t.Errorf("the turn's input takes %d tokens, over the budget %d", n, budget)
	}

	// Export keeps every original and marks where the model's view starts.
	_, md, err := st.Export(ctx, s.ID, "markdown")
	questions := 1 // the turn's
	for _, m := range orig {
		if m.Role == session.RoleUser {
			questions++
		}
	}
	if err != nil || strings.Count(md, "\n## user ·") != questions || !strings.Contains(md, marker) {
		t.Errorf("export: %d questions, marker %v, %v", strings.Count(md, "\n## user ·"), strings.Contains(md, marker), err)
	}

	// The next turn reuses the summary: no new summary request.
	before := len(fake.Requests())
	if _, err := e.Run(ctx, TurnSpec{SessionID: s.ID, Message: "And then?", Provider: p}, &recorder{}); err != nil {
		t.Fatal(err)
	}
	reqs = fake.Requests()
	if len(reqs) != before+1 || !strings.HasPrefix(reqs[before].Parsed.Messages[1].Content, marker) {
		t.Fatalf("the turn after: %d new requests", len(reqs)-before)
	}

	// A second compaction folds the first summary in.
	fillSession(t, st, s.ID, 600, 5000)
	rec2 := &recorder{}
	before = len(fake.Requests())
	fake.Enqueue(openaitest.Reply{Chunks: []string{"## Goal\nSecond summary."}})
	if _, err := e.Run(ctx, TurnSpec{SessionID: s.ID, Message: "Where are we?", Provider: p}, rec2); err != nil {
		t.Fatal(err)
	}
	reqs = fake.Requests()
	if !strings.Contains(reqs[before].Parsed.Messages[1].Content, "<previous-summary>\n"+fakeSummary+"\n</previous-summary>") {
		t.Errorf("the second compaction does not fold the first summary in: %.300s", reqs[before].Parsed.Messages[1].Content)
	}
	if len(rec2.compacted) != 1 {
		t.Fatalf("second compaction: %+v", rec2.compacted)
	}
	sum2 := rec2.compacted[0].Summary
	if sum2.SummaryOf.First != sum.SummaryOf.First || sum2.SummaryOf.Last <= sum.SummaryOf.Last {
		t.Errorf("the second summary covers %+v, the first %+v", sum2.SummaryOf, sum.SummaryOf)
	}
	last := reqs[len(reqs)-1].Parsed.Messages
	if strings.Count(fmt.Sprint(last), "[earlier turns summarised:") != 1 || !strings.Contains(last[1].Content, "[earlier turns summarised: the first "+fmt.Sprint(sum2.SummaryOf.Covered)+" messages]") {
		t.Errorf("the input after the second compaction: %.300s", last[1].Content)
	}
	checkWholeTurns(t, last)
	if n := inputTokens(last); n > budget {
		t.Errorf("the input takes %d tokens, over the budget %d", n, budget)
	}
	msgs, _ = st.Messages(ctx, s.ID)
	if len(msgs) != 2000+3+2+600+3 {
		t.Errorf("%d messages after two compactions", len(msgs))
	}
}

// TestCompactionFallsBack: a summary request that fails (an error, or no
// answer within SummaryTimeout) stores nothing, says so, and the turn goes
// on with the oldest whole turns left out and the cut marked. With
// compactAt "off" no summary is asked for.
func TestCompactionFallsBack(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		reply *openaitest.Reply
		at    int
	}{
		{"error", &openaitest.Reply{Status: 500, ErrorMessage: "summariser down"}, 0},
		{"timeout", &openaitest.Reply{Chunks: []string{"late"}, Delay: 3 * time.Second}, 0},
		{"off", nil, CompactOff},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := openaitest.New(t)
			e, st, _ := newEngine(t, nil)
			e.SummaryTimeout = 300 * time.Millisecond
			ctx := context.Background()
			// Titled by the user: no background title request to race
			// with the turn's requests counted below.
			s, _ := st.Create(ctx, "fallback")
			fillSession(t, st, s.ID, 300, 0)
			if tc.reply != nil {
				fake.Enqueue(*tc.reply)
			}
			fake.Enqueue(openaitest.Reply{Chunks: []string{"answer"}})
			rec := &recorder{}
			p := provider(t, fake, 4000)
			res, err := e.Run(ctx, TurnSpec{SessionID: s.ID, Message: "next?", Provider: p, CompactAt: tc.at}, rec)
			if err != nil || res.Text != "answer" {
				t.Fatalf("turn: %+v %v", res, err)
			}
			reqs := fake.Requests()
			turnReq := reqs[len(reqs)-1].Parsed.Messages
			if want := map[bool]int{true: 1, false: 2}[tc.reply == nil]; len(reqs) != want {
				t.Errorf("%d requests, want %d", len(reqs), want)
			}
			if !strings.Contains(turnReq[0].Content, "earlier messages not shown]") || strings.Contains(fmt.Sprint(turnReq), "earlier turns summarised") {
				t.Errorf("the fallback input is not trimmed and marked: %.200s", turnReq[0].Content)
			}
			checkWholeTurns(t, turnReq)
			if n := inputTokens(turnReq); n > p.ContextWindow-p.MaxOutputTokens {
				t.Errorf("the input takes %d tokens", n)
			}
			msgs, _ := st.Messages(ctx, s.ID)
			for _, m := range msgs {
				if m.IsSummary() {
					t.Errorf("a summary was stored: %+v", m)
				}
			}
			if len(msgs) != 302 || len(rec.compacted) != 0 {
				t.Errorf("%d messages, %d compactions", len(msgs), len(rec.compacted))
			}
			failed := strings.Contains(strings.Join(rec.activity, "\n"), "summarising the earlier turns failed")
			if failed != (tc.reply != nil) {
				t.Errorf("activity: %q", rec.activity)
			}
		})
	}
}

// TestCompactOnDemand: Engine.Compact summarises every turn but the last,
// refuses when there is nothing to compact, and a busy session is refused.
func TestCompactOnDemand(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t, openaitest.WithDefault(openaitest.Reply{Chunks: []string{fakeSummary}}))
	e, st, _ := newEngine(t, nil)
	ctx := context.Background()
	s, _ := st.Create(ctx, "")
	p := provider(t, fake, 16000)
	if _, err := e.Compact(ctx, s.ID, p); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("an empty session: %v", err)
	}
	orig := fillSession(t, st, s.ID, 6, 5) // two turns: question, call, result, answer; question, answer
	c, err := e.Compact(ctx, s.ID, p)
	if err != nil {
		t.Fatal(err)
	}
	if *c.Summary.SummaryOf != (session.Span{First: orig[0].ID, Last: orig[3].ID, Covered: 4, Questions: 1}) || c.Covered != 4 || c.Tokens <= 0 {
		t.Errorf("compaction: %+v %+v", c, c.Summary.SummaryOf)
	}
	if _, err := e.Compact(ctx, s.ID, p); !errors.Is(err, ErrNothingToCompact) {
		t.Errorf("again with one turn after the summary: %v", err)
	}
	pv, err := e.Preview(ctx, TurnSpec{SessionID: s.ID, Message: "q", Provider: p})
	if err != nil || !strings.HasPrefix(pv.Messages[1].Content, "[earlier turns summarised: the first ") || pv.Messages[2].Content != orig[4].Content {
		t.Errorf("preview after a compaction: %+v %v", pv.Messages, err)
	}

	e.claim(s.ID, func(error) {})
	defer e.release(s.ID)
	if _, err := e.Compact(ctx, s.ID, p); !errors.Is(err, ErrBusy) {
		t.Errorf("while a turn runs: %v", err)
	}
}

func TestCompactLimit(t *testing.T) {
	t.Parallel()
	if compactLimit(0, 1000) != 800 || compactLimit(50, 1000) != 500 || compactLimit(CompactOff, 1000) != 0 {
		t.Error("compactLimit")
	}
}
