package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/chat/openaitest"
	"github.com/ctxls/ctxls/internal/human"
	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/session"
)

// TestBinaryRelevantFile: a relevant file holding NUL bytes (binary, or a
// sparse file's holes), on disk or in the editor, is named with its size
// in the prompt, as read_file names it, and its bytes are not sent; a text
// file beside it is sent as before.
func TestBinaryRelevantFile(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	root := t.TempDir()
	bin := filepath.Join(root, "image.bin")
	if err := os.WriteFile(bin, append([]byte("PNG\x00\x00\x00IHDR"), bytes.Repeat([]byte{0}, 1000)...), 0o644); err != nil {
		t.Fatal(err)
	}
	sparse := filepath.Join(root, "sparse.db")
	f, err := os.Create(sparse)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 20); err != nil { // a hole: reads as NULs
		t.Fatal(err)
	}
	f.Close()
	open := filepath.Join(root, "open.txt")
	text := filepath.Join(root, "a.go")
	os.WriteFile(text, []byte("package a\n"), 0o644)
	e, st, _ := newEngine(t, buffers{open: "unsaved\x00text"})
	ctx := context.Background()
	s, _ := st.Create(ctx, "named")
	st.UpdateContext(ctx, s.ID, "files", []string{bin, sparse, text}, "", session.AddedByUser, nil)
	if _, err := e.Run(ctx, TurnSpec{SessionID: s.ID, Message: "what is in them?", Files: []string{open}, Roots: []string{root}, Provider: provider(t, fake, 8000)}, &recorder{}); err != nil {
		t.Fatal(err)
	}
	req := fake.LastStreamed()
	if bytes.Contains(req.Body, []byte(`\u0000`)) || bytes.IndexByte(req.Body, 0) >= 0 {
		t.Errorf("NUL bytes were sent to the model:\n%s", req.TurnContext())
	}
	block := req.TurnContext()
	for _, want := range []string{
		fmt.Sprintf("%s: binary file, %d bytes (it holds NUL bytes); not shown", bin, 1010),
		fmt.Sprintf("%s: binary file, %d bytes (it holds NUL bytes); not shown", sparse, 1<<20),
		fmt.Sprintf("%s: binary file, %d bytes (it holds NUL bytes); not shown", open, len("unsaved\x00text")),
		"package a",
	} {
		if !strings.Contains(block, want) {
			t.Errorf("the turn's block lacks %q:\n%s", want, block)
		}
	}
}

