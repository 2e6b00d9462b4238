package prompts

import "testing"

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
