package chat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	if _, err := e.Run(ctx, Turn{SessionID: s.ID, Message: "what is in them?", Files: []string{open}, Roots: []string{root}, Provider: provider(t, fake, 8000)}, &recorder{}); err != nil {
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
	res, err := e.Run(ctx, Turn{SessionID: s.ID, Message: huge, Provider: p}, &recorder{})
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
	_, err = e.Run(ctx, Turn{SessionID: s2.ID, Message: big, Provider: p}, &recorder{})
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
	res, err = e.Run(ctx, Turn{SessionID: s.ID, Message: "an ordinary question", Provider: p}, &recorder{})
	if err != nil || res.Text != "fine" || len(fake.Requests()) != 1 {
		t.Errorf("an ordinary question: %+v %v", res, err)
	}
}