// TestOverWindowInput: a turn whose input cannot fit the model's window,
// whatever is trimmed (the question alone over it; or the question beside
// the system prompt), fails at once with an error that names what is too
// big and by how much, of kind "too large", and the provider is never
// asked (it would answer 400, or bill it). A question over the window
// alone is not stored either. An ordinary question in the same window
// goes through.
func TestOverWindowInput(t *testing.T) {
	t.Parallel()
	fake := openaitest.New(t)
	e, st, _ := newEngine(t, nil)
	ctx := context.Background()
	p := provider(t, fake, 2000) // 1,900 tokens of input after the answer's 100
	counter := prompts.TokenizerFor(p.Model)

	s, _ := st.Create(ctx, "named")
	huge := strings.Repeat("pasted log line ", 2000)
	res, err := e.Run(ctx, TurnSpec{SessionID: s.ID, Message: huge, Provider: p}, &recorder{})
	want := fmt.Sprintf("the question is %s tokens; the model's window is 2,000 tokens, 100 of them kept for the answer", human.Thousands(counter.Count(huge)))
	if err == nil || !errors.Is(err, session.ErrTooLarge) || !strings.Contains(err.Error(), want) {
		t.Errorf("a question over the window: %+v %v, want an error of kind too large saying %q", res, err, want)
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("%d requests reached the provider", n)
	}
	if msgs, _ := st.Messages(ctx, s.ID); len(msgs) != 0 {
		t.Errorf("the question over the window was stored: %d messages", len(msgs))
	}

	// Under the window alone, over it with the system prompt beside it.
	s2, _ := st.Create(ctx, "named")
	big := strings.Repeat("word ", 1890)
	_, err = e.Run(ctx, TurnSpec{SessionID: s2.ID, Message: big, Provider: p}, &recorder{})
	if err == nil || !errors.Is(err, session.ErrTooLarge) || !strings.Contains(err.Error(), "the input is") ||
		!strings.Contains(err.Error(), "the question "+human.Thousands(counter.Count(big))) || !strings.Contains(err.Error(), "over the model's window of 1,900 tokens") {
		t.Errorf("a question that fits alone, not beside the system prompt: %v", err)
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("%d requests reached the provider", n)
	}
	// Stored by then, the question has its answer say why there is none.
	if msgs, _ := st.Messages(ctx, s2.ID); len(msgs) != 2 || msgs[1].Status != session.StatusError || msgs[1].Content != "Error: "+err.Error() {
		t.Errorf("stored %+v", msgs)
	}

	fake.Enqueue(openaitest.Reply{Chunks: []string{"fine"}})
	res, err = e.Run(ctx, TurnSpec{SessionID: s.ID, Message: "an ordinary question", Provider: p}, &recorder{})
	if err != nil || res.Text != "fine" || len(fake.Requests()) != 1 {
		t.Errorf("an ordinary question: %+v %v", res, err)
	}
}

// raceEnabled is set by race_test.go.
var raceEnabled bool

// dumpBox is a toolbox offering dump, whose output is as many numbered
// lines as its arguments' "lines" ask for.
type dumpBox struct{}

var dumpDefs = []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
	Name: "dump", Description: "Prints lines.", Parameters: json.RawMessage(`{"type":"object","properties":{"lines":{"type":"integer"}}}`),
}}}

func (dumpBox) Tools(context.Context, *ToolTurn) []openai.Tool { return dumpDefs }
func (dumpBox) Describe(name string) (string, string, ToolInfo, bool) {
	return "", name, ToolInfo{ReadOnly: true}, name == "dump"
}
func (dumpBox) Call(_ context.Context, _ *ToolTurn, call ToolCall) ToolResult {
	var in struct{ Lines int }
	json.Unmarshal([]byte(call.Arguments), &in)
	return ToolResult{Output: dumpOutput(in.Lines)}
}
func (dumpBox) Stored(_, args string) string { return args }
func (dumpBox) Edited() []string             { return nil }

// padBox is dumpBox storing a call's "pad" as a note of its size, as
// package tool stores write_file's content.
type padBox struct{ dumpBox }

func (padBox) Stored(_, args string) string {
	var in map[string]any
	if json.Unmarshal([]byte(args), &in) != nil {
		return args
	}
	if pad, ok := in["pad"].(string); ok {
		in["pad"] = fmt.Sprintf("[%d bytes]", len(pad))
	}
	b, _ := json.Marshal(in)
	return string(b)
}

func dumpOutput(lines int) string {
	var b strings.Builder
	for i := range lines {
		fmt.Fprintf(&b, "output line %04d of the dump, with a few words more\n", i+1)
	}
	return b.String()
}

// sentTokens is what a request the fake received costs, counted as the
// engine counts its input: each message, and the tools' definitions.
func sentTokens(req openaitest.Request, counter prompts.Counter) int {
	n := toolTokens(req.Parsed.Tools, counter)
	for _, m := range req.Parsed.Messages {
		n += messageCost(m, counter)
	}
	return n
}

