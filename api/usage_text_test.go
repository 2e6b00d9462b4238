package api

import (
	"strings"
	"testing"
)

// TestUsageTextUnreported: answers without a token count are not all
// "cancelled or failed": a provider may report none for a tool-call round.
func TestUsageTextUnreported(t *testing.T) {
	text := (&SessionUsageResult{Answers: 1, PromptTokens: 1200, CompletionTokens: 30, Unreported: 2,
		Models: []ModelUsage{{Model: "m", Answers: 1, PromptTokens: 1200, CompletionTokens: 30}}}).Text()
	if !strings.Contains(text, "2 answers have no token count: the provider did not report one (some servers do not for tool-call rounds), or the answer was cancelled or failed first.") {
		t.Errorf("usage text:\n%s", text)
	}
}
