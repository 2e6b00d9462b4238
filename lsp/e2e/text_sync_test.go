package e2e_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/lsp/lsptest"
)

// refDoc is an independent, naive model of an LSP document: the text as
// lines, positions converted by walking runes.
type refDoc struct{ text string }

// position converts a byte offset (on a character boundary) into an LSP
// position.
func (d *refDoc) position(off int, utf8Units bool) (line, char int) {
	lineStart := 0
	for i := 0; i < off; i++ {
		c := d.text[i]
		if c == '\n' || c == '\r' && (i+1 >= len(d.text) || d.text[i+1] != '\n') {
			line++
			lineStart = i + 1
		}
	}
	for _, r := range d.text[lineStart:off] {
		if utf8Units {
			char += utf8.RuneLen(r)
		} else {
			char += len(utf16.Encode([]rune{r}))
		}
	}
	return line, char
}

// boundaries lists the byte offsets where a position may point: character
// starts that are not between \r and \n.
func (d *refDoc) boundaries() []int {
	var out []int
	for i := range d.text {
		if i > 0 && d.text[i] == '\n' && d.text[i-1] == '\r' {
			continue
		}
		out = append(out, i)
	}
	return append(out, len(d.text))
}

var pieces = []string{"a", "xyz", " ", "\t", "\n", "\r\n", "é", "中文", "😀", "👩‍💻", "func main() {", "}", "\r\n\r\n", "ß", "🎉x", ""}

// TestIncrementalEditsOverStdio sends 1,000 random incremental edits, mixing
// emoji, CRLF and multi-byte text, to the built binary over real stdio in
// both encodings, and checks the server's text against the reference after
// every 100 edits and at the end.
func TestIncrementalEditsOverStdio(t *testing.T) {
	parallel(t, waitTests)
	for _, enc := range []string{"utf-16", "utf-8"} {
		t.Run(enc, func(t *testing.T) {
			s := lsptest.Binary(t, nil, "serve", "--data-dir", t.TempDir())
			var offered []string
			if enc == "utf-8" {
				offered = []string{"utf-8", "utf-16"}
			}
			res := s.Initialize(lsptest.InitOptions{PositionEncodings: offered})
			if got := res["capabilities"].(map[string]any)["positionEncoding"]; got != enc {
				t.Fatalf("positionEncoding %v, want %s", got, enc)
			}
			utf8Units := enc == "utf-8"
			uri := "file:///tmp/edits-" + enc + ".txt"
			doc := &refDoc{text: "héllo 😀 wörld\r\nsecond line\r\n\tthird 中文\nlast"}
			s.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
				"uri": uri, "languageId": "plaintext", "version": 1, "text": doc.text}})
			rng := rand.New(rand.NewPCG(42, uint64(len(enc))))
			for i := 1; i <= 1000; i++ {
				bounds := doc.boundaries()
				a, b := bounds[rng.IntN(len(bounds))], bounds[rng.IntN(len(bounds))]
				if a > b {
					a, b = b, a
				}
				if b-a > 40 {
					b = a // mostly small edits, like typing
					for _, x := range bounds {
						if x > a && x-a <= 8 {
							b = x
						}
					}
				}
				text := pieces[rng.IntN(len(pieces))]
				sl, sc := doc.position(a, utf8Units)
				el, ec := doc.position(b, utf8Units)
				s.Notify("textDocument/didChange", map[string]any{
					"textDocument": map[string]any{"uri": uri, "version": i + 1},
					"contentChanges": []any{map[string]any{
						"range": map[string]any{
							"start": map[string]any{"line": sl, "character": sc},
							"end":   map[string]any{"line": el, "character": ec},
						},
						"text": text,
					}},
				})
				doc.text = doc.text[:a] + text + doc.text[b:]
				if i%100 == 0 {
					checkText(t, s, uri, doc.text, fmt.Sprintf("after %d edits", i))
				}
			}
			// A change without a range replaces the whole text.
			s.Notify("textDocument/didChange", map[string]any{
				"textDocument":   map[string]any{"uri": uri, "version": 2000},
				"contentChanges": []any{map[string]any{"text": "whole\r\nnew 😀"}},
			})
			checkText(t, s, uri, "whole\r\nnew 😀", "after a full replacement")
			s.Shutdown()
			if code := s.Exit(); code != 0 {
				t.Errorf("exit code %d", code)
			}
			if errs := s.ProtocolErrors(); len(errs) > 0 {
				t.Errorf("stdout carried non-protocol output: %q", errs)
			}
		})
	}
}

func checkText(t *testing.T, s *lsptest.Server, uri, want, when string) {
	t.Helper()
	var got api.DocumentGetResult
	s.MustCommand(api.DocumentGet, map[string]any{"uri": uri}, &got)
	if got.Text != want {
		t.Fatalf("%s: server text differs from the reference\nserver: %q\nwant:   %q", when, got.Text, want)
	}
}

// TestOpenFileTracking covers candidates: open, dirty, active, closed files
// kept as recently edited with their text dropped.
func TestOpenFileTracking(t *testing.T) {
	parallel(t, waitTests)
	s := startInProcess(t)
	s.Initialize(lsptest.InitOptions{})
	open := func(uri, text string) {
		s.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": text}})
	}
	open("file:///w/a.go", "package a\n")
	open("file:///w/b.go", "package b\n")
	s.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": "file:///w/a.go", "version": 2},
		"contentChanges": []any{map[string]any{"range": map[string]any{"start": map[string]any{"line": 1, "character": 0}, "end": map[string]any{"line": 1, "character": 0}}, "text": "// edited\n"}},
	})
	s.Notify("textDocument/didFocus", map[string]any{"textDocument": map[string]any{"uri": "file:///w/b.go"}})
	var res api.CandidatesResult
	s.MustCommand(api.ContextCandids, map[string]any{}, &res)
	if len(res.Files) != 2 {
		t.Fatalf("candidates = %+v", res.Files)
	}
	byURI := map[string]int{}
	for i, f := range res.Files {
		byURI[f.URI] = i
	}
	a, b := res.Files[byURI["file:///w/a.go"]], res.Files[byURI["file:///w/b.go"]]
	if !a.Open || !a.Dirty || a.Active || a.Path != "/w/a.go" || a.Size != len("package a\n// edited\n") || a.LanguageID != "go" {
		t.Errorf("a.go = %+v", a)
	}
	if !b.Open || b.Dirty || !b.Active {
		t.Errorf("b.go = %+v", b)
	}
	if res.Files[0].URI != "file:///w/b.go" {
		t.Errorf("most recent first: got %s first", res.Files[0].URI)
	}
	s.Notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": "file:///w/a.go"}})
	s.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": "file:///w/a.go"}})
	s.MustCommand(api.ContextCandids, map[string]any{}, &res)
	for _, f := range res.Files {
		if f.URI == "file:///w/a.go" && (f.Open || f.Dirty) {
			t.Errorf("closed a.go = %+v, want a closed, clean candidate", f)
		}
	}
	if len(res.Files) != 2 {
		t.Errorf("a closed file stays a candidate: %+v", res.Files)
	}
	if err := s.Command(api.DocumentGet, map[string]any{"uri": "file:///w/a.go"}, nil); err == nil {
		t.Error("a closed file's text must be dropped")
	}
}