// TestToolResultsOverWindow (issue 37): tool results that add up past the
// model's window over several rounds of one turn are cut in what is sent,
// the oldest first, each with a note saying how much was left out, so
// every request fits the window; what is stored stays whole. When even
// cut to notes they cannot fit (the calls' own arguments fill the window),
// the turn ends with an error of kind "too large" that says so, before
// the provider is asked an over-window request.
func TestToolResultsOverWindow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := openaitest.New(t, openaitest.WithTitles(openaitest.Reply{Chunks: []string{"Title"}}))
	e, st, _ := newEngine(t, nil)
	p := provider(t, fake, 6000) // 5,900 tokens of input
	counter := prompts.TokenizerFor(p.Model)
	window := p.ContextWindow - p.MaxOutputTokens
	if n := counter.Count(dumpOutput(150)); n < 1500 || n > 2500 {
		t.Fatalf("a result of 150 lines is %d tokens; the test wants about 2,000", n)
	}

	// Four rounds of 2,000 tokens each: the third is over the window.
	s, _ := st.Create(ctx, "named")
	for i := range 4 {
		fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: fmt.Sprint("d", i), Name: "dump", Arguments: `{"lines":150}`}}})
	}
	fake.Enqueue(openaitest.Reply{Chunks: []string{"Read them all."}})
	res, err := e.Run(ctx, TurnSpec{SessionID: s.ID, Message: "dump four times", Provider: p, Tools: dumpBox{}}, &recorder{})
	if err != nil || res.Text != "Read them all." {
		t.Fatalf("the turn: %+v %v", res, err)
	}
	reqs := fake.Streamed()
	if len(reqs) != 5 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, r := range reqs {
		if n := sentTokens(r, counter); n > window {
			t.Errorf("request %d is %d tokens, over the window of %d", i+1, n, window)
		}
	}
	last := reqs[4].ToolResults()
	full := dumpOutput(150)
	if !strings.HasPrefix(last["d0"], "output line 0001") || !strings.Contains(last["d0"], "characters left out: the results of this turn's tools are over the model's context window]") {
		t.Errorf("the oldest result, as sent last: %q", last["d0"][max(0, len(last["d0"])-300):])
	}
	if last["d3"] != full {
		t.Errorf("the newest result was cut while older ones could be: %d of %d bytes", len(last["d3"]), len(full))
	}
	msgs, _ := st.Messages(ctx, s.ID)
	var stored int
	for _, m := range msgs {
		if m.Role == session.RoleTool {
			stored++
			if m.Content != full {
				t.Errorf("a stored result is %d bytes, not the %d the tool gave", len(m.Content), len(full))
			}
		}
	}
	if stored != 4 {
		t.Errorf("%d results stored", stored)
	}

	// One result over the window alone: its head is sent, with the note.
	s3, _ := st.Create(ctx, "named")
	fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "h", Name: "dump", Arguments: `{"lines":1000}`}}}, openaitest.Reply{Chunks: []string{"Saw its start."}})
	if _, err := e.Run(ctx, TurnSpec{SessionID: s3.ID, Message: "dump a lot", Provider: p, Tools: dumpBox{}}, &recorder{}); err != nil {
		t.Fatal(err)
	}
	r := fake.LastStreamed()
	got := r.ToolResults()["h"]
	if n := sentTokens(r, counter); n > window || !strings.HasPrefix(got, "output line 0001") || !strings.HasSuffix(got, "characters left out: the results of this turn's tools are over the model's context window]") || len(got) < 10000 {
		t.Errorf("a result over the window alone: %d tokens sent, %d bytes of it: ...%q", n, len(got), got[max(0, len(got)-200):])
	}

	// Calls with megabytes of arguments stored as a note of their size (as
	// write_file's content is): the calls are sent as stored, at once (a
	// long run of one character would take seconds to count).
	s4, _ := st.Create(ctx, "named")
	huge := strings.Repeat("f", 3<<20)
	fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "w", Name: "dump", Arguments: `{"lines":3,"pad":"` + huge + `"}`}}}, openaitest.Reply{Chunks: []string{"Wrote it."}})
	begun := time.Now()
	if _, err := e.Run(ctx, TurnSpec{SessionID: s4.ID, Message: "write a lot", Provider: p, Tools: padBox{}}, &recorder{}); err != nil {
		t.Fatal(err)
	}
	r = fake.LastStreamed()
	if n := sentTokens(r, counter); n > window || !strings.Contains(string(r.Body), `"{\"lines\":3,\"pad\":\"[3145728 bytes]\"}"`) || r.ToolResults()["w"] != dumpOutput(3) {
		t.Errorf("a call of 3 MiB: %d tokens sent: %.300s", n, r.Body[max(0, len(r.Body)-600):])
	}
	// Counting the call would take about 4 s more, far more under the race
	// detector, which alone slows the turn (other tests run beside it).
	if took, most := time.Since(begun), map[bool]time.Duration{false: 3 * time.Second, true: 20 * time.Second}[raceEnabled]; took > most {
		t.Errorf("the turn took %s", took)
	}

	// Calls whose arguments alone fill the window: no cut makes room.
	s2, _ := st.Create(ctx, "named")
	pad := strings.Repeat("x y ", 900) // about 1,800 tokens of arguments a call
	before := len(fake.Streamed())
	for i := range 4 {
		fake.Enqueue(openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: fmt.Sprint("p", i), Name: "dump", Arguments: `{"lines":10,"pad":"` + pad + `"}`}}})
	}
	fake.Enqueue(openaitest.Reply{Chunks: []string{"never"}})
	res, err = e.Run(ctx, TurnSpec{SessionID: s2.ID, Message: "pad the calls", Provider: p, Tools: dumpBox{}}, &recorder{})
	if err == nil || !errors.Is(err, session.ErrTooLarge) || !strings.Contains(err.Error(), "this turn's tool calls") || !strings.Contains(err.Error(), "even with its tools' results cut") {
		t.Errorf("calls over the window: %v", err)
	}
	if res == nil || res.FinishReason != FinishError {
		t.Errorf("the result: %+v", res)
	}
	for i, r := range fake.Streamed()[before:] {
		if n := sentTokens(r, counter); n > window {
			t.Errorf("request %d is %d tokens, over the window of %d", i+1, n, window)
		}
	}
	msgs, _ = st.Messages(ctx, s2.ID)
	if m := msgs[len(msgs)-1]; m.Role != session.RoleAssistant || m.Status != session.StatusError || !strings.Contains(m.Content, "too large") {
		t.Errorf("the last stored message: %+v", m)
	}
}

