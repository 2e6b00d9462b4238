package chat

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxls/ctxls/chat/openaitest"
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
