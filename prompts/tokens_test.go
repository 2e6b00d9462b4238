package prompts

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestTokenizerCountsRealTokens(t *testing.T) {
	for _, tc := range []struct {
		model, text string
		want        int
		enc         string
	}{
		// Reference counts from OpenAI's tiktoken.
		{"gpt-4", "hello world", 2, "cl100k_base"},
		{"gpt-4o-mini", "hello world", 2, "o200k_base"},
		{"llama3.1:8b", "", 0, "cl100k_base"},
		{"gpt-4", "tiktoken is great!", 6, "cl100k_base"},
	} {
		tk := TokenizerFor(tc.model)
		if tk.Encoding() != tc.enc {
			t.Errorf("%s: encoding %s, want %s", tc.model, tk.Encoding(), tc.enc)
		}
		if got := tk.Count(tc.text); got != tc.want {
			t.Errorf("%s %q: %d tokens, want %d", tc.model, tc.text, got, tc.want)
		}
	}
	if TokenizerFor("gpt-4") != TokenizerFor("gpt-3.5-turbo") {
		t.Error("models sharing an encoding should share a tokenizer")
	}
}

func TestTokenizerLoadsOnFirstCount(t *testing.T) {
	tk := &Tokenizer{encoding: "cl100k_base"}
	if tk.ranks != nil {
		t.Fatal("ranks loaded before the first count")
	}
	if n := tk.Count("hello world"); n != 2 || tk.ranks == nil {
		t.Fatalf("Count = %d, ranks loaded: %v", n, tk.ranks != nil)
	}
	bad := &Tokenizer{encoding: "p50k_base"}
	if n := bad.Count("hello world"); n != 6 {
		t.Errorf("unknown encoding: Count = %d, want the fallback of one token per two bytes (6)", n)
	}
}

func TestTokenizerConcurrentCounts(t *testing.T) {
	tk := &Tokenizer{encoding: "o200k_base"}
	text := goLikeFile(3)[:20<<10]
	want := TokenizerFor("gpt-4o").Count(text)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if n := tk.Count(text); n != want {
				t.Errorf("concurrent Count = %d, want %d", n, want)
			}
		})
	}
	wg.Wait()
}

// TestCountRemembersLongTexts: a long text's count is remembered and
// given again; texts of the same length have their own; the memory stays
// bounded.
func TestCountRemembersLongTexts(t *testing.T) {
	tk := &Tokenizer{encoding: "cl100k_base"}
	a := strings.Repeat("the handler reads the body once. ", 20)
	b := strings.Repeat("THE HANDLER READS THE BODY ONCE. ", 20)
	na := tk.Count(a)
	if na != tk.count(a) || len(tk.counted) != 1 {
		t.Fatalf("first count %d (direct %d), %d remembered", na, tk.count(a), len(tk.counted))
	}
	if tk.Count(a) != na {
		t.Error("the remembered count differs")
	}
	if nb := tk.Count(b); nb != tk.count(b) || nb == na {
		t.Errorf("a text of the same length counts %d, direct %d (the first %d)", nb, tk.count(b), na)
	}
	if tk.Count("short") != tk.count("short") || len(tk.counted) != 2 {
		t.Errorf("a short text is remembered: %d", len(tk.counted))
	}
	for i := range countMemoMax + 10 {
		tk.Count(fmt.Sprintf("%d %s", i, a))
	}
	if len(tk.counted) > countMemoMax {
		t.Errorf("%d counts remembered, at most %d", len(tk.counted), countMemoMax)
	}
}