// TestCutResult: a cut result costs at most its target, keeps the start of
// the output whole to a character (never half a UTF-8 sequence), and its
// note counts the characters left out; a target below the note is the
// note alone.
func TestCutResult(t *testing.T) {
	t.Parallel()
	c := prompts.TokenizerFor("test-model")
	full := strings.Repeat("héllo wörld ✓ ", 2000) // 28,000 characters
	for _, target := range []int{3000, 500, 60} {
		text, cost := cutResult(full, target, c)
		head, note, ok := strings.Cut(text, "\n[output cut: ")
		kept := utf8.RuneCountInString(head)
		want := fmt.Sprintf("%s of its 28,000 characters left out", human.Thousands(28000-kept))
		if !ok || cost > target || cost != c.Count(text)+perMessage || !utf8.ValidString(text) || !strings.HasPrefix(full, head) || !strings.HasPrefix(note, want) {
			t.Errorf("target %d: cost %d, kept %d characters, note %q", target, cost, kept, note)
		}
	}
	if text, _ := cutResult(full, 10, c); !strings.HasPrefix(text, "[output cut: 28,000 of its 28,000 characters left out") {
		t.Errorf("the note alone: %q", text)
	}
	if text, cost := cutResult("short", 100, c); text != "short" || cost != c.Count("short")+perMessage {
		t.Errorf("a result that fits: %q %d", text, cost)
	}
}
